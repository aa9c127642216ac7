// Deterministic tree reductions on the GPU: the one mechanism behind
// total_probability, inner_product and expectation_z (cuda/reductions.cu) and
// the norm of a random state (cuda/state_init.cu).
//
// What is summed is an Op (see "The Op" below); how it is summed is fixed here,
// in one kernel launch:
//   1. The grid is fixed for a given (number of items, GPU): as many blocks as
//      the device holds at once (multiprocessors x resident blocks of this
//      kernel), fewer when there is little work.
//   2. Each thread walks its grid-stride items Unroll at a time: Unroll
//      independent loads are issued before any arithmetic (bytes in flight are
//      what a memory-bound kernel lives on), then the term of load u is added,
//      in double, to the thread's accumulator u.
//   3. The Unroll accumulators (pairwise), the 32 lanes of a warp (shuffles)
//      and the warps of the block (through shared memory) are combined in fixed
//      trees into one partial per block.
//   4. The last block to finish, found with an integer atomic ticket, sums the
//      partials in a fixed order and writes the result.
// There is no floating-point atomic anywhere: every addition happens in an
// order that depends only on (items, grid), and which block happens to finish
// last does not change that order. So the same input on the same GPU gives the
// same bits on every run. Doing step 4 in the same launch, instead of a second
// kernel, saves one launch gap: a few percent of the read time of a 2^24 state.
//
// Accuracy: a thread adds about items / (grid threads x Unroll) terms per
// accumulator (about 1000 for a 2^30-amplitude state on an H100), then about
// 20 tree levels follow. For a sum of positive terms the worst case is then
// about 1000 x 2^-53 = 1e-13 relative and the typical error near 1e-15, so no
// compensated summation is needed.
//
// Layers, so that a benchmark can time exactly the library's kernel:
// tree_reduce_kernel (the algorithm), launch_tree_reduce (one launch into
// caller-owned memory), tree_reduce (the library entry: a cached per-device
// workspace, the result returned to the host).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>

#include "check.cuh"
#include "launch.cuh"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

// The Op. A reduction over `items` items is described by a copyable struct:
//   using Acc  = double or ComplexSum;   what is accumulated (always in double)
//   using Item = ...;                    what one load brings into registers
//   __device__ Item load(Index item) const;               the memory access only
//   __device__ Acc term(const Item& v, Index item) const; the item's contribution
// Items are counted in the Op's own unit (one amplitude, two single-precision
// amplitudes in one 16-byte load, ...).

// A complex sum kept as two doubles (Acc of the inner product).
struct ComplexSum {
    double re;
    double im;
};

__host__ __device__ inline ComplexSum operator+(const ComplexSum& a, const ComplexSum& b) {
    return {a.re + b.re, a.im + b.im};
}

// Threads per block and loads in flight per thread. Unroll is a power of two so
// that the accumulators combine in a balanced pairwise tree.
template <int Threads = 256, int Unroll = 4>
struct ReducePolicy {
    static_assert(Threads % 32 == 0 && Threads >= 32 && Threads <= 1024, "whole warps, at most 1024 threads");
    static_assert(Unroll >= 1 && (Unroll & (Unroll - 1)) == 0, "Unroll must be a power of two");
    static constexpr int kThreads = Threads;
    static constexpr int kUnroll = Unroll;
};
// Measured on an H100 (bench/reduction_bench.cu, total probability, kernel
// alone, fraction of the read roofline at n = 24 / 26 / 30): 256x4 0.958 /
// 0.994 / 0.993; 512x4 0.966 / 1.000 / 0.999; 1024x2 0.978 / 1.013 / 1.003.
using DefaultReducePolicy = ReducePolicy<1024, 2>;

__device__ inline double shfl_down(double value, int offset) {
    return __shfl_down_sync(0xffffffffu, value, offset);
}
__device__ inline ComplexSum shfl_down(const ComplexSum& value, int offset) {
    return {shfl_down(value.re, offset), shfl_down(value.im, offset)};
}

// Partials are read past L1: they were written by other blocks in this launch.
__device__ inline double load_past_l1(const double* p) { return __ldcg(p); }
__device__ inline ComplexSum load_past_l1(const ComplexSum* p) {
    return {__ldcg(&p->re), __ldcg(&p->im)};
}

// Sum over the 32 lanes of a warp in a fixed tree (offsets 16, 8, 4, 2, 1);
// the result is valid in lane 0. The whole warp must take part.
template <class Acc>
__device__ Acc warp_sum(Acc value) {
    for (int offset = 16; offset > 0; offset /= 2) value = value + shfl_down(value, offset);
    return value;
}

