// marginal_probabilities: validation, then the CPU or GPU backend.
#include "qmarg/marginal.hpp"

#include <string>

#include "backend/cpu.hpp"
#include "backend/gpu.hpp"
#include "qmarg/error.hpp"
#include "validation.hpp"

namespace qmarg {

const char* to_string(MarginalStrategy strategy) {
    switch (strategy) {
        case MarginalStrategy::Auto: return "Auto";
        case MarginalStrategy::GlobalAtomic: return "GlobalAtomic";
        case MarginalStrategy::SharedPrivatized: return "SharedPrivatized";
        case MarginalStrategy::Partitioned: return "Partitioned";
        case MarginalStrategy::BinStationary: return "BinStationary";
        case MarginalStrategy::BinStationaryAtomic: return "BinStationaryAtomic";
    }
    return "unknown";
}

namespace {

// The GPU strategy to run: Auto stays Auto unless determinism is asked for,
// which the seed strategies and BinStationaryAtomic cannot give
// (MarginalOptions::deterministic).
MarginalStrategy gpu_strategy(const MarginalOptions& options) {
    if (!options.deterministic) return options.strategy;
    switch (options.strategy) {
        case MarginalStrategy::Auto:
        case MarginalStrategy::BinStationary: return MarginalStrategy::BinStationary;
        case MarginalStrategy::GlobalAtomic:
        case MarginalStrategy::SharedPrivatized:
        case MarginalStrategy::Partitioned:
        case MarginalStrategy::BinStationaryAtomic: break;
    }
    throw Error(std::string("marginal strategy ") + to_string(options.strategy) +
                " is not deterministic (its floating-point atomic additions run in a different order on every "
                "call); with MarginalOptions::deterministic = true use BinStationary or Auto");
}

}  // namespace

template <class Real>
std::vector<double> marginal_probabilities(const StateVector<Real>& state, const Qubits& qubits,
                                           const MarginalOptions& options) {
    validation::check_qubit_list(qubits, state.num_qubits(), "marginal qubit list");
    if (state.device() == Device::Cpu) {
        if (options.strategy != MarginalStrategy::Auto) {
            throw Error(std::string("marginal strategy ") + to_string(options.strategy) +
                        " is a GPU strategy; a CPU state takes MarginalStrategy::Auto");
        }
        return cpu::marginal_probabilities(state.data(), state.num_qubits(), qubits);
    }
    DeviceBuffer<double> out;
    marginal_probabilities(state, qubits, out, options);
    return out.to_host();
}

template <class Real>
void marginal_probabilities(const StateVector<Real>& state, const Qubits& qubits, DeviceBuffer<double>& out,
                            const MarginalOptions& options) {
    validation::check_on_gpu(state.device(), "marginal_probabilities into a DeviceBuffer");
    validation::check_qubit_list(qubits, state.num_qubits(), "marginal qubit list");
    const MarginalStrategy strategy = gpu_strategy(options);
    out.resize(std::size_t{1} << qubits.size());
    QMARG_GPU_CALL(gpu::marginal_probabilities(state.data(), state.num_qubits(), qubits, out.data(), strategy));
}

template std::vector<double> marginal_probabilities(const StateVector<float>&, const Qubits&, const MarginalOptions&);
template std::vector<double> marginal_probabilities(const StateVector<double>&, const Qubits&, const MarginalOptions&);
template void marginal_probabilities(const StateVector<float>&, const Qubits&, DeviceBuffer<double>&,
                                     const MarginalOptions&);
template void marginal_probabilities(const StateVector<double>&, const Qubits&, DeviceBuffer<double>&,
                                     const MarginalOptions&);

}  // namespace qmarg
