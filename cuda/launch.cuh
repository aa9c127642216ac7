// Launch-shape helpers shared by the kernels: a grid-stride grid sized to the
// device (enough blocks to fill every multiprocessor several times over, never
// more blocks than there is work), the device's multiprocessor count and its
// compute capability, and the device side of programmatic dependent launch.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "check.cuh"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

// An attribute of the current device.
inline int device_attribute(cudaDeviceAttr attribute) {
    int device = 0;
    QMARG_CUDA_CHECK(cudaGetDevice(&device));
    int value = 0;
    QMARG_CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
    return value;
}

inline int multiprocessor_count() { return device_attribute(cudaDevAttrMultiProcessorCount); }

// The major compute capability (8 for A100, 9 for H100).
inline int compute_capability_major() { return device_attribute(cudaDevAttrComputeCapabilityMajor); }

// Programmatic dependent launch (sm_90): a kernel launched behind another one
// with cudaLaunchAttributeProgrammaticStreamSerialization may start once
// every block of the one before it has called launch_dependents (or ended),
// and wait_for_previous_kernel waits until that kernel has finished and its
// writes are visible. Both are no-ops in a kernel launched without the
// attribute, and before sm_90.
__device__ inline void launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ inline void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// 64-bit thread indices for grid-stride loops: blockIdx.x * blockDim.x alone
// is a 32-bit product and wraps for states of 2^32 amplitudes.
__device__ __forceinline__ Index global_thread_index() {
    return static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ Index grid_thread_count() { return static_cast<Index>(gridDim.x) * blockDim.x; }

// Blocks for a grid-stride loop over `work` items with `threads` per block.
inline unsigned grid_stride_blocks(Index work, int threads, int blocks_per_sm = 8) {
    const Index needed = (work + threads - 1) / threads;
    const Index cap = static_cast<Index>(multiprocessor_count()) * blocks_per_sm;
    return static_cast<unsigned>(std::max<Index>(1, std::min(needed, cap)));
}

}  // namespace gpu
}  // namespace qmarg
