// total_probability, inner_product and expectation_z: validation, then the CPU
// or GPU backend.
#include "qmarg/reductions.hpp"

#include "backend/cpu.hpp"
#include "backend/gpu.hpp"
#include "validation.hpp"

namespace qmarg {

template <class Real>
double total_probability(const StateVector<Real>& state) {
    if (state.device() == Device::Cpu) return cpu::total_probability(state.data(), state.size());
    QMARG_GPU_CALL(return gpu::total_probability(state.data(), state.size()));
}

template <class Real>
std::complex<double> inner_product(const StateVector<Real>& a, const StateVector<Real>& b) {
    validation::check_same_shape(a.num_qubits(), a.device(), b.num_qubits(), b.device(), "inner_product");
    if (a.device() == Device::Cpu) return cpu::inner_product(a.data(), b.data(), a.size());
    QMARG_GPU_CALL(return gpu::inner_product(a.data(), b.data(), a.size()));
}

template <class Real>
double expectation_z(const StateVector<Real>& state, const Qubits& qubits) {
    validation::check_qubit_list(qubits, state.num_qubits(), "expectation_z qubit list");
    if (state.device() == Device::Cpu) return cpu::expectation_z(state.data(), state.num_qubits(), qubits);
    QMARG_GPU_CALL(return gpu::expectation_z(state.data(), state.num_qubits(), qubits));
}

template double total_probability(const StateVector<float>&);
template double total_probability(const StateVector<double>&);
template std::complex<double> inner_product(const StateVector<float>&, const StateVector<float>&);
template std::complex<double> inner_product(const StateVector<double>&, const StateVector<double>&);
template double expectation_z(const StateVector<float>&, const Qubits&);
template double expectation_z(const StateVector<double>&, const Qubits&);

}  // namespace qmarg
