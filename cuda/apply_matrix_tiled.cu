// Dense gates on 6..10 targets as a tiled matrix product (the shared-memory
// tiling of seed 003): with D = 2^k, a gate is out = M * V where M is D x D and
// each column of V is one group (the 2^k amplitudes whose target bits vary).
// A dense gate does 8 * D flops per amplitude, so from k = 6 on it is bound by
// arithmetic, and what matters is how often each byte brought on chip is used.
//
// The product is in place, so a block owns whole columns: it stages all D rows
// of its kColumns groups (one TileLayout tile) in shared memory once, and only
// then overwrites them in global memory. Each staged amplitude is used D times
// from shared memory; each matrix entry, streamed from L2 in chunks, is used
// kColumns times. The output is computed kPassRows rows at a time (a pass);
// within a pass each thread keeps a kLaneRows x kThreadCols block of outputs in
// registers (the seed's Pvalue, widened), so every shared-memory load feeds
// several multiply-adds.
//
// Thread layout: lane l of a warp owns rows l, l + 32, ... of the warp's row
// strip, so the matrix chunk is read from shared memory without bank conflicts
// while all lanes of a warp read the same V entries (a broadcast). Warps are
// spread over row strips (kWarpRows) and column groups (kWarpCols).
//
// Shared-memory invariants (`vs`, `ms`):
//   vs[r * kVStride + c] is input row r of the tile's group c, for every r < D
//     and c < kColumns, from barrier (1) of the tile's first chunk until barrier
//     (2) of its last; nothing writes vs in between. The padding column makes
//     a warp's staging writes of consecutive rows land in different banks.
//   ms[s][kk * kPassRows + i] = M[pass * kPassRows + i][kc + kk] for the chunk
//     (pass, kc) that stage s holds, from the barrier (1) after its wait until
//     the barrier (2) that ends its iteration. The next chunk is copied into
//     the other stage meanwhile (cp.async, two stages), so L2 latency hides
//     behind the multiply-adds.
//   acc[i][j] = sum over c < kc + kChunk of M[row_i][c] * vs[c][col_j] after
//     the chunk at kc, written to global memory at the end of each pass.
//
// The micro-kernel (the kk loop) is the one place that does arithmetic, on
// CUDA-core FMAs for now. Its operands are indexed the way FP64 tensor-core
// (DMMA, mma.sync m8n8k4 .f64) fragments are (ms is A as [k][m], vs is B as
// [k][n]), so a DMMA micro-kernel (four real products per complex one) can
// take its place; staging real and imaginary parts in separate planes would
// then spare its fragment loads a 16-byte stride.
#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "apply_matrix.cuh"
#include "apply_matrix_tile.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "device_complex.cuh"

namespace qmarg {
namespace gpu {
namespace {

// Block shapes per (precision, k). kColumns is the reuse of each matrix entry
// fetched from L2; it is as large as shared memory allows (the staged V tile
// is D x kColumns amplitudes, up to 144 KiB at k = 10 in double).
template <class Real, int K>
struct TiledShape {
    using C = DeviceComplex<Real>;
    static constexpr int kDim = 1 << K;
    static constexpr int kLaneRows = 2;    // rows per lane, 32 apart
    static constexpr int kThreadCols = 8;  // columns per thread
    static constexpr int kWarpRows = K == 6 ? 1 : K == 7 ? 2 : K == 8 ? 4 : 8;
    static constexpr int kWarpCols = K == 6 ? 8 : K == 7 ? 4 : K <= 9 ? 2 : (sizeof(Real) == 4 ? 2 : 1);
    static constexpr int kChunk = K == 6 ? 16 : K == 7 ? 8 : 4;  // matrix columns per stage
    static constexpr int kThreads = 32 * kWarpRows * kWarpCols;
    static constexpr int kPassRows = 32 * kLaneRows * kWarpRows;
    static constexpr int kColumns = kThreadCols * kWarpCols;
    static constexpr int kColumnBits = kColumns == 8 ? 3 : kColumns == 16 ? 4 : kColumns == 32 ? 5 : 6;
    static constexpr int kVStride = kColumns + 1;
    static constexpr int kPasses = kDim / kPassRows;
    static constexpr int kChunksPerPass = kDim / kChunk;
    static constexpr int kChunkEntries = kChunk * kPassRows;
    static constexpr int kThreadBits = kThreads == 256 ? 8 : 9;
    // V amplitudes each thread stages per tile (the per-block staging table's size).
    static constexpr int kStagePerThread = kDim * kColumns > kThreads ? kDim * kColumns / kThreads : 1;
    static constexpr std::size_t kSharedBytes =
        (static_cast<std::size_t>(kDim) * kVStride + 2 * static_cast<std::size_t>(kChunkEntries)) * sizeof(C) +
        kStagePerThread * (sizeof(Index) + sizeof(unsigned));
    // Two blocks per multiprocessor where shared memory allows (H100: 227 KiB)
    // and two blocks' threads fit in the registers at up to 128 each.
    static constexpr int kMinBlocks = kSharedBytes <= 113 * 1024 && kThreads <= 256 ? 2 : 1;

