// The producer-warp form of the tensor-core gate kernel (cuda/apply_matrix_mma.cu
// describes the design it shares): k = 9 of a double state on sm_90.
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>

#include "apply_matrix_mma_common.cuh"

namespace qmarg {
namespace gpu {
namespace {

// The producer-warp form (double states, sm_90). Eight consumer warps do the
// products; a ninth warp, the producer, fills shared memory, and mbarriers
// instead of a block barrier per chunk tell each side when it may go on, so
// a warp waits only for the data it needs:
//   - matrix chunks come as one bulk copy each (cp.async.bulk) from a copy
//     of the matrix laid out chunk by chunk, stage image by stage image
//     (make_matrix_images); full[s] completes when stage s has landed,
//     empty[s] when all 256 consumer threads are done with it (each thread
//     fences its own reads against the async proxy and then arrives, which
//     orders them before the bulk copy that refills the stage;
//     compute-sanitizer racecheck flags the refill when one thread per warp
//     arrives for its warp, and does not flag a missing fence);
//   - X is staged by the producer (cp.async, 8 bytes a part), the
//     first tile whole, later tiles' chunk c as soon as the last pass of the
//     tile before has multiplied chunk c (known from empty[], kStages steps
//     later); xfull[c] completes once per tile when chunk c's rows landed.
// Invariants: stage s holds the chunk of step i (i % kStages == s) from the
// completion of full[s] that the consumers wait for at step i until their
// arrival on empty[s] at step i; X rows of chunk c hold tile t's values from
// the completion of xfull[c] in phase t until the consumers' arrival on
// empty after the last pass's step that multiplies them. A consumer stores
// a pass only after it waited for every chunk of the tile (all in the first
// pass), so the in-place update never overwrites X that was not yet read.
// Measured on an H100 (double, n = 30, TFLOP/s, against the one-block
// kernel in the same run): k = 9 34.6 -> 38.1 (low targets), 33.5 -> 38.0
// (high); the bulk copies fetch the matrix stream, which bounds k = 9, with
// fewer instructions and no block barrier. At k = 6, 7 this form was slower
// with one block per multiprocessor (k = 7 33.0 against 38.2, k = 6 22.1
// against 34.0) and, after the fragment change, with two (96 registers and
// some spills; k = 7 39.3 / 36.4 against 42.8 / 36.7 TFLOP/s on low / high
// targets, k = 6 32.4 / 29.0 against 38.2 / 31.9).
template <class S>
struct ProducerLayout {
    // The mbarriers follow what the other kernels carve (MmaShared).
    static constexpr std::size_t kBarrierOffset = (S::kSharedBytes + 7) / 8 * 8;
    static constexpr int kBarriers = 2 * S::kStages + S::kChunksPerPass;
    static constexpr std::size_t kSharedBytes = kBarrierOffset + kBarriers * sizeof(std::uint64_t);
    static constexpr unsigned kStageBytes = S::kStageEntries * sizeof(double2);
    static constexpr int kThreads = kMmaThreads + 32;
    static_assert(S::kCluster == 1 && !S::kPrefetchX && S::kMinBlocks == 1,
                  "one block per multiprocessor; the producer warp does the prefetching");
    static_assert(S::kChunksPerPass >= S::kStages + 2,
                  "a chunk of X freed kStages steps late still lands before the next tile reads it");
    static_assert(kSharedBytes <= 227 * 1024, "fits an H100 block's shared memory");
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void wait_parity(std::uint64_t* barrier, unsigned parity) {
    while (!cuda::ptx::mbarrier_try_wait_parity(barrier, parity)) {
    }
}
#endif

template <class S>
__global__ void __launch_bounds__(ProducerLayout<S>::kThreads, S::kMinBlocks)
    apply_matrix_mma_producer_kernel(double2* amps, const double2* __restrict__ images,
                                     const __grid_constant__ TileLayout layout) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace ptx = cuda::ptx;
    using L = ProducerLayout<S>;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const auto [xs, ms, xb, x_offsets, chunk_offset, x_cells] = MmaShared<S>(shared_bytes);
    std::uint64_t* full = reinterpret_cast<std::uint64_t*>(shared_bytes + L::kBarrierOffset);
    std::uint64_t* empty = full + S::kStages;
    std::uint64_t* xfull = empty + S::kStages;

