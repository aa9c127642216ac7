// CPU reference for the marginal queries of qmarg/marginal_queries.hpp.
//
// Written for obvious correctness, as the reference the GPU kernels are tested
// against: many lists are one marginal_probabilities call per list (the CPU
// gains little from sharing one read); an outcome probability is a fixed-chunk
// tree sum (cpu/tree_reduce.hpp) over the 2^(n-k) amplitudes of that outcome.
// Conditional marginals share the plain marginal's code (cpu/marginal.cpp).
// Every sum runs in an order fixed by the inputs and the thread count; |a|^2
// is formed and summed in double.
#include <complex>
#include <cstdint>
#include <vector>

#include "backend/cpu.hpp"
#include "cpu/marginal_common.hpp"
#include "cpu/tree_reduce.hpp"
#include "qmarg/bits.hpp"

namespace qmarg {
namespace cpu {

template <class Real>
std::vector<std::vector<double>> marginal_probabilities_of_lists(const std::complex<Real>* amps, int num_qubits,
                                                                 const std::vector<Qubits>& lists) {
    std::vector<std::vector<double>> out;
    out.reserve(lists.size());
    for (const Qubits& list : lists) out.push_back(marginal_probabilities(amps, num_qubits, list));
    return out;
}

template <class Real>
double outcome_probability(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                           std::uint64_t outcome) {
    const int k = static_cast<int>(qubits.size());
    const Qubits sorted_qubits = sorted(qubits);
    const Index base = scatter_bits(outcome, qubits.data(), k);
    return tree_reduce<double>(Index{1} << (num_qubits - k), [&](Index begin, Index end) {
        double sum = 0;
        for (Index j = begin; j < end; ++j) sum += probability(amps[base | insert_zero_bits(j, sorted_qubits.data(), k)]);
        return sum;
    });
}

#define QMARG_INSTANTIATE(Real)                                                                                    \
    template std::vector<std::vector<double>> marginal_probabilities_of_lists(const std::complex<Real>*, int,     \
                                                                              const std::vector<Qubits>&);         \
    template double outcome_probability(const std::complex<Real>*, int, const Qubits&, std::uint64_t);
QMARG_INSTANTIATE(float)
QMARG_INSTANTIATE(double)
#undef QMARG_INSTANTIATE

}  // namespace cpu
}  // namespace qmarg
