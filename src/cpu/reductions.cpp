// CPU whole-state reductions as trees: the state is cut into fixed chunks, each
// chunk is summed in double by whichever thread takes it, and the chunk partials
// are combined pairwise. The chunks and the tree depend only on the state size,
// so the result is the same bits for any thread count, and the pairwise tree
// keeps the rounding error growing with log(chunks) rather than with the size.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "backend/cpu.hpp"

namespace qmarg {
namespace cpu {
namespace {

// Amplitudes per chunk: large enough that the partials are a small array
// (2^18 of them for a 30-qubit state), small enough to spread over threads.
constexpr Index kChunk = Index{1} << 12;

// Sums partial[0..m) by adding neighbours at doubling distances: a balanced
// binary tree whose shape depends only on m.
template <class T>
T pairwise_sum(std::vector<T>& partial) {
    const std::size_t m = partial.size();
    for (std::size_t stride = 1; stride < m; stride *= 2) {
        for (std::size_t i = 0; i + stride < m; i += 2 * stride) partial[i] += partial[i + stride];
    }
    return partial.empty() ? T{} : partial[0];
}

// Reduces chunk_sum(begin, end) over the fixed chunks of [0, size).
template <class T, class ChunkSum>
T tree_reduce(Index size, ChunkSum chunk_sum) {
    const auto chunks = static_cast<std::int64_t>((size + kChunk - 1) / kChunk);
    std::vector<T> partial(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static) if (chunks > 1)
    for (std::int64_t c = 0; c < chunks; ++c) {
        const Index begin = static_cast<Index>(c) * kChunk;
        partial[static_cast<std::size_t>(c)] = chunk_sum(begin, std::min(size, begin + kChunk));
    }
    return pairwise_sum(partial);
}

}  // namespace

template <class Real>
double total_probability(const std::complex<Real>* amps, Index size) {
    return tree_reduce<double>(size, [amps](Index begin, Index end) {
        double sum = 0;
        for (Index i = begin; i < end; ++i) {
            const double re = amps[i].real();
            const double im = amps[i].imag();
            sum += re * re + im * im;
        }
        return sum;
    });
}

template <class Real>
std::complex<double> inner_product(const std::complex<Real>* a, const std::complex<Real>* b, Index size) {
    return tree_reduce<std::complex<double>>(size, [a, b](Index begin, Index end) {
        // conj(a) * b written out, so that no complex<Real> product rounds in Real.
        double re = 0, im = 0;
        for (Index i = begin; i < end; ++i) {
            const double ar = a[i].real(), ai = a[i].imag();
            const double br = b[i].real(), bi = b[i].imag();
            re += ar * br + ai * bi;
            im += ar * bi - ai * br;
        }
        return std::complex<double>(re, im);
    });
}

template double total_probability<float>(const std::complex<float>*, Index);
template double total_probability<double>(const std::complex<double>*, Index);
template std::complex<double> inner_product<float>(const std::complex<float>*, const std::complex<float>*, Index);
template std::complex<double> inner_product<double>(const std::complex<double>*, const std::complex<double>*,
                                                    Index);

}  // namespace cpu
}  // namespace qmarg