// Sum over the Threads threads of a block in a fixed tree; the result is valid
// in thread 0. Needs blockDim.x == Threads. A kernel that calls it twice needs
// a __syncthreads() between the calls (warp 0 may still be reading warp_sums).
template <int Threads = DefaultReducePolicy::kThreads, class Acc>
__device__ Acc block_sum(Acc value) {
    static_assert(Threads % 32 == 0 && Threads <= 1024, "whole warps, at most 32 of them");
    __shared__ Acc warp_sums[Threads / 32];
    value = warp_sum(value);
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();  // every warp's sum is stored before warp 0 reads them
    if (warp == 0) {
        value = lane < Threads / 32 ? warp_sums[lane] : Acc{};
        value = warp_sum(value);
    }
    return value;
}

// Steps 2-4 of the file comment. `partials` holds gridDim.x Accs; `ticket` is 0
// on entry and is left 0 on exit (the last block resets it), so the same
// workspace serves the next launch on the stream. `out` may be device memory or
// mapped pinned host memory.
template <class Policy, class Op>
__global__ void __launch_bounds__(Policy::kThreads)
    tree_reduce_kernel(const Op op, const Index items, typename Op::Acc* partials, unsigned* ticket,
                       typename Op::Acc* out) {
    using Acc = typename Op::Acc;
    using Item = typename Op::Item;
    constexpr int kUnroll = Policy::kUnroll;

    Acc acc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] = Acc{};

    const Index stride = static_cast<Index>(gridDim.x) * Policy::kThreads;
    Index i = static_cast<Index>(blockIdx.x) * Policy::kThreads + threadIdx.x;
    // Whole groups: kUnroll loads in flight, then the kUnroll additions. A
    // warp's loads at each of the kUnroll positions are 32 consecutive items.
    for (; i + (kUnroll - 1) * stride < items; i += kUnroll * stride) {
        Item v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) v[u] = op.load(i + u * stride);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) acc[u] = acc[u] + op.term(v[u], i + u * stride);
    }
    // This thread's last, partial group (fewer than kUnroll items remain), its
    // loads again issued together. Kept apart from the loop above, whose
    // unpredicated body needs fewer registers.
    if (kUnroll > 1 && i < items) {
        Item v[kUnroll];
#pragma unroll
        for (int u = 0; u + 1 < kUnroll; ++u)
            if (i + u * stride < items) v[u] = op.load(i + u * stride);
#pragma unroll
        for (int u = 0; u + 1 < kUnroll; ++u)
            if (i + u * stride < items) acc[u] = acc[u] + op.term(v[u], i + u * stride);
    }
#pragma unroll
    for (int width = kUnroll / 2; width > 0; width /= 2) {
#pragma unroll
        for (int u = 0; u < width; ++u) acc[u] = acc[u] + acc[u + width];
    }

    const Acc block_total = block_sum<Policy::kThreads>(acc[0]);

    __shared__ bool is_last_block;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = block_total;
        __threadfence();  // the partial is visible device-wide before the ticket counts it
        is_last_block = atomicAdd(ticket, 1u) == gridDim.x - 1;
        __threadfence();  // and the last block reads the partials only after seeing every count
    }
    // Also separates the two uses of block_sum's shared memory.
    __syncthreads();
    if (!is_last_block) return;

    // Thread t adds partials t, t + Threads, t + 2 Threads, ... in that order;
    // kFinalLoads of them are loaded at once, since this pass is the serial
    // tail of the launch (one L2 round trip for up to kFinalLoads x Threads blocks).
    constexpr int kFinalLoads = 8;
    Acc sum = Acc{};
    for (unsigned base = threadIdx.x; base < gridDim.x; base += kFinalLoads * Policy::kThreads) {
        Acc v[kFinalLoads];
#pragma unroll
        for (int u = 0; u < kFinalLoads; ++u) {
            const unsigned b = base + u * Policy::kThreads;
            v[u] = b < gridDim.x ? load_past_l1(partials + b) : Acc{};
        }
#pragma unroll
        for (int u = 0; u < kFinalLoads; ++u) sum = sum + v[u];
    }
    sum = block_sum<Policy::kThreads>(sum);
    if (threadIdx.x == 0) {
        *out = sum;
        *ticket = 0;
    }
}