    static_assert(kColumns == (1 << kColumnBits), "kColumns is a power of two");
    static_assert(kThreads == (1 << kThreadBits), "kThreads is 256 or 512");
    static_assert(kPassRows <= kDim && kDim % kPassRows == 0, "passes tile the rows");
    static_assert(kDim % kChunk == 0, "chunks tile the matrix columns");
    static_assert(kChunkEntries % kThreads == 0, "every thread copies the same number of matrix entries");
};

// Copies chunk q (pass q / kChunksPerPass, columns from kc) of the row-major
// matrix into stage `stage`. Consecutive threads take consecutive columns of a
// row, so global reads are contiguous runs of kChunk entries.
template <class S, class C>
__device__ __forceinline__ void copy_matrix_chunk(C* ms, const C* matrix, int stage, int q) {
    const int pass = q / S::kChunksPerPass;
    const int kc = (q % S::kChunksPerPass) * S::kChunk;
    C* dst = ms + stage * S::kChunkEntries;
    const C* src = matrix + static_cast<std::size_t>(pass) * S::kPassRows * S::kDim + kc;
#pragma unroll
    for (int s = 0; s < S::kChunkEntries / S::kThreads; ++s) {
        const int e = s * S::kThreads + threadIdx.x;
        const int kk = e % S::kChunk;
        const int r = e / S::kChunk;
        __pipeline_memcpy_async(dst + kk * S::kPassRows + r, src + static_cast<std::size_t>(r) * S::kDim + kk,
                                sizeof(C));
    }
}

template <class Real, int K>
__global__ void __launch_bounds__(TiledShape<Real, K>::kThreads, TiledShape<Real, K>::kMinBlocks)
    apply_matrix_tiled_kernel(DeviceComplex<Real>* amps, const DeviceComplex<Real>* __restrict__ matrix,
                              const __grid_constant__ TileLayout layout) {
    using C = DeviceComplex<Real>;
    using S = TiledShape<Real, K>;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    C* vs = reinterpret_cast<C*>(shared_bytes);
    C* ms = vs + S::kDim * S::kVStride;
    Index* stage_offsets = reinterpret_cast<Index*>(ms + 2 * S::kChunkEntries);
    unsigned* stage_cells = reinterpret_cast<unsigned*>(stage_offsets + S::kStagePerThread);

    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    const int pass_row0 = (warp % S::kWarpRows) * 32 * S::kLaneRows + lane;  // + 32 i within a pass
    const int col0 = (warp / S::kWarpRows) * S::kThreadCols;
    const int columns = 1 << layout.num_free;  // groups per tile: kColumns, fewer only for small states
    const unsigned tile_size = static_cast<unsigned>(columns) << K;
    const C zero = make_device_complex<Real>(0, 0);
    constexpr int kSteps = S::kPasses * S::kChunksPerPass;

    // Staged amplitude j of this thread is local index j * kThreads +
    // threadIdx.x in every tile (a warp walks the tile in local order: whole
    // cache lines). Its global offset and its V cell split into a part fixed by
    // the thread and a part fixed by j, tabulated once per block.
    const int thread_bits = min(S::kThreadBits, layout.tile_bits);
    const int per_thread = tile_size > S::kThreads ? static_cast<int>(tile_size >> S::kThreadBits) : 1;
    const bool stages = threadIdx.x < tile_size;  // small states leave some threads nothing to stage
    const Index thread_offset = thread_tile_offsets(layout, thread_bits, per_thread, stage_offsets);
    const unsigned thread_cell = tile_cell(layout, threadIdx.x, thread_bits);
    for (int j = threadIdx.x; j < per_thread; j += S::kThreads) {
        stage_cells[j] = tile_cell(layout, static_cast<unsigned>(j) << thread_bits, layout.tile_bits);
    }
    __syncthreads();  // the staging tables are complete before any thread reads them

    for (Index t = blockIdx.x; t < layout.num_tiles; t += gridDim.x) {
        const Index base = tile_base(layout, t);

        // Stage V: file each amplitude of the tile under its (row, column).
        if (stages) {
            for (int j = 0; j < per_thread; ++j) {
                const unsigned cell = thread_cell | stage_cells[j];
                __pipeline_memcpy_async(vs + (cell & 0xffffu) * S::kVStride + (cell >> 16),
                                        amps + base + thread_offset + stage_offsets[j], sizeof(C));
            }
        }
        if (columns < S::kColumns) {
            // Columns this tile lacks hold zeros, so the product reads defined values.
            for (int e = threadIdx.x; e < S::kDim * S::kColumns; e += S::kThreads) {
                const int c = e % S::kColumns;
                if (c >= columns) vs[(e / S::kColumns) * S::kVStride + c] = zero;
            }
        }
        copy_matrix_chunk<S>(ms, matrix, 0, 0);
        __pipeline_commit();

        C acc[S::kLaneRows][S::kThreadCols];
#pragma unroll
        for (int i = 0; i < S::kLaneRows; ++i)
#pragma unroll
            for (int j = 0; j < S::kThreadCols; ++j) acc[i][j] = zero;

        for (int q = 0; q < kSteps; ++q) {
            if (q + 1 < kSteps) {
                copy_matrix_chunk<S>(ms, matrix, (q + 1) & 1, q + 1);
                __pipeline_commit();
                __pipeline_wait_prior(1);  // this thread's copies of chunk q (and of V) are done
            } else {
                __pipeline_wait_prior(0);
            }
            __syncthreads();  // (1) every thread's copies of chunk q (and at q = 0 of V) are visible to all

            const int kc = (q % S::kChunksPerPass) * S::kChunk;
            const C* mt = ms + (q & 1) * S::kChunkEntries;
            // Not unrolled: unrolling let the compiler hoist the next step's
            // loads and spill at the 128-register cap two blocks per SM need.
#pragma unroll 1
            for (int kk = 0; kk < S::kChunk; ++kk) {
                C a[S::kLaneRows];
#pragma unroll
                for (int i = 0; i < S::kLaneRows; ++i) a[i] = mt[kk * S::kPassRows + pass_row0 + 32 * i];
                const C* v_row = vs + (kc + kk) * S::kVStride + col0;
#pragma unroll
                for (int j = 0; j < S::kThreadCols; ++j) {
                    const C b = v_row[j];
#pragma unroll
                    for (int i = 0; i < S::kLaneRows; ++i) acc[i][j] = complex_fma(a[i], b, acc[i][j]);
                }
            }

            if (q % S::kChunksPerPass == S::kChunksPerPass - 1) {
                // End of a pass: its rows are final. The block owns these
                // amplitudes and has their inputs in vs, so it writes them now.
                const int pass = q / S::kChunksPerPass;
#pragma unroll
                for (int i = 0; i < S::kLaneRows; ++i) {
                    const unsigned row = pass * S::kPassRows + pass_row0 + 32 * i;
                    Index row_offset = 0;
#pragma unroll
                    for (int j = 0; j < K; ++j) {
                        if ((row >> j) & 1u) row_offset += layout.target_stride[j];
                    }
#pragma unroll
                    for (int j = 0; j < S::kThreadCols; ++j) {
                        const int col = col0 + j;
                        if (col < columns) {
                            Index col_offset = 0;
                            for (int f = 0; f < layout.num_free; ++f) {
                                if ((col >> f) & 1) col_offset += layout.free_stride[f];
                            }
                            amps[base + row_offset + col_offset] = acc[i][j];
                        }
                        acc[i][j] = zero;
                    }
                }
            }
            __syncthreads();  // (2) every thread is done with stage q & 1 (after the last chunk, with vs)
                              //     before the next copy into it is issued
        }
    }
}

template <class Real, int K>
void launch_tiled(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    using C = DeviceComplex<Real>;
    using S = TiledShape<Real, K>;
    const std::size_t entries = static_cast<std::size_t>(S::kDim) * S::kDim;
    std::vector<C> host(entries);
    for (std::size_t e = 0; e < entries; ++e) {
        const auto value = matrix.data()[e];
        host[e] = make_device_complex<Real>(static_cast<Real>(value.real()), static_cast<Real>(value.imag()));
    }
    const TileLayout layout = make_tile_layout(gate, S::kColumnBits);
    const auto kernel = apply_matrix_tiled_kernel<Real, K>;
    allow_shared_memory(kernel, S::kSharedBytes, ("the tiled kernel for " + std::to_string(K) + " targets").c_str());
    const unsigned blocks = resident_grid(kernel, S::kThreads, S::kSharedBytes, layout.num_tiles);

    DeviceArray<C> device_matrix(entries, "the gate matrix");
    copy_to_device_async(device_matrix.data(), host.data(), entries * sizeof(C));
    kernel<<<blocks, S::kThreads, S::kSharedBytes>>>(as_device(amps), device_matrix.data(), layout);
    QMARG_CHECK_LAUNCH(apply_matrix_tiled_kernel);
    // device_matrix goes back to the stream-ordered pool after the kernel: no
    // synchronisation, so consecutive gates queue up without a host round trip.
}

}  // namespace

template <class Real>
void apply_matrix_tiled(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    switch (gate.num_targets) {
        case 6: return launch_tiled<Real, 6>(amps, gate, matrix);
        case 7: return launch_tiled<Real, 7>(amps, gate, matrix);
        case 8: return launch_tiled<Real, 8>(amps, gate, matrix);
        case 9: return launch_tiled<Real, 9>(amps, gate, matrix);
        case 10: return launch_tiled<Real, 10>(amps, gate, matrix);
        default:
            throw Error("apply_matrix_tiled: " + std::to_string(gate.num_targets) + " targets; this path takes " +
                        std::to_string(kMaxSmallTargets + 1) + ".." + std::to_string(kMaxGateTargets));
    }
}

template void apply_matrix_tiled<float>(std::complex<float>*, const GateQubits&, const Matrix&);
template void apply_matrix_tiled<double>(std::complex<double>*, const GateQubits&, const Matrix&);

}  // namespace gpu
}  // namespace qmarg
