// The classic ladder of sum reductions (NVIDIA's "Optimizing Parallel
// Reduction in CUDA", steps 1 to 7, as the seeds 004 and 001 reproduce them),
// rebuilt on our input so that the benchmark shows what each step buys on
// today's GPU: the double-complex amplitudes of a state, summing |a|^2 in
// double. Benchmark variants only; the library's reduction is cuda/reduce.cuh.
//
// Kept from the seed: 128 threads per block, a shared-memory tree per block,
// one partial per block, and the same kernel applied to the partials again
// until one value is left. Changed, because our input or today's GPUs need it:
//   - values are double (the seed sums ints) and the first level reads
//     double2 amplitudes and squares them;
//   - every load is bounds-checked (partial counts are not multiples of a block);
//   - the warp-synchronous steps (v5 to v7) separate the reads and the writes of
//     each step with __syncwarp(): since Volta the lanes of a warp are not
//     guaranteed to run in lockstep, and the seed's volatile-only version is a race.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "check.cuh"
#include "launch.cuh"
#include "qmarg/error.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace bench {
namespace ladder {

constexpr unsigned kBlock = 128;  // the seed's block size

// The first level reads amplitudes; later levels read the partials.
struct AbsSquare {
    const double2* in;
    __device__ double operator()(Index i) const {
        const double2 a = in[i];
        return a.x * a.x + a.y * a.y;
    }
};
struct Plain {
    const double* in;
    __device__ double operator()(Index i) const { return in[i]; }
};

// v1: interleaved addressing; `tid % (2s)` leaves most lanes of every warp idle
// (divergent branches) and the modulo is slow.
template <class Load>
__global__ void reduce_v1(Load load, Index n, double* out) {
    __shared__ double sdata[kBlock];
    const unsigned tid = threadIdx.x;
    const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + tid;
    sdata[tid] = i < n ? load(i) : 0.0;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// v2: interleaved addressing with a strided index: active lanes are contiguous
// (no divergence) but hit the same shared-memory banks.
template <class Load>
__global__ void reduce_v2(Load load, Index n, double* out) {
    __shared__ double sdata[kBlock];
    const unsigned tid = threadIdx.x;
    const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + tid;
    sdata[tid] = i < n ? load(i) : 0.0;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        const unsigned index = 2 * s * tid;
        if (index < blockDim.x) sdata[index] += sdata[index + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// v3: sequential addressing: conflict-free, but half the threads idle from the
// first step on.
template <class Load>
__global__ void reduce_v3(Load load, Index n, double* out) {
    __shared__ double sdata[kBlock];
    const unsigned tid = threadIdx.x;
    const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + tid;
    sdata[tid] = i < n ? load(i) : 0.0;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Loads the pair (i, i + block) of the "first add during load" steps.
template <class Load>
__device__ double load_pair(const Load& load, Index i, unsigned block, Index n) {
    double v = i < n ? load(i) : 0.0;
    if (i + block < n) v += load(i + block);
    return v;
}

// v4: first add during load: each block covers 2 x 128 items.
template <class Load>
__global__ void reduce_v4(Load load, Index n, double* out) {
    __shared__ double sdata[kBlock];
    const unsigned tid = threadIdx.x;
    const Index i = static_cast<Index>(blockIdx.x) * (blockDim.x * 2) + tid;
    sdata[tid] = load_pair(load, i, blockDim.x, n);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// One warp-synchronous step: all 32 lanes read, then all write.
__device__ inline void warp_step(volatile double* sdata, unsigned tid, unsigned offset) {
    const double v = sdata[tid] + sdata[tid + offset];
    __syncwarp();
    sdata[tid] = v;
    __syncwarp();
}

// The last warp without __syncthreads (called by lanes 0..31 of warp 0).
__device__ inline void warp_reduce(volatile double* sdata, unsigned tid) {
    for (unsigned offset = 32; offset > 0; offset >>= 1) warp_step(sdata, tid, offset);
}

// v5: v4 with the last warp unrolled.
template <class Load>
__global__ void reduce_v5(Load load, Index n, double* out) {
    __shared__ double sdata[kBlock];
    const unsigned tid = threadIdx.x;
    const Index i = static_cast<Index>(blockIdx.x) * (blockDim.x * 2) + tid;
    sdata[tid] = load_pair(load, i, blockDim.x, n);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid < 32) warp_reduce(sdata, tid);
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <unsigned Block>
__device__ void warp_reduce_t(volatile double* sdata, unsigned tid) {
    if (Block >= 64) warp_step(sdata, tid, 32);
    if (Block >= 32) warp_step(sdata, tid, 16);
    if (Block >= 16) warp_step(sdata, tid, 8);
    if (Block >= 8) warp_step(sdata, tid, 4);
    if (Block >= 4) warp_step(sdata, tid, 2);
    if (Block >= 2) warp_step(sdata, tid, 1);
}

// The block tree of v6 and v7, unrolled at compile time for the block size.
template <unsigned Block>
__device__ void block_tree_t(double* sdata, unsigned tid) {
    if (Block >= 1024) { if (tid < 512) sdata[tid] += sdata[tid + 512]; __syncthreads(); }
    if (Block >= 512) { if (tid < 256) sdata[tid] += sdata[tid + 256]; __syncthreads(); }
    if (Block >= 256) { if (tid < 128) sdata[tid] += sdata[tid + 128]; __syncthreads(); }
    if (Block >= 128) { if (tid < 64) sdata[tid] += sdata[tid + 64]; __syncthreads(); }
    if (tid < 32) warp_reduce_t<Block>(sdata, tid);
}

// v6: completely unrolled (the block size a template parameter).
template <unsigned Block, class Load>
__global__ void reduce_v6(Load load, Index n, double* out) {
    __shared__ double sdata[Block];
    const unsigned tid = threadIdx.x;
    const Index i = static_cast<Index>(blockIdx.x) * (Block * 2) + tid;
    sdata[tid] = load_pair(load, i, Block, n);
    __syncthreads();
    block_tree_t<Block>(sdata, tid);
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// v7: multiple elements per thread: a fixed grid walks the input with a
// grid-stride loop before the unrolled tree.
template <unsigned Block, class Load>
__global__ void reduce_v7(Load load, Index n, double* out) {
    __shared__ double sdata[Block];
    const unsigned tid = threadIdx.x;
    Index i = static_cast<Index>(blockIdx.x) * (Block * 2) + tid;
    const Index grid_size = static_cast<Index>(Block) * 2 * gridDim.x;
    sdata[tid] = 0;
    while (i < n) {
        sdata[tid] += load_pair(load, i, Block, n);
        i += grid_size;
    }
    __syncthreads();
    block_tree_t<Block>(sdata, tid);
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

// Items one block covers at step `step` (v7: per grid-stride pass).
inline Index items_per_block(int step) { return step <= 3 ? kBlock : 2 * kBlock; }

// Blocks of one level over `count` items. v7 caps its grid at the blocks the
// device holds at once (`v7_resident`).
inline unsigned level_blocks(int step, Index count, unsigned v7_resident) {
    const Index per_block = items_per_block(step);
    Index blocks = (count + per_block - 1) / per_block;
    if (step == 7 && blocks > v7_resident) blocks = v7_resident;
    return static_cast<unsigned>(blocks);
}

template <class Load>
void launch_level(int step, Load load, Index count, double* out, unsigned blocks) {
    switch (step) {
        case 1: reduce_v1<<<blocks, kBlock>>>(load, count, out); break;
        case 2: reduce_v2<<<blocks, kBlock>>>(load, count, out); break;
        case 3: reduce_v3<<<blocks, kBlock>>>(load, count, out); break;
        case 4: reduce_v4<<<blocks, kBlock>>>(load, count, out); break;
        case 5: reduce_v5<<<blocks, kBlock>>>(load, count, out); break;
        case 6: reduce_v6<kBlock><<<blocks, kBlock>>>(load, count, out); break;
        case 7: reduce_v7<kBlock><<<blocks, kBlock>>>(load, count, out); break;
        default: throw Error("reduction ladder: no step " + std::to_string(step));
    }
    QMARG_CHECK_LAUNCH(reduce_ladder_step);
}

// Blocks of reduce_v7 resident on the device at once.
inline unsigned v7_resident_blocks() {
    int per_sm = 0;
    QMARG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_v7<kBlock, AbsSquare>, kBlock, 0));
    return static_cast<unsigned>(per_sm * gpu::multiprocessor_count());
}

// Sizes of the two ping-pong buffers run() needs for n items.
inline Index first_buffer_size(Index n) { return (n + kBlock - 1) / kBlock; }
inline Index second_buffer_size(Index n) { return first_buffer_size(first_buffer_size(n)) + 1; }

// Sum of |in[i]|^2 over n amplitudes by step `step`, level after level; returns
// the device address of the result (inside `first` or `second`). Launches only.
inline const double* run(int step, const double2* in, Index n, double* first, double* second,
                         unsigned v7_resident) {
    unsigned blocks = level_blocks(step, n, v7_resident);
    launch_level(step, AbsSquare{in}, n, first, blocks);
    double* src = first;
    double* dst = second;
    Index count = blocks;
    while (count > 1) {
        blocks = level_blocks(step, count, v7_resident);
        launch_level(step, Plain{src}, count, dst, blocks);
        std::swap(src, dst);
        count = blocks;
    }
    return src;
}

}  // namespace ladder
}  // namespace bench
}  // namespace qmarg
