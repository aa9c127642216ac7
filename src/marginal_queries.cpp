// marginal_probabilities_of_lists, conditional_marginal_probabilities,
// outcome_probability and sample_marginal: validation, then the CPU or GPU
// backend (conventions in qmarg/marginal_queries.hpp).
#include "qmarg/marginal_queries.hpp"

#include <string>

#include "backend/cpu.hpp"
#include "backend/gpu.hpp"
#include "qmarg/device_buffer.hpp"
#include "qmarg/error.hpp"
#include "qmarg/marginal.hpp"
#include "qmarg/sampling.hpp"
#include "validation.hpp"

namespace qmarg {

template <class Real>
std::vector<std::vector<double>> marginal_probabilities_of_lists(const StateVector<Real>& state,
                                                                 const std::vector<Qubits>& lists) {
    for (std::size_t j = 0; j < lists.size(); ++j) {
        const std::string what = "marginal qubit list " + std::to_string(j);
        validation::check_qubit_list(lists[j], state.num_qubits(), what.c_str());
    }
    if (lists.empty()) return {};
    if (state.device() == Device::Cpu) {
        return cpu::marginal_probabilities_of_lists(state.data(), state.num_qubits(), lists);
    }
    std::size_t total = 0;
    for (const Qubits& list : lists) total += std::size_t{1} << list.size();
    DeviceBuffer<double> out(total);
    QMARG_GPU_CALL(gpu::marginal_probabilities_of_lists(state.data(), state.num_qubits(), lists, out.data()));
    const std::vector<double> all = out.to_host();
    std::vector<std::vector<double>> result;
    result.reserve(lists.size());
    std::size_t offset = 0;
    for (const Qubits& list : lists) {
        const std::size_t bins = std::size_t{1} << list.size();
        result.emplace_back(all.begin() + offset, all.begin() + offset + bins);
        offset += bins;
    }
    return result;
}

template <class Real>
std::vector<double> conditional_marginal_probabilities(const StateVector<Real>& state, const Qubits& qubits,
                                                       const Condition& condition) {
    validation::check_qubit_list(qubits, state.num_qubits(), "marginal qubit list");
    validation::check_condition(qubits, condition.qubits, condition.values, state.num_qubits());
    if (state.device() == Device::Cpu) {
        return cpu::conditional_marginal_probabilities(state.data(), state.num_qubits(), qubits, condition.qubits,
                                                       condition.values);
    }
    DeviceBuffer<double> out(std::size_t{1} << qubits.size());
    QMARG_GPU_CALL(gpu::conditional_marginal_probabilities(state.data(), state.num_qubits(), qubits, condition.qubits,
                                                           condition.values, out.data()));
    return out.to_host();
}

template <class Real>
double outcome_probability(const StateVector<Real>& state, const Qubits& qubits, std::uint64_t outcome) {
    validation::check_qubit_list(qubits, state.num_qubits(), "outcome qubit list");
    const int k = static_cast<int>(qubits.size());
    if (k < 64 && (outcome >> k) != 0) {
        throw Error("outcome " + std::to_string(outcome) + " does not fit in " + std::to_string(k) +
                    (k == 1 ? " qubit" : " qubits") + ": it must be below 2^" + std::to_string(k) + " = " +
                    std::to_string(std::uint64_t{1} << k));
    }
    if (state.device() == Device::Cpu) return cpu::outcome_probability(state.data(), state.num_qubits(), qubits, outcome);
    double result = 0;
    QMARG_GPU_CALL(result = gpu::outcome_probability(state.data(), state.num_qubits(), qubits, outcome));
    return result;
}

template <class Real>
std::vector<std::uint64_t> sample_marginal(const StateVector<Real>& state, const Qubits& qubits, std::size_t shots,
                                           std::uint64_t seed) {
    // The same outcomes for a seed need the same bits of the distribution on
    // every run: the default Auto may merge bins with atomics.
    MarginalOptions deterministic;
    deterministic.deterministic = true;
    return sample_outcomes(marginal_probabilities(state, qubits, deterministic), shots, seed);
}

#define QMARG_INSTANTIATE(Real)                                                                                   \
    template std::vector<std::vector<double>> marginal_probabilities_of_lists(const StateVector<Real>&,          \
                                                                              const std::vector<Qubits>&);        \
    template std::vector<double> conditional_marginal_probabilities(const StateVector<Real>&, const Qubits&,      \
                                                                    const Condition&);                            \
    template double outcome_probability(const StateVector<Real>&, const Qubits&, std::uint64_t);                  \
    template std::vector<std::uint64_t> sample_marginal(const StateVector<Real>&, const Qubits&, std::size_t,     \
                                                        std::uint64_t);
QMARG_INSTANTIATE(float)
QMARG_INSTANTIATE(double)
#undef QMARG_INSTANTIATE

}  // namespace qmarg
