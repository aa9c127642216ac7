// CPU reference for the marginal queries of qmarg/marginal_queries.hpp.
//
// Written for obvious correctness, as the reference the GPU kernels are tested
// against: many lists are one marginal_probabilities call per list (the CPU
// gains little from sharing one read); a conditional marginal walks only the
// 2^(n-m) amplitudes that satisfy the condition, numbered by a counter with the
// condition bits inserted (insert_zero_bits, the helper the GPU uses too); an
// outcome probability is a fixed-chunk tree sum (cpu/tree_reduce.hpp) over the
// 2^(n-k) amplitudes of that outcome. Every sum runs in an order fixed by the
// inputs and the thread count; |a|^2 is formed and summed in double.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include <omp.h>

#include "backend/cpu.hpp"
#include "cpu/probability.hpp"
#include "cpu/tree_reduce.hpp"
#include "qmarg/bits.hpp"

namespace qmarg {
namespace cpu {
namespace {

// The index bits that the condition fixes to 1.
std::uint64_t condition_bits(const Qubits& condition_qubits, const std::vector<int>& condition_values) {
    std::uint64_t bits = 0;
    for (std::size_t j = 0; j < condition_qubits.size(); ++j) {
        if (condition_values[j]) bits |= std::uint64_t{1} << condition_qubits[j];
    }
    return bits;
}

Qubits sorted(Qubits qubits) {
    std::sort(qubits.begin(), qubits.end());
    return qubits;
}

}  // namespace

template <class Real>
std::vector<std::vector<double>> marginal_probabilities_of_lists(const std::complex<Real>* amps, int num_qubits,
                                                                 const std::vector<Qubits>& lists) {
    std::vector<std::vector<double>> out;
    out.reserve(lists.size());
    for (const Qubits& list : lists) out.push_back(marginal_probabilities(amps, num_qubits, list));
    return out;
}

template <class Real>
std::vector<double> conditional_marginal_probabilities(const std::complex<Real>* amps, int num_qubits,
                                                       const Qubits& qubits, const Qubits& condition_qubits,
                                                       const std::vector<int>& condition_values) {
    const int k = static_cast<int>(qubits.size());
    const int m = static_cast<int>(condition_qubits.size());
    const std::uint64_t fixed = condition_bits(condition_qubits, condition_values);
    const Qubits sorted_condition = sorted(condition_qubits);
    const Index matching = Index{1} << (num_qubits - m);
    const std::size_t bins = std::size_t{1} << k;
    const int threads = std::max(1, omp_get_max_threads());

    // Per-thread bins while their copies are small beside what is read (the
    // rule of cpu::marginal_probabilities), one owner per bin beyond.
    if (static_cast<Index>(threads) * bins <= matching / 8) {
        std::vector<double> partial(static_cast<std::size_t>(threads) * bins, 0.0);
#pragma omp parallel num_threads(threads)
        {
            const auto team = static_cast<Index>(omp_get_num_threads());
            const auto t = static_cast<Index>(omp_get_thread_num());
            const Index begin = matching / team * t + std::min(t, matching % team);
            const Index end = begin + matching / team + (t < matching % team ? 1 : 0);
            double* mine = partial.data() + t * bins;
            for (Index j = begin; j < end; ++j) {
                const Index i = insert_zero_bits(j, sorted_condition.data(), m) | fixed;
                mine[gather_bits(i, qubits.data(), k)] += probability(amps[i]);
            }
        }
        std::vector<double> out(bins, 0.0);
        for (std::size_t b = 0; b < bins; ++b) {
            for (int t = 0; t < threads; ++t) out[b] += partial[static_cast<std::size_t>(t) * bins + b];
        }
        return out;
    }
    Qubits all = qubits;
    all.insert(all.end(), condition_qubits.begin(), condition_qubits.end());
    const Qubits sorted_all = sorted(all);
    const Index per_bin = Index{1} << (num_qubits - k - m);
    std::vector<double> out(bins, 0.0);
    const auto bin_count = static_cast<std::int64_t>(bins);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t b = 0; b < bin_count; ++b) {
        const Index base = scatter_bits(static_cast<Index>(b), qubits.data(), k) | fixed;
        double sum = 0;
        for (Index rest = 0; rest < per_bin; ++rest) {
            sum += probability(amps[base | insert_zero_bits(rest, sorted_all.data(), k + m)]);
        }
        out[static_cast<std::size_t>(b)] = sum;
    }
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
    template std::vector<double> conditional_marginal_probabilities(const std::complex<Real>*, int, const Qubits&, \
                                                                    const Qubits&, const std::vector<int>&);       \
    template double outcome_probability(const std::complex<Real>*, int, const Qubits&, std::uint64_t);
QMARG_INSTANTIATE(float)
QMARG_INSTANTIATE(double)
#undef QMARG_INSTANTIATE

}  // namespace cpu
}  // namespace qmarg
