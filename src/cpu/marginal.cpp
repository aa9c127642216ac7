// CPU marginal probabilities, plain and conditional: the reference every GPU
// strategy is checked against.
//
// A marginal adds |a_i|^2 over a selection of amplitudes: all of them, or (a
// conditional marginal) the 2^(n-m) whose m condition qubits hold given
// values, numbered by a counter j with the condition bits inserted
// (insert_zero_bits, the helper the GPU uses too). A plain marginal is the
// selection with no condition. Two schemes, chosen by how the bins compare
// with the selection; neither uses atomics:
//  - per-thread bins: each thread walks one contiguous range of the selection
//    and adds into its own copy of the 2^k bins; the copies are then summed
//    bin by bin in thread order. Used while threads x 2^k is small beside the
//    selection.
//  - owner computes: each output bin is summed by one thread over the
//    amplitudes that feed it, so memory stays O(2^k). Used when per-thread
//    copies would be about as large as the selection (k close to n - m).
// Every sum runs in an order fixed by (n, qubits, condition, thread count), so
// a given thread count always gives the same bits. |a_i|^2 is formed and
// summed in double, also for single-precision amplitudes.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include <omp.h>

#include "backend/cpu.hpp"
#include "cpu/marginal_common.hpp"
#include "qmarg/bits.hpp"

namespace qmarg {
namespace cpu {
namespace {

// The amplitudes a marginal adds up: index_of(j) for j < count.
struct Selection {
    Qubits sorted_condition;  // condition qubits, ascending (none for a plain marginal)
    std::uint64_t fixed = 0;  // the index bits the condition sets to 1
    Index count = 0;          // 2^(n - m)

    Index index_of(Index j) const {
        return insert_zero_bits(j, sorted_condition.data(), static_cast<int>(sorted_condition.size())) | fixed;
    }
};

template <class Real>
std::vector<double> per_thread_bins(const std::complex<Real>* amps, const Qubits& qubits, const Selection& selection,
                                    int threads) {
    const int k = static_cast<int>(qubits.size());
    const std::size_t bins = std::size_t{1} << k;
    const Index size = selection.count;
    std::vector<double> partial(static_cast<std::size_t>(threads) * bins, 0.0);
#pragma omp parallel num_threads(threads)
    {
        // Ranges follow the team actually formed, which may be smaller than
        // asked for; unused copies stay zero and add nothing.
        const auto team = static_cast<Index>(omp_get_num_threads());
        const auto t = static_cast<Index>(omp_get_thread_num());
        const Index begin = size / team * t + std::min(t, size % team);
        const Index end = begin + size / team + (t < size % team ? 1 : 0);
        double* mine = partial.data() + t * bins;
        for (Index j = begin; j < end; ++j) {
            const Index i = selection.index_of(j);
            mine[gather_bits(i, qubits.data(), k)] += probability(amps[i]);
        }
    }
    std::vector<double> out(bins, 0.0);
    const auto bin_count = static_cast<std::int64_t>(bins);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t b = 0; b < bin_count; ++b) {
        double sum = 0;
        for (int t = 0; t < threads; ++t) sum += partial[static_cast<std::size_t>(t) * bins + b];
        out[b] = sum;
    }
    return out;
}

template <class Real>
std::vector<double> owner_computes(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                   const Selection& selection, int threads) {
    const int k = static_cast<int>(qubits.size());
    const int m = static_cast<int>(selection.sorted_condition.size());
    Qubits all = qubits;
    all.insert(all.end(), selection.sorted_condition.begin(), selection.sorted_condition.end());
    const Qubits sorted_all = sorted(all);
    const auto bins = static_cast<std::int64_t>(std::int64_t{1} << k);
    const Index per_bin = Index{1} << (num_qubits - k - m);
    std::vector<double> out(static_cast<std::size_t>(bins), 0.0);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t b = 0; b < bins; ++b) {
        const Index base = scatter_bits(static_cast<Index>(b), qubits.data(), k) | selection.fixed;
        double sum = 0;
        for (Index rest = 0; rest < per_bin; ++rest) {
            sum += probability(amps[base | insert_zero_bits(rest, sorted_all.data(), k + m)]);
        }
        out[b] = sum;
    }
    return out;
}

template <class Real>
std::vector<double> marginal_of(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                const Selection& selection) {
    const int threads = std::max(1, omp_get_max_threads());
    const Index bins = Index{1} << qubits.size();
    // Per-thread copies (8 B per bin) are kept below an eighth of the selected
    // amplitudes' bytes (at least 8 B per amplitude); beyond that a bin has few
    // amplitudes and one owner per bin is both cheaper and O(2^k) in memory.
    if (static_cast<Index>(threads) * bins <= selection.count / 8) {
        return per_thread_bins(amps, qubits, selection, threads);
    }
    return owner_computes(amps, num_qubits, qubits, selection, threads);
}

}  // namespace

template <class Real>
std::vector<double> marginal_probabilities(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits) {
    Selection all;
    all.count = Index{1} << num_qubits;
    return marginal_of(amps, num_qubits, qubits, all);
}

template <class Real>
std::vector<double> conditional_marginal_probabilities(const std::complex<Real>* amps, int num_qubits,
                                                       const Qubits& qubits, const Qubits& condition_qubits,
                                                       const std::vector<int>& condition_values) {
    Selection matching;
    matching.sorted_condition = sorted(condition_qubits);
    for (std::size_t j = 0; j < condition_qubits.size(); ++j) {
        if (condition_values[j]) matching.fixed |= std::uint64_t{1} << condition_qubits[j];
    }
    matching.count = Index{1} << (num_qubits - static_cast<int>(condition_qubits.size()));
    return marginal_of(amps, num_qubits, qubits, matching);
}

#define QMARG_INSTANTIATE(Real)                                                                                    \
    template std::vector<double> marginal_probabilities<Real>(const std::complex<Real>*, int, const Qubits&);      \
    template std::vector<double> conditional_marginal_probabilities(const std::complex<Real>*, int, const Qubits&, \
                                                                    const Qubits&, const std::vector<int>&);
QMARG_INSTANTIATE(float)
QMARG_INSTANTIATE(double)
#undef QMARG_INSTANTIATE

}  // namespace cpu
}  // namespace qmarg
