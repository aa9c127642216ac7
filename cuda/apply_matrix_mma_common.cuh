// The parts the tensor-core gate kernels share: the block shape, the matrix
// stream, the X tile's staging tables, the product of one chunk and the
// store of a finished pass. cuda/apply_matrix_mma.cu describes the design
// and holds the one-block kernel; apply_matrix_mma_producer.cu and
// apply_matrix_mma_cluster.cu hold the two sm_90 forms. For .cu files only.
#pragma once

#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <complex>
#include <cstddef>
#include <type_traits>

#include "apply_matrix.cuh"
#include "apply_matrix_tile.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "device_complex.cuh"
#include "dmma.cuh"
#include "launch.cuh"
#include "qmarg/bits.hpp"

namespace qmarg {
namespace gpu {

// The sm_90 forms, for the dispatch in apply_matrix_mma.cu (each checks its
// own arguments' k).
// k = 10 on clusters of blocks: false, with nothing run, where the GPU cannot
// hold one cluster (before sm_90, or no processing cluster with four free
// multiprocessors).
template <class Real>
bool apply_matrix_mma_on_clusters(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix);
// k = 9 of a double state with a producer warp: false, with nothing run,
// before sm_90 (no bulk copies, no mbarrier waits).
bool apply_matrix_mma_with_producer(std::complex<double>* amps, const GateQubits& gate, const Matrix& matrix);

constexpr int kMmaThreads = 256;
constexpr int kMmaThreadBits = 8;

constexpr int log2_of(int v) { return v <= 1 ? 0 : 1 + log2_of(v / 2); }

// A block shape: the kernel's compile-time parameters.
//   K          targets (D = 2^K rows of M and of X)
//   WarpRows   warps stacked along the rows of a pass (8 / WarpRows along
//              the columns)
//   TileCols   8-column DMMA tiles per warp: each A fragment is used that
//              many times
//   Chunk      depth of one step: the matrix streams through shared memory
//              in chunks of PassRows x Chunk entries, one barrier each
//   Stages     shared-memory stages of the matrix stream
//   MinBlocks  blocks per multiprocessor the registers must allow
//   PrefetchX  the next tile's X rows are copied in during the last pass of
//              a tile, as soon as the products no longer read them, so that
//              a block never waits for a whole tile to load
//   Cluster    blocks of a thread-block cluster that share one tile: block r
//              holds rows [r D / Cluster, (r + 1) D / Cluster) of X and
//              computes those rows of Y, reading the other rows of X from the
//              other blocks' shared memory (sm_90). A tile can then be
//              Cluster times wider, and each matrix entry fetched from L2
//              serves Cluster times more columns.
template <int K, int WarpRows, int TileCols, int Chunk, int Stages, int MinBlocks, bool PrefetchX, int Cluster = 1>
struct MmaShapeOf {
    static constexpr int kK = K;
    static constexpr int kDim = 1 << K;
    static constexpr int kWarpRows = WarpRows;
    static constexpr int kWarpCols = 8 / kWarpRows;
    static constexpr int kTileCols = TileCols;
    static constexpr int kStages = Stages;
    static constexpr int kCluster = Cluster;
    static constexpr int kRows = kDim / kCluster;  // rows of X and Y a block holds and computes
    static constexpr int kPassRows = kDmmaRows * kWarpRows;
    static constexpr int kColumns = kDmmaCols * kTileCols * kWarpCols;
    static constexpr int kColumnBits = log2_of(kColumns);
    static constexpr int kChunk = Chunk;
    static constexpr int kChunkBits = log2_of(kChunk);
    static constexpr int kMStride = kChunk + 4;
    static constexpr int kXStride = kRows + 4;
    static constexpr int kBStride = kChunk + 4;
    static constexpr int kPasses = kRows / kPassRows;
    static constexpr int kChunksPerPass = kDim / kChunk;  // a pass multiplies all D rows of X
    static constexpr int kOwnChunks = kRows / kChunk;     // chunks of X rows a block holds
    static constexpr int kSteps = kPasses * kChunksPerPass;
    static constexpr int kChunkEntries = kPassRows * kChunk;
    static constexpr int kStageEntries = kPassRows * kMStride;
    static constexpr int kMinBlocks = MinBlocks;
    static constexpr bool kPrefetchX = PrefetchX;
    // X is staged kChunk rows at a time: kChunk * kColumns amplitudes, local
    // index j * kMmaThreads + threadIdx.x of them for thread threadIdx.x.
    static constexpr int kXChunkSize = kChunk * kColumns;
    static constexpr int kXPerThread = kXChunkSize > kMmaThreads ? kXChunkSize / kMmaThreads : 1;
    // With a cluster, the step's chunk of X (kChunk rows x kColumns, from the
    // block that holds it) is copied into one of two local stages first.
    static constexpr int kBStages = kCluster > 1 ? 2 : 0;
    static constexpr std::size_t kSharedBytes =
        (static_cast<std::size_t>(kColumns) * kXStride + static_cast<std::size_t>(kStages) * kStageEntries +
         static_cast<std::size_t>(kBStages) * kColumns * kBStride) *
            sizeof(double2) +
        kXPerThread * (sizeof(Index) + sizeof(unsigned)) + kOwnChunks * sizeof(Index);

