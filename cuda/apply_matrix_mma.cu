// Dense gates on 4..10 targets as a matrix product on the FP64 tensor cores
// (DMMA: mma.sync m16n8k8 .f64 on sm_90, m8n8k4 on sm_80; cuda/dmma.cuh),
// for double and float states: a float state's amplitudes are widened to
// double as they are staged and rounded back once, when the result is
// stored, so the product itself is the double one (more exact than float
// FMAs with a float copy of the matrix). Three kernels share the helpers
// below: the one-block kernel (every k before sm_90; k = 4..8 and float
// k = 9 after), the producer-warp kernel (double k = 9) and the cluster
// kernel (k = 10). With D = 2^k the gate is
// Y = M * X, M the D x D matrix and X's columns the groups (the D amplitudes
// whose target bits vary, one column per assignment of the other free qubits).
//
// In place, so a block owns whole columns: it stages all D rows of its
// kColumns columns (one TileLayout tile: the targets and the lowest free
// qubits, so a warp's global loads walk neighbouring addresses whether the
// targets are low or high) in shared memory, and only then overwrites them in
// global memory. The output is computed kPassRows rows at a time (a pass); the
// matrix streams through shared memory in chunks of kPassRows x kChunk
// entries, one step and one barrier each, fetched from L2 by every block.
// Reuse per byte brought on chip: each staged amplitude feeds D / 16 *
// kPassRows / 16 products, each matrix entry kColumns multiply-adds. The
// matrix's L2 traffic is therefore 16 * D / kColumns bytes per amplitude
// against 8 * D flops: 2 / kColumns bytes per flop. At k = 10 shared memory
// holds only 8 columns of D amplitudes: 1/4 byte per flop, about 5 TB/s of
// L2 reads at 21 TFLOP/s, the L2's limit. So k = 10 runs on clusters of four
// blocks that share one tile (apply_matrix_mma_cluster_kernel), which cuts
// that traffic by four.
//
// A block runs its tiles' steps as one stream: the matrix chunks, the same
// for every tile, are fetched kStages - 1 steps ahead across tile ends, and
// (from k = 6, kPrefetchX) the next tile's X arrives during the last pass of
// the current one: rows of chunk c are reloaded as soon as the last pass has
// multiplied them. Measured on an H100 (double, n = 30), against staging each
// tile whole at its start (one run): k = 6, 7 6 to 17 % faster, most on high
// targets, whose X tiles load slowest (k = 7: 29.6 -> 34.8 TFLOP/s); k = 8..10
// -2 to +3 %.
//
// What limits it (double, n = 30, H100): the kernel with its products
// replaced by a few adds takes 65 % of the real kernel's time at k = 7, 8 and
// 85 % at k = 9 (the matrix stream from L2 at 1/8 byte per flop, the step
// barriers, the X traffic), and with its fragments taken from registers
// instead of shared memory (DMMA, barriers and copies kept) it reaches 48
// TFLOP/s at k = 8 (40 with them). Without the block barriers (the
// producer-warp form below) k = 8 was level and k = 9 10 % faster. So at
// k = 8 the fragment loads cost most: warp tiles that reuse each fragment
// more are the next step there; at k = 9, 10 the matrix stream. Wider
// cluster tiles (64 columns at k = 8, 9, 10) were no faster.
//
// Complex arithmetic as four real products on interleaved data: a warp loads
// each fragment element as one double2 (re, im) from shared memory, and
//   Yre += Mre Xre + Mim (-Xim),  Yim += Mre Xim + Mim Xre,
// with the sign flip done on the B fragment in registers. No Gauss trick: it
// saves a quarter of the products but loses accuracy on matrices whose real
// and imaginary parts differ much in size.
//
// Warp layout: the block's 8 warps form kWarpRows x kWarpCols; a warp owns 16
// rows (one DMMA's M) of the pass and kTileCols * 8 columns, so it keeps
// kTileCols accumulator pairs (re, im: 8 doubles each) and reuses each A
// fragment kTileCols times.
//
// Shared-memory invariants of the one-block kernel (`xs`, `ms`, both double2;
// the producer-warp and cluster kernels state theirs above them):
//   xs[c * kXStride + r] = X[r][c], input row r of the current tile's column
//     c, for all c < kColumns and every row r of chunk r / kChunk, from the
//     barrier (B) of the first step that multiplies that chunk until the
//     barrier (B) of the step after the tile's last pass multiplied it (or
//     the tile's end). Between those barriers nothing writes those rows.
//     kXStride = D + 4 makes a B-fragment load (lanes g, t read column g, row
//     t + 4i) hit 8 different 16-byte bank groups per quarter warp.
//   ms[s][r * kMStride + kk] = M[pass * kPassRows + r][kc + kk] for the chunk
//     (pass, kc) that stage s holds, from barrier (B) of its step until the
//     barrier (B) of the step after the next copy into s is issued. kMStride =
//     kChunk + 4 makes an A-fragment load (row g, column 4j + t) conflict-free.
//   acc_re/acc_im[j] hold rows pass * kPassRows + 16 * warp_row + {g, g + 8},
//     columns col0 + 8 * j + {2t, 2t + 1} of Y, summed over the chunks of the
//     pass so far; written to global memory after the pass's last chunk.
#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "apply_matrix.cuh"
#include "apply_matrix_tile.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "device_complex.cuh"
#include "dmma.cuh"
#include "launch.cuh"