// The fixed grid of step 1: blocks that fit on the device at once, capped so
// that every thread has about one group of Unroll items when the work is small.
// The resident-block count is queried once per device and kept: the queries
// cost a few microseconds, a visible share of a reduction of 2^24 amplitudes.
template <class Policy, class Op>
unsigned tree_reduce_blocks(Index items) {
    constexpr int kMaxDevices = 64;
    static std::atomic<Index> resident_by_device[kMaxDevices] = {};
    int device = 0;
    QMARG_CUDA_CHECK(cudaGetDevice(&device));
    Index resident = device < kMaxDevices ? resident_by_device[device].load(std::memory_order_relaxed) : 0;
    if (resident == 0) {
        int resident_per_sm = 0;
        QMARG_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &resident_per_sm, tree_reduce_kernel<Policy, Op>, Policy::kThreads, 0));
        resident = static_cast<Index>(multiprocessor_count()) * static_cast<Index>(resident_per_sm);
        if (device < kMaxDevices) resident_by_device[device].store(resident, std::memory_order_relaxed);
    }
    const Index per_block = static_cast<Index>(Policy::kThreads) * Policy::kUnroll;
    const Index wanted = (items + per_block - 1) / per_block;
    return static_cast<unsigned>(std::max<Index>(1, std::min(wanted, resident)));
}

// One launch into caller-owned memory (partials: `blocks` Accs; ticket: 0).
template <class Policy, class Op>
void launch_tree_reduce(const Op& op, Index items, unsigned blocks, typename Op::Acc* partials, unsigned* ticket,
                        typename Op::Acc* out, cudaStream_t stream = 0) {
    tree_reduce_kernel<Policy, Op><<<blocks, Policy::kThreads, 0, stream>>>(op, items, partials, ticket, out);
    QMARG_CHECK_LAUNCH(tree_reduce_kernel);
}

// The workspace of tree_reduce on the current device: partials and the ticket
// in device memory, and a pinned, mapped host slot that the last block writes
// the result into (no copy call after the kernel, only a synchronisation). It
// is allocated on first use and kept (a cudaMalloc/cudaFree pair per call would
// cost more than reducing a 2^20-amplitude state). Holding one locks it, so
// host threads reducing on the same device take turns. cuda/reduce_workspace.cu.
class ReduceWorkspace {
public:
    static constexpr std::size_t kResultBytes = 64;

    // Locks the current device's workspace and makes room for `partial_bytes`.
    explicit ReduceWorkspace(std::size_t partial_bytes);
    ReduceWorkspace(const ReduceWorkspace&) = delete;
    ReduceWorkspace& operator=(const ReduceWorkspace&) = delete;

    void* partials() const;
    unsigned* ticket() const;
    void* result_device_address() const;  // where the kernel writes the result
    const void* result_host() const;      // where the host reads it

    struct Slot;

private:
    Slot* slot_;
    std::unique_lock<std::mutex> lock_;
};

// The library entry: sum of op over `items` items, returned to the host.
template <class Policy = DefaultReducePolicy, class Op>
typename Op::Acc tree_reduce(const Op& op, Index items) {
    using Acc = typename Op::Acc;
    static_assert(sizeof(Acc) <= ReduceWorkspace::kResultBytes, "result slot too small");
    if (items == 0) return Acc{};
    const unsigned blocks = tree_reduce_blocks<Policy, Op>(items);
    ReduceWorkspace workspace(blocks * sizeof(Acc));
    launch_tree_reduce<Policy>(op, items, blocks, static_cast<Acc*>(workspace.partials()), workspace.ticket(),
                               static_cast<Acc*>(workspace.result_device_address()));
    QMARG_CUDA_CHECK(cudaStreamSynchronize(0));
    Acc result;
    std::memcpy(&result, workspace.result_host(), sizeof result);
    return result;
}

// A sum of term(i) for i < n, each term computed on the fly (no loads): the
// norm of a random state is summed this way before the state exists.
template <class Term>
struct IndexTermOp {
    using Acc = double;
    using Item = double;
    Term term_of;
    __device__ Item load(Index i) const { return term_of(i); }
    __device__ Acc term(const Item& value, Index) const { return value; }
};

// Returns sum_{i<n} term(i) in double. `term` is a device-callable functor taking Index.
template <class Term>
double deterministic_sum(Index n, Term term) {
    return tree_reduce(IndexTermOp<Term>{term}, n);
}

}  // namespace gpu
}  // namespace qmarg