    static_assert(K >= 4 && K <= kMaxGateTargets, "the DMMA path takes 4..10 targets");
    static_assert(kWarpRows * kWarpCols * 32 == kMmaThreads, "8 warps");
    static_assert(kColumns == (1 << kColumnBits) && kChunk == (1 << kChunkBits), "powers of two");
    static_assert(kChunk % kDmmaDepth == 0 && kChunk <= kRows, "a chunk is whole DMMA depths, held by one block");
    static_assert(kPassRows <= kRows && kRows % kPassRows == 0, "passes tile the block's rows");
    static_assert(kChunkEntries % kMmaThreads == 0, "every thread copies the same number of matrix entries");
    static_assert(kCluster == 1 || kXChunkSize % kMmaThreads == 0, "every thread copies the same share of X");
    static_assert(kMStride % 8 == 4 && kXStride % 8 == 4 && kBStride % 8 == 4,
                  "strides keep fragment loads free of bank conflicts");
    static_assert(!kPrefetchX || (kCluster == 1 && kChunksPerPass >= kStages + 1),
                  "a prefetched chunk of X must land before the next tile's products read it");
    static_assert(kSharedBytes <= 227 * 1024, "fits an H100 block's shared memory");
};

// Issues the copy of chunk q (pass q / kChunksPerPass, matrix columns from kc)
// of the row-major matrix into stage `stage`, for a block whose rows start at
// row0. kChunk consecutive threads take one row's kChunk entries: contiguous
// reads of 16 * kChunk bytes.
template <class S>
__device__ __forceinline__ void copy_matrix_chunk(double2* ms, const double2* matrix, int row0, int q, int stage) {
    const int pass = q / S::kChunksPerPass;
    const int kc = (q % S::kChunksPerPass) * S::kChunk;
    double2* dst = ms + stage * S::kStageEntries;
    // Kept in this form: (row0 + pass * kPassRows) * kDim, the same value,
    // cost 8 registers per thread and 5 to 10 % of the speed at k = 6..10.
    const double2* src = matrix + static_cast<std::size_t>(pass) * S::kPassRows * S::kDim +
                         static_cast<std::size_t>(row0) * S::kDim + kc;
#pragma unroll
    for (int s = 0; s < S::kChunkEntries / kMmaThreads; ++s) {
        const int e = s * kMmaThreads + threadIdx.x;
        const int kk = e % S::kChunk;
        const int r = e / S::kChunk;
        __pipeline_memcpy_async(dst + r * S::kMStride + kk, src + static_cast<std::size_t>(r) * S::kDim + kk,
                                sizeof(double2));
    }
}

// The prologue of the matrix stream: chunks 0 .. kStages - 2 into stages 0
// .. kStages - 2, one commit group each.
template <class S>
__device__ __forceinline__ void copy_first_matrix_chunks(double2* ms, const double2* matrix, int row0) {
#pragma unroll
    for (int q = 0; q < S::kStages - 1; ++q) {
        if (q < S::kSteps) copy_matrix_chunk<S>(ms, matrix, row0, q, q);
        __pipeline_commit();
    }
}

// The dynamic shared memory of the kernels, in the order kSharedBytes counts
// it: the X tile, the matrix stages, the cluster form's X stages (none
// elsewhere), the staging tables.
template <class S>
struct MmaShared {
    double2* xs;
    double2* ms;
    double2* xb;
    Index* x_offsets;
    Index* chunk_offset;
    unsigned* x_cells;
    __device__ explicit MmaShared(unsigned char* bytes)
        : xs(reinterpret_cast<double2*>(bytes)),
          ms(xs + S::kColumns * S::kXStride),
          xb(ms + S::kStages * S::kStageEntries),
          x_offsets(reinterpret_cast<Index*>(xb + S::kBStages * S::kColumns * S::kBStride)),
          chunk_offset(x_offsets + S::kXPerThread),
          x_cells(reinterpret_cast<unsigned*>(chunk_offset + S::kOwnChunks)) {}
};

// Where this thread's share of one X chunk lives: element j of the chunk
// (local index j * kMmaThreads + threadIdx.x among the tile amplitudes whose
// row lies in the chunk) is at global offset base + chunk_offset[c] +
// thread_offset + offsets[j] and goes to shared cell thread_cell | cells[j]
// (column << 16 | row within the chunk) + c * kChunk rows, for the block's
// own chunk c (its rows from row0 + c * kChunk).
struct XStaging {
    Index thread_offset;
    unsigned thread_cell;
    bool active;  // small chunks (and small states) leave some threads nothing to stage
};

// The local bits that vary within a chunk: every free bit and the target bits
// of the row's low kChunkBits bits, ascending; their number is returned.
template <class S>
__device__ inline int chunk_local_bits(const TileLayout& layout, int* positions) {
    int count = 0;
    for (int p = 0; p < layout.tile_bits; ++p) {
        const int role = layout.local_role[p];
        if (role < 0 || role < S::kChunkBits) positions[count++] = p;
    }
    return count;
}

// This thread's part of the chunk staging for `thread` (of kMmaThreads; the
// producer warp of the producer-warp kernel stages for eight at a time):
// chunk element i's local index holds i's bits at the chunk's varying
// positions, and thread takes the low kMmaThreadBits of them.
template <class S>
__device__ inline XStaging x_staging_for(const TileLayout& layout, unsigned thread) {
    int positions[kMaxTileBits];
    const int count = chunk_local_bits<S>(layout, positions);  // kChunkBits + num_free
    const int thread_bits = min(kMmaThreadBits, count);
    const unsigned l = static_cast<unsigned>(scatter_bits(thread & ((1u << thread_bits) - 1), positions, count));
    XStaging x;
    x.thread_offset = local_offset(layout, l);
    x.thread_cell = tile_cell(layout, l, layout.tile_bits);
    x.active = thread < (1u << count);
    return x;
}

// Global offset (from a tile's base) of matrix row `row`: the target strides
// of its set bits.
template <class S>
__device__ __forceinline__ Index target_offset(const TileLayout& layout, unsigned row) {
    Index offset = 0;
    for (int b = 0; b < S::kK; ++b) {
        if ((row >> b) & 1u) offset += layout.target_stride[b];
    }
    return offset;
}

// Fills the block's tables (`offsets`, `cells`, `chunk_offset`; read after a
// __syncthreads) and returns this thread's part.
template <class S>
__device__ inline XStaging make_x_staging(const TileLayout& layout, int row0, Index* offsets, unsigned* cells,
                                          Index* chunk_offset) {
    int positions[kMaxTileBits];
    const int count = chunk_local_bits<S>(layout, positions);
    const int thread_bits = min(kMmaThreadBits, count);
    for (int j = threadIdx.x; j < S::kXPerThread; j += kMmaThreads) {
        const unsigned l =
            static_cast<unsigned>(scatter_bits(static_cast<unsigned>(j) << thread_bits, positions, count));
        offsets[j] = local_offset(layout, l);
        cells[j] = tile_cell(layout, l, layout.tile_bits);
    }
    for (int c = threadIdx.x; c < S::kOwnChunks; c += kMmaThreads) {
        const unsigned row = static_cast<unsigned>(row0) + (static_cast<unsigned>(c) << S::kChunkBits);
        chunk_offset[c] = target_offset<S>(layout, row);
    }
    return x_staging_for<S>(layout, threadIdx.x);
}

// Shared-memory address of the X cell (column << 16 | row) for rows of the
// block's own chunk c.
template <class S>
__device__ __forceinline__ double2* x_cell(double2* xs, unsigned cell, int c) {
    return xs + (cell >> 16) * S::kXStride + (cell & 0xffffu) + c * S::kChunk;
}

// Stages the block's own chunk c of the tile at `base` into xs: double
// amplitudes by cp.async (they join the caller's next commit group), float
// ones loaded, widened and stored (visible after the next barrier).
template <class S, class Real>
__device__ __forceinline__ void stage_x_chunk(double2* xs, const DeviceComplex<Real>* amps, Index base, int c,
                                              const XStaging& x, const Index* offsets, const unsigned* cells,
                                              const Index* chunk_offset) {
    if (!x.active) return;
    const DeviceComplex<Real>* from = amps + base + chunk_offset[c] + x.thread_offset;
#pragma unroll
    for (int j = 0; j < S::kXPerThread; ++j) {
        double2* to = x_cell<S>(xs, x.thread_cell | cells[j], c);
        if constexpr (std::is_same<Real, double>::value) {
            __pipeline_memcpy_async(to, from + offsets[j], sizeof(double2));
        } else {
            const float2 v = from[offsets[j]];
            *to = make_double2(v.x, v.y);
        }
    }
}

// Stages all the block's own chunks of the tile at `base` (as stage_x_chunk).
template <class S, class Real>
__device__ __forceinline__ void stage_x_tile(double2* xs, const DeviceComplex<Real>* amps, Index base,
                                             const XStaging& x, const Index* offsets, const unsigned* cells,
                                             const Index* chunk_offset) {
    for (int c = 0; c < S::kOwnChunks; ++c) {
        stage_x_chunk<S, Real>(xs, amps, base, c, x, offsets, cells, chunk_offset);
    }
}

// acc += (this warp's 16 rows of the matrix chunk) * (the chunk of X, this
// warp's columns). mt points at the stage's row warp_row0 + g, column t; X's
// column c, row r (of the chunk, from its first row) is x[(c * XStride) + r],
// and the lane's B elements are column col = col0 + g, rows row = t + ....
template <class S, int XStride>
__device__ __forceinline__ void multiply_chunk(double (&acc_re)[S::kTileCols][4], double (&acc_im)[S::kTileCols][4],
                                               const double2* mt, const double2* x, int col, int row) {
    // The chunk's columns of M (rows of X) eight at a time, one m16n8k8
    // product per real part pair: few fragments are live at a time.
#pragma unroll
    for (int d = 0; d < S::kChunk / 8; ++d) {
        double a_re[4], a_im[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            // a[i]: row g + 8 (i & 1), column 8 d + 4 (i >> 1) + t of the warp's 16 rows.
            const double2 m = mt[8 * (i & 1) * S::kMStride + 8 * d + 4 * (i >> 1)];
            a_re[i] = m.x;
            a_im[i] = m.y;
        }
#pragma unroll
        for (int j = 0; j < S::kTileCols; ++j) {
            // b[i]: row (k) 8 d + t + 4i, column g of the 8-column block at col0 + 8 j.
            const double2* xj = x + (col + kDmmaCols * j) * XStride + row + 8 * d;
            double b_re[2], b_im[2], b_neg_im[2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const double2 v = xj[4 * i];
                b_re[i] = v.x;
                b_im[i] = v.y;
                b_neg_im[i] = -v.y;
            }
            // Issued in this order, ptxas spreads the dependent products
            // itself where registers allow (k >= 8). Written out as all
            // first products of the tiles, then all second ones: k = 6 4 %
            // faster, k = 7 5 to 10 % slower (more spills), k >= 8 level.
            dmma_16x8x8(acc_re[j], a_re, b_re);
            dmma_16x8x8(acc_im[j], a_re, b_im);
            dmma_16x8x8(acc_im[j], a_im, b_re);
            dmma_16x8x8(acc_re[j], a_im, b_neg_im);
        }
    }
}

template <class S>
__device__ __forceinline__ void clear_accumulators(double (&acc_re)[S::kTileCols][4],
                                                   double (&acc_im)[S::kTileCols][4]) {
#pragma unroll
    for (int j = 0; j < S::kTileCols; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc_re[j][i] = acc_im[j][i] = 0.0;
}

// Writes a finished pass (this lane's rows pass_row + row_offset[half]) of
// the tile at `base` to global memory and clears the accumulators.
template <class S, class Real>
__device__ __forceinline__ void store_pass(DeviceComplex<Real>* amps, const TileLayout& layout, Index base,
                                           unsigned pass_row, const Index (&lane_row_offset)[2],
                                           const Index (&col_offset)[S::kTileCols][2],
                                           double (&acc_re)[S::kTileCols][4], double (&acc_im)[S::kTileCols][4]) {
    const Index pass_offset = base + target_offset<S>(layout, pass_row);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const Index row_offset = pass_offset + lane_row_offset[half];
#pragma unroll
        for (int j = 0; j < S::kTileCols; ++j) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int i = 2 * half + h;
                if (col_offset[j][h] != Index(-1)) {
                    if constexpr (std::is_same<Real, double>::value) {
                        amps[row_offset + col_offset[j][h]] = make_double2(acc_re[j][i], acc_im[j][i]);
                    } else {
                        amps[row_offset + col_offset[j][h]] =
                            make_float2(static_cast<float>(acc_re[j][i]), static_cast<float>(acc_im[j][i]));
                    }
                }
                acc_re[j][i] = 0.0;
                acc_im[j][i] = 0.0;
            }
        }
    }
}

