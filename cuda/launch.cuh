// Launch-shape helpers shared by the kernels: a grid-stride grid sized to the
// device (enough blocks to fill every multiprocessor several times over, never
// more blocks than there is work) and the device's multiprocessor count.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "check.cuh"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

inline int multiprocessor_count() {
    int device = 0;
    QMARG_CUDA_CHECK(cudaGetDevice(&device));
    int count = 0;
    QMARG_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
}

// Blocks for a grid-stride loop over `work` items with `threads` per block.
inline unsigned grid_stride_blocks(Index work, int threads, int blocks_per_sm = 8) {
    const Index needed = (work + threads - 1) / threads;
    const Index cap = static_cast<Index>(multiprocessor_count()) * blocks_per_sm;
    return static_cast<unsigned>(std::max<Index>(1, std::min(needed, cap)));
}

}  // namespace gpu
}  // namespace qmarg
