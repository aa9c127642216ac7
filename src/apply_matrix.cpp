// apply_matrix: validation, then the CPU or GPU backend.
#include "backend/cpu.hpp"
#include "backend/gpu.hpp"
#include "qmarg/gates.hpp"
#include "validation.hpp"

namespace qmarg {

template <class Real>
void apply_matrix(StateVector<Real>& state, const Qubits& targets, const Matrix& matrix, const Qubits& controls,
                  const std::vector<int>& control_values) {
    validation::check_gate(state.num_qubits(), targets, matrix, controls, control_values);
    if (state.device() == Device::Cpu) {
        cpu::apply_matrix(state.data(), state.num_qubits(), targets, matrix, controls, control_values);
    } else {
        QMARG_GPU_CALL(gpu::apply_matrix(state.data(), state.num_qubits(), targets, matrix, controls, control_values));
    }
}

template void apply_matrix(StateVector<float>&, const Qubits&, const Matrix&, const Qubits&, const std::vector<int>&);
template void apply_matrix(StateVector<double>&, const Qubits&, const Matrix&, const Qubits&,
                           const std::vector<int>&);

}  // namespace qmarg