// The global offsets a lane's accumulators go to (from the tile base): its
// output columns col0 + 8 j + 2t + {0, 1} (-1 marks a column a small state
// lacks), and its rows warp_row0 + g + {0, 8} within a pass (a pass adds the
// offset of its first row: the bits are disjoint).
template <class S>
__device__ __forceinline__ void lane_offsets(const TileLayout& layout, int warp_row0, int col0, int g, int t,
                                             Index (&col_offset)[S::kTileCols][2], Index (&lane_row_offset)[2]) {
    const int columns = 1 << layout.num_free;
#pragma unroll
    for (int j = 0; j < S::kTileCols; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int col = col0 + kDmmaCols * j + 2 * t + h;
            Index offset = 0;
            for (int f = 0; f < layout.num_free; ++f) {
                if ((col >> f) & 1) offset += layout.free_stride[f];
            }
            col_offset[j][h] = col < columns ? offset : Index(-1);
        }
    }
#pragma unroll
    for (int half = 0; half < 2; ++half) lane_row_offset[half] = target_offset<S>(layout, warp_row0 + g + 8 * half);
}

// Where this thread sits in the block's products: its DMMA lane group g and
// thread t within it, its warp's first row within a pass and first column.
template <class S>
struct WarpPlace {
    int g = dmma_group(threadIdx.x % 32);
    int t = dmma_thread_in_group(threadIdx.x % 32);
    int warp_row0 = (threadIdx.x / 32 % S::kWarpRows) * kDmmaRows;
    int col0 = (threadIdx.x / 32 / S::kWarpRows) * S::kTileCols * kDmmaCols;
};

// Zeros the columns a small state's (only) tile lacks, so the products read
// defined values.
template <class S>
__device__ __forceinline__ void zero_missing_columns(double2* xs, int columns) {
    for (int e = threadIdx.x; e < (S::kColumns - columns) * S::kRows; e += kMmaThreads) {
        xs[(columns + e / S::kRows) * S::kXStride + e % S::kRows] = make_double2(0.0, 0.0);
    }
}

// The gate's matrix on the device. Matrix is row-major std::complex<double>:
// the same bytes as double2. The copy is queued on the stream, and the array
// goes back to the stream-ordered pool after the kernel: no synchronisation,
// so consecutive gates queue up without a host round trip.
inline DeviceArray<double2> device_matrix_of(const Matrix& matrix) {
    const std::size_t entries = static_cast<std::size_t>(matrix.dim()) * matrix.dim();
    DeviceArray<double2> device_matrix(entries, "the gate matrix");
    copy_to_device_async(device_matrix.data(), matrix.data(), entries * sizeof(double2));
    return device_matrix;
}

}  // namespace gpu
}  // namespace qmarg