    make_x_staging<S>(layout, 0, x_offsets, x_cells, chunk_offset);  // the tables; the producer maps its lanes
    const int columns = 1 << layout.num_free;
    if (columns < S::kColumns && threadIdx.x < kMmaThreads) {
        zero_missing_columns<S>(xs, columns);  // then the state has one tile
    }
    if (threadIdx.x == 0) {
        for (int s = 0; s < S::kStages; ++s) {
            ptx::mbarrier_init(full + s, 1);
            ptx::mbarrier_init(empty + s, kMmaThreads);
        }
        for (int c = 0; c < S::kChunksPerPass; ++c) ptx::mbarrier_init(xfull + c, 32);
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    }
    __syncthreads();  // tables, zeros and barriers are ready; the only block barrier

    const Index stride = gridDim.x;
    const Index my_tiles = (layout.num_tiles - 1 - blockIdx.x) / stride + 1;  // grid <= num_tiles

    if (threadIdx.x >= kMmaThreads) {
        // The producer. Lane `lane` stages the elements of the consumers'
        // threads lane + 32 v (the same element order, so a warp's 32 copies
        // still walk neighbouring addresses).
        const unsigned lane = threadIdx.x - kMmaThreads;
        constexpr int kVirtual = kMmaThreads / 32;
        XStaging lane_x[kVirtual];
#pragma unroll
        for (int v = 0; v < kVirtual; ++v) lane_x[v] = x_staging_for<S>(layout, lane + 32 * v);
        // (Structured bindings are captured by copy, as C++17 asks.)
        auto stage_chunk = [&, xs = xs, x_offsets = x_offsets, chunk_offset = chunk_offset,
                            x_cells = x_cells](Index base, int c) {
            // As stage_x_chunk for each of the lane's threads, the chunk's
            // base hoisted out: these copies stand between the bulk copies
            // of the matrix stream (staging through stage_x_chunk measured
            // 4 % slower at k = 9).
            const double2* from = amps + base + chunk_offset[c];
#pragma unroll
            for (int v = 0; v < kVirtual; ++v) {
                if (!lane_x[v].active) continue;
#pragma unroll
                for (int j = 0; j < S::kXPerThread; ++j) {
                    copy_x_async<S>(xs, lane_x[v].thread_cell | x_cells[j], c,
                                    from + lane_x[v].thread_offset + x_offsets[j]);
                }
            }
            ptx::cp_async_mbarrier_arrive_noinc(xfull + c);  // when this lane's copies have landed
        };
        const Index first_base = tile_base(layout, blockIdx.x);
        for (int c = 0; c < S::kChunksPerPass; ++c) stage_chunk(first_base, c);

        const Index steps = my_tiles * S::kSteps;
        int stage = 0;
        unsigned empty_parity = 0;
        for (Index i = 0; i < steps; ++i) {
            if (i >= S::kStages) {
                wait_parity(empty + stage, empty_parity);  // step i - kStages is done: its stage is free
                const Index done = i - S::kStages;
                const int q = static_cast<int>(done % S::kSteps);
                const Index tile_number = done / S::kSteps;
                if (q >= S::kSteps - S::kChunksPerPass && tile_number + 1 < my_tiles) {
                    // ... and it was the last pass's use of chunk q % kChunksPerPass.
                    stage_chunk(tile_base(layout, blockIdx.x + (tile_number + 1) * stride), q % S::kChunksPerPass);
                }
            }
            if (lane == 0) {
                const std::uint32_t bytes = L::kStageBytes;  // a local: the ptx wrappers take a reference
                ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, full + stage,
                                               bytes);
                ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, ms + stage * S::kStageEntries,
                                   images + static_cast<std::size_t>(i % S::kSteps) * S::kStageEntries, bytes,
                                   full + stage);
            }
            __syncwarp();
            if (++stage == S::kStages) {
                stage = 0;
                if (i >= S::kStages) empty_parity ^= 1u;
            }
        }
        __pipeline_wait_prior(0);
        return;
    }

