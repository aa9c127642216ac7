// The CPU backend's one reduction mechanism: the index range is cut into fixed
// chunks, each chunk is summed in double by whichever thread takes it, and the
// chunk partials are combined pairwise. Chunks and tree depend only on the
// size, so a sum is the same bits for any thread count, and the pairwise tree
// keeps the rounding error growing with log(chunks) rather than with the size.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "qmarg/types.hpp"

namespace qmarg {
namespace cpu {

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


}  // namespace cpu
}  // namespace qmarg
