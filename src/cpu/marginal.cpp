// CPU marginal probabilities: the reference every GPU strategy is checked against.
//
// Two schemes, chosen by how the bins compare with the state; neither uses atomics:
//  - per-thread bins: each thread walks one contiguous range of amplitudes and
//    adds |a_i|^2 into its own copy of the 2^k bins; the copies are then summed
//    bin by bin in thread order. Used while threads x 2^k is small beside the state.
//  - owner computes: each output bin is summed by one thread over the 2^(n-k)
//    amplitudes that feed it, so memory stays O(2^k). Used when per-thread copies
//    would be about as large as the state (k close to n).
// Every sum runs in an order fixed by (n, qubits, thread count), so a given
// thread count always gives the same bits. |a_i|^2 is formed and summed in
// double, also for single-precision amplitudes.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include <omp.h>

#include "backend/cpu.hpp"
#include "cpu/probability.hpp"
#include "qmarg/bits.hpp"

namespace qmarg {
namespace cpu {
namespace {

template <class Real>
std::vector<double> per_thread_bins(const std::complex<Real>* amps, Index size, const Qubits& qubits, int threads) {
    const int k = static_cast<int>(qubits.size());
    const std::size_t bins = std::size_t{1} << k;
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
        for (Index i = begin; i < end; ++i) mine[gather_bits(i, qubits.data(), k)] += probability(amps[i]);
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
std::vector<double> owner_computes(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits, int threads) {
    const int k = static_cast<int>(qubits.size());
    Qubits sorted = qubits;
    std::sort(sorted.begin(), sorted.end());
    const auto bins = static_cast<std::int64_t>(std::int64_t{1} << k);
    const Index per_bin = Index{1} << (num_qubits - k);
    std::vector<double> out(static_cast<std::size_t>(bins), 0.0);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t b = 0; b < bins; ++b) {
        const Index base = scatter_bits(static_cast<Index>(b), qubits.data(), k);
        double sum = 0;
        for (Index rest = 0; rest < per_bin; ++rest) {
            sum += probability(amps[base | insert_zero_bits(rest, sorted.data(), k)]);
        }
        out[b] = sum;
    }
    return out;
}

}  // namespace

template <class Real>
std::vector<double> marginal_probabilities(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits) {
    const int threads = std::max(1, omp_get_max_threads());
    const Index size = Index{1} << num_qubits;
    const Index bins = Index{1} << qubits.size();
    // Per-thread copies (8 B per bin) are kept below an eighth of the state's
    // bytes (at least 8 B per amplitude); beyond that a bin has few amplitudes
    // and one owner per bin is both cheaper and O(2^k) in memory.
    if (static_cast<Index>(threads) * bins <= size / 8) return per_thread_bins(amps, size, qubits, threads);
    return owner_computes(amps, num_qubits, qubits, threads);
}

template std::vector<double> marginal_probabilities<float>(const std::complex<float>*, int, const Qubits&);
template std::vector<double> marginal_probabilities<double>(const std::complex<double>*, int, const Qubits&);

}  // namespace cpu
}  // namespace qmarg