namespace qmarg {
namespace gpu {
namespace {

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

// The shape each k runs with. kColumns is as large as shared memory allows
// while keeping two blocks per multiprocessor where that is possible (so one
// block's global loads and stores overlap another's products); H100: 227 KiB
// per block, 228 KiB per multiprocessor.
//   k   columns  pass rows  chunk  stages  shared   blocks/SM  matrix L2 bytes/flop
//   4     128       16        16     2      51 KiB     2        1/64
//   5      64       32        16     2      57 KiB     2        1/32
//   6      64       32        16     2      90 KiB     2        1/32
//   7      32       64        16     2     108 KiB     2        1/16
//   8      32       64        32     2     207 KiB     1        1/16
//   9      16      128        16     2     212 KiB     1        1/8
//  10       8      128        16     2     212 KiB     1        1/4
//      (k = 10 runs on clusters on sm_90: MmaClusterShape below)
// Chunks of 32 halve the barriers per product; they pay where one block has
// the multiprocessor to itself (k = 8: 36.4 -> 40.5 TFLOP/s on low targets,
// 34.8 -> 37.0 on high ones). At k = 6, 7 the wider stages cost the second
// block (k = 7: 35.8 -> 34.6), and k = 9, 10 have no room for them.
template <int K>
using MmaShape = MmaShapeOf<K, K <= 4 ? 1 : K <= 6 ? 2 : K <= 8 ? 4 : 8, K == 10 ? 1 : 2, K == 8 ? 32 : kDmmaDepth,
                            2, K <= 7 ? 2 : 1, (K >= 6)>;
// ptxas -v (CUDA 13, sm_90): 128 registers at k = 4..7 (the cap two blocks
// per multiprocessor impose) with 32 to 52 bytes of spill loads in double and
// 40 to 112 in float, 162 to 170 at k = 8, 9 and 140 at k = 10, no spills
// there.

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

// Local index (in tile_bits bits) of chunk element i: i's bits deposited into
// the chunk's varying positions.
__device__ __forceinline__ unsigned deposit(unsigned i, const int* positions, int count) {
    unsigned l = 0;
    for (int b = 0; b < count; ++b) {
        if ((i >> b) & 1u) l |= 1u << positions[b];
    }
    return l;
}

// Fills the block's tables (`offsets`, `cells`, `chunk_offset`; read after a
// __syncthreads) and returns this thread's part.
template <class S>
__device__ inline XStaging make_x_staging(const TileLayout& layout, int row0, Index* offsets, unsigned* cells,
                                          Index* chunk_offset) {
    int positions[kMaxTileBits];
    const int count = chunk_local_bits<S>(layout, positions);  // kChunkBits + num_free
    const int thread_bits = min(kMmaThreadBits, count);
    for (int j = threadIdx.x; j < S::kXPerThread; j += kMmaThreads) {
        const unsigned l = deposit(static_cast<unsigned>(j) << thread_bits, positions, count);
        offsets[j] = local_offset(layout, l);
        cells[j] = tile_cell(layout, l, layout.tile_bits);
    }
    for (int c = threadIdx.x; c < S::kOwnChunks; c += kMmaThreads) {
        Index offset = 0;
        const unsigned row = static_cast<unsigned>(row0) + (static_cast<unsigned>(c) << S::kChunkBits);
        for (int b = 0; b < S::kK; ++b) {
            if ((row >> b) & 1u) offset += layout.target_stride[b];
        }
        chunk_offset[c] = offset;
    }
    const unsigned l = deposit(threadIdx.x & ((1u << thread_bits) - 1), positions, count);
    XStaging x;
    x.thread_offset = local_offset(layout, l);
    x.thread_cell = tile_cell(layout, l, layout.tile_bits);
    x.active = threadIdx.x < (1u << count);
    return x;
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
    Index pass_offset = base;
    for (int b = 0; b < S::kK; ++b) {
        if ((pass_row >> b) & 1u) pass_offset += layout.target_stride[b];
    }
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
    for (int half = 0; half < 2; ++half) {
        const unsigned row = warp_row0 + g + 8 * half;
        Index offset = 0;
        for (int b = 0; b < S::kK; ++b) {
            if ((row >> b) & 1u) offset += layout.target_stride[b];
        }
        lane_row_offset[half] = offset;
    }
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

template <class S, class Real>
__global__ void __launch_bounds__(kMmaThreads, S::kMinBlocks)
    apply_matrix_mma_kernel(DeviceComplex<Real>* amps, const double2* __restrict__ matrix,
                            const __grid_constant__ TileLayout layout) {
    static_assert(S::kCluster == 1, "apply_matrix_mma_cluster_kernel runs the cluster shapes");
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const auto [xs, ms, xb, x_offsets, chunk_offset, x_cells] = MmaShared<S>(shared_bytes);

    const WarpPlace<S> place;
    const int g = place.g, t = place.t, warp_row0 = place.warp_row0, col0 = place.col0;
    const int columns = 1 << layout.num_free;  // kColumns, fewer only for small states

    const XStaging x = make_x_staging<S>(layout, 0, x_offsets, x_cells, chunk_offset);
    Index col_offset[S::kTileCols][2];
    Index lane_row_offset[2];
    lane_offsets<S>(layout, warp_row0, col0, g, t, col_offset, lane_row_offset);
    __syncthreads();  // the staging tables are complete before any thread reads them

    // The block's tiles are blockIdx.x + i * gridDim.x. Its steps run through
    // them without a break: the matrix stream, the same chunks for every
    // tile, never drains, and stage_read is the stage of the step's chunk.
    // Prologue: the first tile's X, then chunks 0 .. kStages - 2, one commit
    // group each (X joins chunk 0's).
    const Index stride = gridDim.x;
    Index tile = blockIdx.x;  // the grid is never larger than num_tiles
    Index base = tile_base(layout, tile);
    for (int c = 0; c < S::kOwnChunks; ++c) {
        stage_x_chunk<S, Real>(xs, amps, base, c, x, x_offsets, x_cells, chunk_offset);
    }
    if (columns < S::kColumns) zero_missing_columns<S>(xs, columns);
    copy_first_matrix_chunks<S>(ms, matrix, 0);

    double acc_re[S::kTileCols][4], acc_im[S::kTileCols][4];
    clear_accumulators<S>(acc_re, acc_im);

    int stage_read = 0;
    for (bool first = true; tile < layout.num_tiles; tile += stride, first = false) {
        const bool has_next = tile + stride < layout.num_tiles;
        const Index next_base = has_next ? tile_base(layout, tile + stride) : base;
        // Not unrolled: unrolling lets the compiler hoist the next step's
        // fragment loads and run out of registers.
#pragma unroll 1
        for (int q = 0; q < S::kSteps; ++q) {
            // Groups committed after chunk q's: the kStages - 2 chunks after it.
            __pipeline_wait_prior(S::kStages - 2);
            __syncthreads();  // (B) chunk q (and the X rows it multiplies) from every thread is visible;
                              //     every thread is done with the previous step, whose matrix stage the
                              //     next copy reuses and, in a tile's last pass, whose X rows the
                              //     prefetch overwrites
            {
                // The chunk kStages - 1 steps ahead, in this tile or the next.
                const int ahead = q + S::kStages - 1;
                const int stage_write = stage_read == 0 ? S::kStages - 1 : stage_read - 1;
                if (ahead < S::kSteps || has_next) {
                    copy_matrix_chunk<S>(ms, matrix, 0, ahead < S::kSteps ? ahead : ahead - S::kSteps, stage_write);
                }
            }
            if constexpr (S::kPrefetchX) {
                // Rows of chunk c are dead once the last pass has multiplied
                // them (the previous step): the next tile's rows take their
                // place. The last chunk's rows die with the tile, so they are
                // fetched at step 0 of the tile that needs them.
                if (q >= S::kSteps - S::kChunksPerPass + 1 && has_next) {
                    stage_x_chunk<S, Real>(xs, amps, next_base, q % S::kChunksPerPass - 1, x, x_offsets, x_cells,
                                           chunk_offset);
                } else if (q == 0 && !first) {
                    stage_x_chunk<S, Real>(xs, amps, base, S::kChunksPerPass - 1, x, x_offsets, x_cells,
                                           chunk_offset);
                }
            } else if (q == 0 && !first) {
                // Without prefetching, a tile's X is staged whole at its step
                // 0, behind the barrier (B) above that ends the previous
                // tile, and waited for at once.
                for (int c = 0; c < S::kOwnChunks; ++c) {
                    stage_x_chunk<S, Real>(xs, amps, base, c, x, x_offsets, x_cells, chunk_offset);
                }
                __pipeline_commit();
                __pipeline_wait_prior(0);
                __syncthreads();
            }
            __pipeline_commit();  // possibly empty: keeps one group per step for the count above

            const int kc = (q % S::kChunksPerPass) * S::kChunk;
            multiply_chunk<S, S::kXStride>(acc_re, acc_im,
                                           ms + stage_read * S::kStageEntries + (warp_row0 + g) * S::kMStride + t, xs,
                                           col0 + g, kc + t);
            stage_read = stage_read == S::kStages - 1 ? 0 : stage_read + 1;

            if (q % S::kChunksPerPass == S::kChunksPerPass - 1) {
                // End of a pass: its rows are final. Every thread passed
                // barrier (B) of the tile's step that made its last chunk of
                // X visible, so the whole X tile was read from global memory
                // before any of it is overwritten here.
                store_pass<S, Real>(amps, layout, base, (q / S::kChunksPerPass) * S::kPassRows, lane_row_offset,
                                    col_offset, acc_re, acc_im);
            }
        }
        base = next_base;
    }
    __pipeline_wait_prior(0);  // only empty groups can be pending
}

// The producer-warp form (double states, sm_90). Eight consumer warps do the
// products; a ninth warp, the producer, fills shared memory, and mbarriers
// instead of a block barrier per chunk tell each side when it may go on, so
// a warp waits only for the data it needs:
//   - matrix chunks come as one bulk copy each (cp.async.bulk) from a copy
//     of the matrix laid out chunk by chunk, stage image by stage image
//     (layout_matrix_chunks); full[s] completes when stage s has landed,
//     empty[s] when all 256 consumer threads are done with it (each thread
//     arrives after its own reads, which orders them before the bulk copy
//     that refills the stage; compute-sanitizer racecheck flags the refill
//     when one thread per warp arrives for its warp);
//   - X is staged by the producer (cp.async, 16 bytes an amplitude), the
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
// fewer instructions and no block barrier. At k = 6, 7 this form has one
// block per multiprocessor (the producer's registers leave no room for two)
// and was slower: k = 7 33.0 against 38.2, k = 6 22.1 against 34.0.
template <class S>
struct ProducerLayout {
    static constexpr std::size_t kXBytes = static_cast<std::size_t>(S::kColumns) * S::kXStride * sizeof(double2);
    static constexpr std::size_t kMBytes = static_cast<std::size_t>(S::kStages) * S::kStageEntries * sizeof(double2);
    static constexpr std::size_t kTableBytes =
        S::kXPerThread * (sizeof(Index) + sizeof(unsigned)) + S::kOwnChunks * sizeof(Index);
    static constexpr std::size_t kBarrierOffset = (kXBytes + kMBytes + kTableBytes + 7) / 8 * 8;
    static constexpr int kBarriers = 2 * S::kStages + S::kChunksPerPass;
    static constexpr std::size_t kSharedBytes = kBarrierOffset + kBarriers * sizeof(std::uint64_t);
    static constexpr unsigned kStageBytes = S::kStageEntries * sizeof(double2);
    static constexpr int kThreads = kMmaThreads + 32;
    static_assert(S::kCluster == 1 && !S::kPrefetchX && S::kMinBlocks == 1,
                  "one block per multiprocessor; the producer warp does the prefetching");
    static_assert(S::kChunksPerPass >= S::kStages + 2,
                  "a chunk of X freed kStages steps late still lands before the next tile reads it");
    static_assert(kStageBytes % 16 == 0 && kXBytes % 16 == 0 && kMBytes % 16 == 0, "bulk copies move 16-byte units");
    static_assert(kSharedBytes <= 227 * 1024, "fits an H100 block's shared memory");
};

// images[q * kStageEntries + r * kMStride + kk] = M[pass * kPassRows + r][kc
// + kk] for step q's chunk (pass q / kChunksPerPass, kc = (q %
// kChunksPerPass) kChunk); the padding entries hold zeros.
template <class S>
__global__ void layout_matrix_chunks_kernel(const double2* __restrict__ matrix, double2* __restrict__ images) {
    const std::size_t total = static_cast<std::size_t>(S::kSteps) * S::kStageEntries;
    for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const int q = static_cast<int>(e / S::kStageEntries);
        const int r = static_cast<int>(e % S::kStageEntries) / S::kMStride;
        const int kk = static_cast<int>(e % S::kStageEntries) % S::kMStride;
        const int row = q / S::kChunksPerPass * S::kPassRows + r;
        const int col = q % S::kChunksPerPass * S::kChunk + kk;
        images[e] = kk < S::kChunk ? matrix[static_cast<std::size_t>(row) * S::kDim + col] : make_double2(0.0, 0.0);
    }
}

__device__ __forceinline__ void wait_parity(std::uint64_t* barrier, unsigned parity) {
    while (!cuda::ptx::mbarrier_try_wait_parity(barrier, parity)) {
    }
}

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
        int positions[kMaxTileBits];
        const int count = chunk_local_bits<S>(layout, positions);
        const int thread_bits = min(kMmaThreadBits, count);
        Index lane_offset[kVirtual];
        unsigned lane_cell[kVirtual];
#pragma unroll
        for (int v = 0; v < kVirtual; ++v) {
            const unsigned thread = lane + 32 * v;
            const unsigned l = deposit(thread & ((1u << thread_bits) - 1), positions, count);
            lane_offset[v] = thread < (1u << count) ? local_offset(layout, l) : Index(-1);  // -1: nothing to stage
            lane_cell[v] = tile_cell(layout, l, layout.tile_bits);
        }
        // (Structured bindings are captured by copy, as C++17 asks.)
        auto stage_chunk = [&, xs = xs, x_offsets = x_offsets, chunk_offset = chunk_offset,
                            x_cells = x_cells](Index base, int c) {
            const double2* from = amps + base + chunk_offset[c];
#pragma unroll
            for (int v = 0; v < kVirtual; ++v) {
                if (lane_offset[v] == Index(-1)) continue;
#pragma unroll
                for (int j = 0; j < S::kXPerThread; ++j) {
                    __pipeline_memcpy_async(x_cell<S>(xs, lane_cell[v] | x_cells[j], c),
                                            from + lane_offset[v] + x_offsets[j], sizeof(double2));
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
                const std::uint32_t bytes = L::kStageBytes;
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
    double acc_re[S::kTileCols][4], acc_im[S::kTileCols][4];
    clear_accumulators<S>(acc_re, acc_im);
    int stage = 0;
    unsigned full_parity = 0;
    Index tile = blockIdx.x;
    for (Index tile_number = 0; tile_number < my_tiles; ++tile_number, tile += stride) {
        const Index base = tile_base(layout, tile);
#pragma unroll 1
        for (int q = 0; q < S::kSteps; ++q) {
            wait_parity(full + stage, full_parity);
            if (q < S::kChunksPerPass) wait_parity(xfull + q, static_cast<unsigned>(tile_number & 1));
            multiply_chunk<S, S::kXStride>(acc_re, acc_im,
                                           ms + stage * S::kStageEntries + (warp_row0 + g) * S::kMStride + t, xs,
                                           col0 + g, (q % S::kChunksPerPass) * S::kChunk + t);
            ptx::mbarrier_arrive(empty + stage);  // every consumer thread: its reads come before the refill
            if (++stage == S::kStages) {
                stage = 0;
                full_parity ^= 1u;
            }
            if (q % S::kChunksPerPass == S::kChunksPerPass - 1) {
                store_pass<S, double>(amps, layout, base, (q / S::kChunksPerPass) * S::kPassRows, lane_row_offset,
                                      col_offset, acc_re, acc_im);
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

// The cluster form (S::kCluster blocks per tile, sm_90). Block r of a
// cluster holds X rows [row0, row0 + kRows), row0 = r kRows, in xs (indexed
// from row0), and computes Y's rows there. A step's chunk of X, held by one
// block of the cluster, is read from that block's shared memory two steps
// ahead (into registers, while the current chunk is multiplied) and stored
// into a local stage `xb` one step ahead:
//   xb[b][c * kBStride + kk] = X[kc + kk][c] for step q's chunk at kc, b =
//     q % 2, from barrier (B) of step q until barrier (B) of step q + 1.
// Cluster barriers order the tiles: (C1) after every block staged its rows
// of a tile (no block reads a peer's rows before they landed), (C2) after
// the tile's last step (no block overwrites its rows while a peer may still
// read them). Each block overwrites in global memory only the rows it
// staged itself, after (C1), so the in-place update stays safe.
template <class S, class Real>
__global__ void __launch_bounds__(kMmaThreads, S::kMinBlocks)
    apply_matrix_mma_cluster_kernel(DeviceComplex<Real>* amps, const double2* __restrict__ matrix,
                                    const __grid_constant__ TileLayout layout) {
    static_assert(S::kCluster > 1 && !S::kPrefetchX, "a cluster shape");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    const cg::cluster_group cluster = cg::this_cluster();
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const auto [xs, ms, xb, x_offsets, chunk_offset, x_cells] = MmaShared<S>(shared_bytes);

    const WarpPlace<S> place;
    const int g = place.g, t = place.t, warp_row0 = place.warp_row0, col0 = place.col0;
    const int columns = 1 << layout.num_free;  // kColumns, fewer only for small states
    const int rank = static_cast<int>(cluster.block_rank());
    const int row0 = rank * S::kRows;

    const XStaging x = make_x_staging<S>(layout, row0, x_offsets, x_cells, chunk_offset);
    Index col_offset[S::kTileCols][2];
    Index lane_row_offset[2];
    lane_offsets<S>(layout, warp_row0, col0, g, t, col_offset, lane_row_offset);

    // This thread's share of a chunk of X: elements threadIdx.x + e kMmaThreads,
    // row (within the chunk) e % kChunk, column e / kChunk.
    constexpr int kBPerThread = S::kXChunkSize / kMmaThreads;
    auto fetch_chunk = [&, xs = xs](int q, double2 (&v)[kBPerThread]) {
        const int kc = (q % S::kChunksPerPass) * S::kChunk;
        const double2* from = cluster.map_shared_rank(xs, kc / S::kRows) + (kc % S::kRows);
#pragma unroll
        for (int i = 0; i < kBPerThread; ++i) {
            const int e = i * kMmaThreads + threadIdx.x;
            v[i] = from[(e / S::kChunk) * S::kXStride + e % S::kChunk];
        }
    };
    auto put_chunk = [&, xb = xb](int b, const double2 (&v)[kBPerThread]) {
#pragma unroll
        for (int i = 0; i < kBPerThread; ++i) {
            const int e = i * kMmaThreads + threadIdx.x;
            xb[b * S::kColumns * S::kBStride + (e / S::kChunk) * S::kBStride + e % S::kChunk] = v[i];
        }
    };

    // The cluster's tiles are cluster index + i * cluster count; every block
    // of a cluster runs the same tiles. The matrix stream runs on across
    // tiles as in the one-block kernel.
    const Index clusters = gridDim.x / S::kCluster;
    Index tile = blockIdx.x / S::kCluster;  // the grid never has more clusters than tiles
    copy_first_matrix_chunks<S>(ms, matrix, row0);
    __syncthreads();  // the staging tables are complete before any thread reads them

    double acc_re[S::kTileCols][4], acc_im[S::kTileCols][4];
    clear_accumulators<S>(acc_re, acc_im);

    int stage_read = 0;
    for (; tile < layout.num_tiles; tile += clusters) {
        const bool has_next = tile + clusters < layout.num_tiles;
        const Index base = tile_base(layout, tile);
        for (int c = 0; c < S::kOwnChunks; ++c) {
            stage_x_chunk<S, Real>(xs, amps, base, c, x, x_offsets, x_cells, chunk_offset);
        }
        if (columns < S::kColumns) zero_missing_columns<S>(xs, columns);
        __pipeline_commit();
        __pipeline_wait_prior(0);  // this thread's rows of X (and the matrix chunks in flight) landed
        cluster.sync();            // (C1)
        // X chunk q + 1 is read from its block during step q - 1 and stored
        // at step q: a whole step of products hides the remote latency.
        double2 v[kBPerThread];
        fetch_chunk(0, v);
        put_chunk(0, v);
        if (S::kSteps > 1) fetch_chunk(1, v);
#pragma unroll 1
        for (int q = 0; q < S::kSteps; ++q) {
            __pipeline_wait_prior(S::kStages - 2);
            __syncthreads();  // (B) matrix chunk q and X chunk q are visible; every thread is done with the
                              //     previous step, whose matrix stage and X stage are written next
            {
                const int ahead = q + S::kStages - 1;
                const int stage_write = stage_read == 0 ? S::kStages - 1 : stage_read - 1;
                if (ahead < S::kSteps || has_next) {
                    copy_matrix_chunk<S>(ms, matrix, row0, ahead < S::kSteps ? ahead : ahead - S::kSteps,
                                         stage_write);
                }
            }
            __pipeline_commit();
            if (q + 1 < S::kSteps) put_chunk((q + 1) & 1, v);
            if (q + 2 < S::kSteps) fetch_chunk(q + 2, v);

            multiply_chunk<S, S::kBStride>(acc_re, acc_im,
                                           ms + stage_read * S::kStageEntries + (warp_row0 + g) * S::kMStride + t,
                                           xb + (q & 1) * S::kColumns * S::kBStride, col0 + g, t);
            stage_read = stage_read == S::kStages - 1 ? 0 : stage_read + 1;

            if (q % S::kChunksPerPass == S::kChunksPerPass - 1) {
                store_pass<S, Real>(amps, layout, base, row0 + (q / S::kChunksPerPass) * S::kPassRows,
                                    lane_row_offset, col_offset, acc_re, acc_im);
            }
        }
        cluster.sync();  // (C2)
    }
    __pipeline_wait_prior(0);  // only empty groups can be pending
#else
    // The dispatch runs this kernel only on sm_90 and later; the trap makes
    // a wrong dispatch loud, not silent.
    (void)amps;
    (void)matrix;
    __trap();
#endif
}

// Shapes with clusters. At k = 10 four blocks share a tile of 32 columns;
// each holds 256 rows of X (133 KiB), and the matrix's L2 traffic is 1/16
// byte per flop, as at k = 8, instead of 1/4.
//   k   cluster  columns  pass rows  chunk  stages  shared
//  10      4        32        64       16     2     194 KiB
// Measured on an H100 (double, n = 30, TFLOP/s, against the one-block
// kernel): k = 10 20.9 -> 34.1 (low targets), 20.8 -> 33.4 (high). The
// chunk of X from a peer is read two steps ahead; reading it one step ahead
// gave 25.7. Clusters of 8 with 64 columns gave 25.4, and with 32 columns
// and 32-deep chunks 32.6. At k = 9 two blocks with 32 columns gave 34.4,
// four with 32-deep chunks 33.3, against 34.8 for one block, so k = 9 stays
// on the one-block kernel.
template <int K>
using MmaClusterShape = MmaShapeOf<K, 4, 2, kDmmaDepth, 2, 1, false, 4>;

// The gate's matrix on the device. Matrix is row-major std::complex<double>:
// the same bytes as double2. The copy is queued on the stream, and the array
// goes back to the stream-ordered pool after the kernel: no synchronisation,
// so consecutive gates queue up without a host round trip.
DeviceArray<double2> device_matrix_of(const Matrix& matrix) {
    const std::size_t entries = static_cast<std::size_t>(matrix.dim()) * matrix.dim();
    DeviceArray<double2> device_matrix(entries, "the gate matrix");
    copy_to_device_async(device_matrix.data(), matrix.data(), entries * sizeof(double2));
    return device_matrix;
}

template <class S, class Real>
void launch_mma_blocks(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    const TileLayout layout = make_tile_layout(gate, S::kColumnBits);
    const auto kernel = apply_matrix_mma_kernel<S, Real>;
    allow_shared_memory(kernel, S::kSharedBytes,
                        ("the tensor-core kernel for " + std::to_string(S::kK) + " targets").c_str());
    const unsigned blocks = resident_grid(kernel, kMmaThreads, S::kSharedBytes, layout.num_tiles);
    const DeviceArray<double2> device_matrix = device_matrix_of(matrix);
    kernel<<<blocks, kMmaThreads, S::kSharedBytes>>>(as_device(amps), device_matrix.data(), layout);
    QMARG_CHECK_LAUNCH(apply_matrix_mma_kernel);
}

// The launch configuration of the cluster kernel for shape S, with a grid of
// `clusters` clusters; `attribute` must outlive it.
template <class S>
cudaLaunchConfig_t cluster_launch_config(cudaLaunchAttribute& attribute, Index clusters) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = S::kCluster;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.attrs = &attribute;
    config.numAttrs = 1;
    config.blockDim = dim3(kMmaThreads);
    config.dynamicSmemBytes = S::kSharedBytes;
    config.gridDim = dim3(static_cast<unsigned>(clusters * S::kCluster));
    return config;
}

// How many clusters of the cluster kernel for shape S the current GPU holds
// at once: 0 where it cannot run one (before sm_90, which has no clusters, or
// where no GPU processing cluster has S::kCluster free multiprocessors).
template <class S, class Real>
int resident_mma_clusters() {
    if (compute_capability_major() < 9) return 0;
    const auto kernel = apply_matrix_mma_cluster_kernel<S, Real>;
    allow_shared_memory(kernel, S::kSharedBytes,
                        ("the tensor-core cluster kernel for " + std::to_string(S::kK) + " targets").c_str());
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config = cluster_launch_config<S>(attribute, 1);
    int clusters = 0;
    QMARG_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    return clusters;
}

template <class S, class Real>
void launch_mma_clusters(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix,
                         int resident_clusters) {
    const TileLayout layout = make_tile_layout(gate, S::kColumnBits);
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config =
        cluster_launch_config<S>(attribute, std::min<Index>(layout.num_tiles, resident_clusters));
    const DeviceArray<double2> device_matrix = device_matrix_of(matrix);
    QMARG_CUDA_CHECK(cudaLaunchKernelEx(&config, apply_matrix_mma_cluster_kernel<S, Real>, as_device(amps),
                                        static_cast<const double2*>(device_matrix.data()), layout));
    QMARG_CHECK_LAUNCH(apply_matrix_mma_cluster_kernel);
}

// The producer-warp shape (k = 9, double states, from sm_90 on): the
// one-block kernel's shape. At k = 8 (32-deep chunks) the library's two
// forms were level in one run (39.4 against 40.4 TFLOP/s on low targets,
// 38.3 against 36.5 on high ones), so k = 8 keeps the one-block kernel,
// which float states need anyway.
template <int K>
using MmaProducerShape = MmaShapeOf<K, 8, 2, kDmmaDepth, 2, 1, false>;

template <class S>
void launch_mma_producer(std::complex<double>* amps, const GateQubits& gate, const Matrix& matrix) {
    using L = ProducerLayout<S>;
    const TileLayout layout = make_tile_layout(gate, S::kColumnBits);
    const auto kernel = apply_matrix_mma_producer_kernel<S>;
    allow_shared_memory(kernel, L::kSharedBytes,
                        ("the tensor-core producer-warp kernel for " + std::to_string(S::kK) + " targets").c_str());
    const unsigned blocks = resident_grid(kernel, L::kThreads, L::kSharedBytes, layout.num_tiles);
    const DeviceArray<double2> device_matrix = device_matrix_of(matrix);
    const std::size_t image_entries = static_cast<std::size_t>(S::kSteps) * S::kStageEntries;
    const DeviceArray<double2> images(image_entries, "the gate matrix laid out chunk by chunk");
    layout_matrix_chunks_kernel<S>
        <<<grid_stride_blocks(static_cast<Index>(image_entries), 256), 256>>>(device_matrix.data(), images.data());
    QMARG_CHECK_LAUNCH(layout_matrix_chunks_kernel);
    kernel<<<blocks, L::kThreads, L::kSharedBytes>>>(as_device(amps), images.data(), layout);
    QMARG_CHECK_LAUNCH(apply_matrix_mma_producer_kernel);
}

// k = 10 runs on clusters wherever the GPU can hold one, and k = 9 of a
// double state on the producer-warp kernel from sm_90 on (a float state's X
// is widened as it is staged, which the producer's copies cannot do);
// everything else, and all of it before sm_90, on the one-block kernel.
template <int K, class Real>
void launch_mma(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    if constexpr (K == 10) {
        const int clusters = resident_mma_clusters<MmaClusterShape<K>, Real>();
        if (clusters > 0) return launch_mma_clusters<MmaClusterShape<K>, Real>(amps, gate, matrix, clusters);
    }
    if constexpr (K == 9 && std::is_same<Real, double>::value) {
        if (compute_capability_major() >= 9) return launch_mma_producer<MmaProducerShape<K>>(amps, gate, matrix);
    }
    launch_mma_blocks<MmaShape<K>, Real>(amps, gate, matrix);
}

// c (16 x 8) = a (16 x 16) * b (16 x 8) by one warp through the fragment
// helpers, every element placed and read back by its documented position.
__global__ void dmma_fragment_product_kernel(const double* a, const double* b, double* c) {
    const int lane = threadIdx.x;
    double fa[8], fb[4], fc[4] = {0.0, 0.0, 0.0, 0.0};
    for (int i = 0; i < 8; ++i) fa[i] = a[dmma_a_row(lane, i) * kDmmaDepth + dmma_a_col(lane, i)];
    for (int i = 0; i < 4; ++i) fb[i] = b[dmma_b_row(lane, i) * kDmmaCols + dmma_b_col(lane)];
    dmma_16x8x16(fc, fa, fb);
    for (int i = 0; i < 4; ++i) c[dmma_c_row(lane, i) * kDmmaCols + dmma_c_col(lane, i)] = fc[i];
}

}  // namespace

bool mma_available() { return compute_capability_major() >= 8; }

namespace {

// Calls launch(std::integral_constant<int, K>()) for K = gate.num_targets.
template <class Launch>
void for_targets(const GateQubits& gate, const char* what, Launch launch) {
    switch (gate.num_targets) {
        case 4: return launch(std::integral_constant<int, 4>());
        case 5: return launch(std::integral_constant<int, 5>());
        case 6: return launch(std::integral_constant<int, 6>());
        case 7: return launch(std::integral_constant<int, 7>());
        case 8: return launch(std::integral_constant<int, 8>());
        case 9: return launch(std::integral_constant<int, 9>());
        case 10: return launch(std::integral_constant<int, 10>());
        default:
            throw Error(std::string(what) + ": " + std::to_string(gate.num_targets) + " targets; this path takes 4.." +
                        std::to_string(kMaxGateTargets));
    }
}

}  // namespace

template <class Real>
void apply_matrix_mma(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    for_targets(gate, "apply_matrix_mma", [&](auto k) { launch_mma<decltype(k)::value, Real>(amps, gate, matrix); });
}
template void apply_matrix_mma<float>(std::complex<float>*, const GateQubits&, const Matrix&);
template void apply_matrix_mma<double>(std::complex<double>*, const GateQubits&, const Matrix&);

template <class Real>
void apply_matrix_mma_one_block(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    for_targets(gate, "apply_matrix_mma_one_block", [&](auto k) {
        launch_mma_blocks<MmaShape<decltype(k)::value>, Real>(amps, gate, matrix);
    });
}
template void apply_matrix_mma_one_block<float>(std::complex<float>*, const GateQubits&, const Matrix&);
template void apply_matrix_mma_one_block<double>(std::complex<double>*, const GateQubits&, const Matrix&);

std::vector<double> dmma_fragment_product(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != kDmmaRows * kDmmaDepth || b.size() != kDmmaDepth * kDmmaCols) {
        throw Error("dmma_fragment_product: a must be 16 x 16 and b 16 x 8, row-major (got " +
                    std::to_string(a.size()) + " and " + std::to_string(b.size()) + " entries)");
    }
    if (!mma_available()) throw Error("dmma_fragment_product: FP64 tensor-core products need compute capability 8.0");
    DeviceArray<double> da(a.size(), "fragment check A"), db(b.size(), "fragment check B"),
        dc(kDmmaRows * kDmmaCols, "fragment check C");
    copy_to_device(da.data(), a.data(), a.size() * sizeof(double));
    copy_to_device(db.data(), b.data(), b.size() * sizeof(double));
    dmma_fragment_product_kernel<<<1, 32>>>(da.data(), db.data(), dc.data());
    QMARG_CHECK_LAUNCH(dmma_fragment_product_kernel);
    std::vector<double> c(kDmmaRows * kDmmaCols);
    copy_to_host(c.data(), dc.data(), c.size() * sizeof(double));
    return c;
}

}  // namespace gpu
}  // namespace qmarg
