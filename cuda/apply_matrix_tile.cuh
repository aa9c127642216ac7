// Device-side helpers for the gate kernels that stage tiles of amplitudes in
// shared memory (TileLayout, cuda/apply_matrix.cuh): where a tile starts, where
// each of its amplitudes lives, the shared-memory swizzle, and launch sizing.
#pragma once

#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "apply_matrix.cuh"
#include "check.cuh"
#include "launch.cuh"
#include "qmarg/bits.hpp"
#include "qmarg/error.hpp"

namespace qmarg {
namespace gpu {

// Global index of local index 0 of tile `tile`: the tile number spread over
// the bits that are neither local nor control, the controls at their values.
__device__ __forceinline__ Index tile_base(const TileLayout& layout, Index tile) {
    return insert_zero_bits(tile, layout.outer_fixed, layout.num_outer_fixed) | layout.control_mask;
}

// Global offset (from tile_base) of local index l.
__device__ __forceinline__ Index local_offset(const TileLayout& layout, unsigned l) {
    return scatter_bits(l, layout.local_bits, layout.tile_bits);
}

// Shared-memory position of local index l. Rows of 128 bytes (8 double2 or 16
// float2) are permuted by an XOR of all higher row bits folded together, so
// that (a) a warp walking l in order touches each row once, in any order, and
// (b) a warp whose threads step through l with any power-of-two stride (a
// thread per group, targets on the low bits) spreads over the banks instead of
// hitting one. Only bits below the row width change, so it is a bijection on
// every aligned block of rows, and tiles up to 2^12 elements are covered.
template <class C>
__device__ __forceinline__ unsigned swizzle(unsigned l) {
    constexpr int kRowBits = sizeof(C) == 16 ? 3 : 4;
    constexpr unsigned kRowMask = (1u << kRowBits) - 1;
    const unsigned row = l >> kRowBits;
    return l ^ ((row ^ (row >> kRowBits) ^ (row >> (2 * kRowBits))) & kRowMask);
}

// Element j of this thread in every tile is local index j * blockDim.x +
// threadIdx.x (blockDim.x a power of two), so a warp walks the tile in local
// order. Its offset splits into a part fixed by the thread and a part fixed by
// j; the latter is shared by all threads and tabulated once per block in
// `outer_offsets` (shared memory, `elements_per_thread` entries).
// Needs a __syncthreads() before outer_offsets is read.
__device__ inline Index thread_tile_offsets(const TileLayout& layout, int thread_bits, int elements_per_thread,
                                            Index* outer_offsets) {
    // Small states can give a block fewer threads than table entries.
    for (int j = threadIdx.x; j < elements_per_thread; j += blockDim.x) {
        outer_offsets[j] = scatter_bits(static_cast<Index>(j) << thread_bits, layout.local_bits, layout.tile_bits);
    }
    return scatter_bits(threadIdx.x, layout.local_bits, thread_bits);
}

// Copies this thread's elements of a tile (local indices j * blockDim.x +
// threadIdx.x, j < per_thread, at global offsets `from` + outer_offsets[j],
// from thread_tile_offsets) to their swizzled places in `tile` by cp.async,
// all in flight at once, and waits for them. A warp covers whole lines.
// Loaded through registers four at a time, too few bytes were in flight
// while the other blocks of a multiprocessor computed (the kernels that call
// it have the measurements). A tile before it in `tile` must have been
// stored from these same positions by this thread, each store issued after
// its shared-memory read returned, so the copies cannot overtake them; other
// threads read the elements only after a barrier.
template <class C>
__device__ __forceinline__ void load_tile_async(C* tile, const C* from, const Index* outer_offsets, int per_thread) {
    for (int j = 0; j < per_thread; ++j) {
        __pipeline_memcpy_async(tile + swizzle<C>(j * blockDim.x + threadIdx.x), from + outer_offsets[j], sizeof(C));
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
}

// Row (bits 0..15: the matrix index, bit j from targets[j]) and column (bits
// 16..: the group, bit i from free bit i) of the amplitude that local index l
// holds, from l's bits below `bits`. Kernels that file a tile as a matrix
// (row x group) use it.
__device__ inline unsigned tile_cell(const TileLayout& layout, unsigned l, int bits) {
    unsigned cell = 0;
    for (int p = 0; p < bits; ++p) {
        if ((l >> p) & 1u) {
            const int role = layout.local_role[p];
            cell |= role >= 0 ? 1u << role : 1u << (16 - 1 - role);
        }
    }
    return cell;
}

// Blocks for a grid-stride loop over `work` items: as many as can be resident
// at once (so that a block's setup is paid once per multiprocessor slot), never
// more than there is work.
template <class Kernel>
unsigned resident_grid(Kernel kernel, int threads, std::size_t shared_bytes, Index work) {
    int per_sm = 0;
    QMARG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes));
    if (per_sm < 1) {
        throw Error("apply_matrix: a kernel with " + std::to_string(threads) + " threads and " +
                    std::to_string(shared_bytes) + " bytes of shared memory per block cannot run on this GPU");
    }
    const Index cap = static_cast<Index>(per_sm) * multiprocessor_count();
    return static_cast<unsigned>(std::max<Index>(1, std::min(work, cap)));
}

// Allows `kernel` `shared_bytes` of dynamic shared memory, or throws Error
// naming what it needs and what this GPU offers.
template <class Kernel>
void allow_shared_memory(Kernel kernel, std::size_t shared_bytes, const char* what) {
    const int optin = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    if (shared_bytes > static_cast<std::size_t>(optin)) {
        throw Error(std::string("apply_matrix: ") + what + " needs " + std::to_string(shared_bytes) +
                    " bytes of shared memory per block, but this GPU allows at most " + std::to_string(optin));
    }
    QMARG_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
}

}  // namespace gpu
}  // namespace qmarg