    // The consumers.
    const WarpPlace<S> place;
    const int g = place.g, t = place.t, warp_row0 = place.warp_row0, col0 = place.col0;
    Index col_offset[S::kTileCols][2];
    Index lane_row_offset[2];
    lane_offsets<S>(layout, warp_row0, col0, g, t, col_offset, lane_row_offset);
    MmaAccumulators<S> acc;
    clear_accumulators<S>(acc);
    int stage = 0;
    unsigned full_parity = 0;
    Index tile = blockIdx.x;
    for (Index tile_number = 0; tile_number < my_tiles; ++tile_number, tile += stride) {
        const Index base = tile_base(layout, tile);
#pragma unroll 1
        for (int q = 0; q < S::kSteps; ++q) {
            wait_parity(full + stage, full_parity);
            if (q < S::kChunksPerPass) wait_parity(xfull + q, static_cast<unsigned>(tile_number & 1));
            multiply_chunk<S, S::kXStride>(acc,
                                           ms + stage * S::kStageEntries + (warp_row0 / 2 + g) * S::kPairStride + t, xs,
                                           col0 + g, (q % S::kChunksPerPass) * S::kChunk + t);
            // Every consumer thread: its reads come before the refill. The
            // reads are generic-proxy accesses and the refill an async-proxy
            // (bulk copy) write, so the reads are fenced against that proxy
            // first: without the fence, k = 9 gave relative errors of 0.4 to
            // 1.6 % in the GPU tests once the products got faster.
            ptx::fence_proxy_async(ptx::space_shared);
            ptx::mbarrier_arrive(empty + stage);
            if (++stage == S::kStages) {
                stage = 0;
                full_parity ^= 1u;
            }
            if (q % S::kChunksPerPass == S::kChunksPerPass - 1) {
                store_pass<S, double>(amps, layout, base, (q / S::kChunksPerPass) * S::kPassRows, lane_row_offset,
                                      col_offset, acc);
            }
        }
    }
#else
    // The dispatch runs this kernel only on sm_90 and later; the trap makes
    // a wrong dispatch loud, not silent.
    (void)amps;
    (void)images;
    __trap();
#endif
}

// The producer-warp shape (k = 9, double states, from sm_90 on): the
// one-block kernel's shape. At k = 8 (32-deep chunks) the library's two
// forms were level in one run (39.4 against 40.4 TFLOP/s on low targets,
// 38.3 against 36.5 on high ones; after the fragment change 43.4 against 46.4
// and 43.1 against 41.4), so k = 8 keeps the one-block kernel, which float
// states need anyway.
using MmaProducerShape = MmaShapeOf<9, 8, 2, kDmmaDepth, 2, 1, false>;

template <class S>
void launch_mma_producer(std::complex<double>* amps, const GateQubits& gate, const Matrix& matrix) {
    using L = ProducerLayout<S>;
    const TileLayout layout = make_tile_layout(gate, S::kColumnBits);
    const auto kernel = apply_matrix_mma_producer_kernel<S>;
    allow_shared_memory(kernel, L::kSharedBytes,
                        ("the tensor-core producer-warp kernel for " + std::to_string(S::kK) + " targets").c_str());
    const unsigned blocks = resident_grid(kernel, L::kThreads, L::kSharedBytes, layout.num_tiles);
    const DeviceArray<double2> images = matrix_images<S>(matrix);
    kernel<<<blocks, L::kThreads, L::kSharedBytes>>>(as_device(amps), images.data(), layout);
    QMARG_CHECK_LAUNCH(apply_matrix_mma_producer_kernel);
}

}  // namespace

bool apply_matrix_mma_with_producer(std::complex<double>* amps, const GateQubits& gate, const Matrix& matrix) {
    if (gate.num_targets != 9) {
        throw Error("apply_matrix_mma_with_producer: " + std::to_string(gate.num_targets) +
                    " targets; this kernel takes 9");
    }
    if (compute_capability_major() < 9) return false;
    launch_mma_producer<MmaProducerShape>(amps, gate, matrix);
    return true;
}

}  // namespace gpu
}  // namespace qmarg
