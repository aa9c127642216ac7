// The parts the tensor-core gate kernels share: the block shape, the matrix
// stream, the X tile's staging tables, the product of one chunk and the
// store of a finished pass. cuda/apply_matrix_mma.cu describes the design
// and holds the one-block kernel; apply_matrix_mma_cluster.cu holds the
// sm_90 form on clusters. For .cu files only.
#pragma once

#include <cuda_pipeline_primitives.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
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

// The sm_90 form, for the dispatch in apply_matrix_mma.cu: k = 9 or 10 on
// clusters of blocks, at k = 10 with a companion grid on the
// multiprocessors they leave idle (any other k is an Error). False, with
// nothing run, where the GPU cannot hold one cluster (before sm_90, or no
// processing cluster with enough free multiprocessors).
template <class Real>
bool apply_matrix_mma_on_clusters(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix);

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
//   RawX       (float states, k = 4, 5: apply_matrix_mma_raw_kernel) the
//              stages hold the whole matrix, and the next kRawTiles tiles are
//              copied by cp.async as stored (8 bytes an amplitude), each
//              widened into X's layout when its turn comes (issue_raw_x)
//   RawChunk   (float states, with PrefetchX) each prefetched chunk of X is
//              copied by cp.async as stored into a one-chunk buffer and
//              widened one step later, instead of travelling through
//              registers (PendingXChunk; issue_raw_chunk)
//   XSlots     (double states: apply_matrix_mma_ring_kernel) X tiles held in
//              shared memory: the stages hold the whole matrix, one slot
//              holds the tile being multiplied and the others the next
//              tiles, copied by cp.async straight into X's layout
//   DirectA    (warps stacked along the rows: each matrix entry feeds one
//              warp row) no matrix stages: each lane loads its A fragments
//              from L2 into registers a step ahead (MatrixFragments), from
//              images in fragment order (make_fragment_images_kernel);
//              Stages then counts only the X prefetch's commit groups
template <int K, int WarpRows, int TileCols, int Chunk, int Stages, int MinBlocks, bool PrefetchX, int Cluster = 1,
          bool RawX = false, bool RawChunk = false, int XSlots = 1, bool DirectA = false>
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
    // A matrix stage holds the pass's rows in pairs (row g and g + 8 of each
    // 16-row block, pair 8 * block + g) and each pair's chunk as kChunk
    // units of (Re M, Re M) and then kChunk units of (Im M, Im M), one
    // 16-byte unit per column: kPairStride units a pair (make_matrix_images).
    static constexpr int kPairStride = 2 * kChunk + 4;
    static constexpr int kXStride = kRows + 4;
    static constexpr int kBStride = kChunk + 4;
    static constexpr int kPasses = kRows / kPassRows;
    static constexpr int kChunksPerPass = kDim / kChunk;  // a pass multiplies all D rows of X
    static constexpr int kOwnChunks = kRows / kChunk;     // chunks of X rows a block holds
    static constexpr int kSteps = kPasses * kChunksPerPass;
    static constexpr bool kDirectA = DirectA;
    static constexpr int kChunkEntries = kPassRows * kChunk;           // the stage's units that hold data
    static constexpr int kStageEntries = kPassRows / 2 * kPairStride;  // 16-byte units, padding included
    static constexpr int kMatrixStages = kDirectA ? 0 : kStages;       // stages in shared memory
    // A warp's A fragments for one step, in 16-byte units (DirectA).
    static constexpr int kFragmentEntries = kChunk / 8 * 4 * 32;
    // One block's images of one step (matrix_images: a stage image, or every
    // warp row's fragments for DirectA), and all of them: every step's, for
    // every block of a cluster (block r's from r * kSteps * kStepImageEntries).
    static constexpr int kStepImageEntries = kDirectA ? kWarpRows * kFragmentEntries : kStageEntries;
    static constexpr std::size_t kImageEntries = static_cast<std::size_t>(kCluster) * kSteps * kStepImageEntries;
    static constexpr int kMinBlocks = MinBlocks;
    static constexpr bool kPrefetchX = PrefetchX;
    static constexpr bool kRawX = RawX;
    static constexpr bool kRawChunk = RawChunk;
    static constexpr int kXSlots = XSlots;
    static constexpr int kXSlotEntries = kColumns * kXStride;  // 16-byte units of one X tile
    // X is staged kChunk rows at a time: kChunk * kColumns amplitudes, local
    // index j * kMmaThreads + threadIdx.x of them for thread threadIdx.x.
    static constexpr int kXChunkSize = kChunk * kColumns;
    static constexpr int kXPerThread = kXChunkSize > kMmaThreads ? kXChunkSize / kMmaThreads : 1;
    // With a cluster, the step's chunk of X (kChunk rows x kColumns, from the
    // block that holds it) is copied into one of two local stages first.
    static constexpr int kBStages = kCluster > 1 ? 2 : 0;
    // RawX: the next tiles' amplitudes as float2, tile slot s's element j
    // of chunk c for thread i at raw[s * kRawTileEntries + (c * kXPerThread
    // + j) * kMmaThreads + i]; RawChunk: one chunk, element j of thread i at
    // raw[j * kMmaThreads + i].
    static constexpr int kRawTiles = kRawX ? 2 : 0;
    static constexpr int kRawTileEntries = kOwnChunks * kXPerThread * kMmaThreads;
    static constexpr int kRawEntries = kRawX ? kRawTiles * kRawTileEntries : kRawChunk ? kXPerThread * kMmaThreads : 0;
    // The cluster kernel's two slots for the next unit of work it runs
    // (apply_matrix_mma_cluster_kernel).
    static constexpr int kUnitSlots = kCluster > 1 ? 2 : 0;
    // DirectA shapes: the split barrier of a tile's last pass (one 8-byte
    // mbarrier; x_barrier_step in apply_matrix_mma.cu).
    static constexpr int kSplitBarriers = kDirectA ? 1 : 0;
    static constexpr std::size_t kSharedBytes =
        (static_cast<std::size_t>(kXSlots) * kXSlotEntries + static_cast<std::size_t>(kMatrixStages) * kStageEntries +
         static_cast<std::size_t>(kBStages) * kColumns * kBStride) *
            sizeof(double2) +
        static_cast<std::size_t>(kRawEntries) * 2 * sizeof(float) + kXPerThread * (sizeof(Index) + sizeof(unsigned)) +
        (kOwnChunks + kUnitSlots + kSplitBarriers) * sizeof(Index);

    static_assert(K >= 4 && K <= kMaxGateTargets, "the DMMA path takes 4..10 targets");
    static_assert(kWarpRows * kWarpCols * 32 == kMmaThreads, "8 warps");
    static_assert(kColumns == (1 << kColumnBits) && kChunk == (1 << kChunkBits), "powers of two");
    static_assert(kChunk % kDmmaDepth == 0 && kChunk <= kRows, "a chunk is whole DMMA depths, held by one block");
    static_assert(kPassRows <= kRows && kRows % kPassRows == 0, "passes tile the block's rows");
    static_assert(kCluster == 1 || kXChunkSize % kMmaThreads == 0, "every thread copies the same share of X");
    static_assert(kPairStride % 8 == 4 && kXStride % 8 == 4 && kBStride % 8 == 4,
                  "strides keep fragment loads free of bank conflicts");
    static_assert(kChunkEntries % kMmaThreads == 0, "every thread copies the same number of matrix units");
    static_assert(!kPrefetchX || (kCluster == 1 && kChunksPerPass >= kStages + 1),
                  "a prefetched chunk of X must land before the next tile's products read it");
    static_assert(!kRawX || (kCluster == 1 && !kPrefetchX && kStages == kSteps),
                  "a one-block shape whose stages hold the whole matrix");
    // The raw chunk copied at step q is widened at step q + 1, after that
    // step's __pipeline_wait_prior(kStages - 2), which completes step q's
    // group only with two stages (with three, float k = 7 gave wrong
    // amplitudes on an H100).
    static_assert(!kRawChunk || (kPrefetchX && kStages == 2), "the raw chunk carries the X prefetch, two stages");
    static_assert(kXSlots >= 1 && (kXSlots == 1 || (kCluster == 1 && !kPrefetchX && !kRawX && kStages == kSteps)),
                  "a ring of X tiles beside the whole matrix, one block");
    static_assert(!kDirectA || (!kRawX && kXSlots == 1 && (kCluster > 1 || (kPrefetchX && kStages <= 3))),
                  "fragments from L2 in the one-block kernel's prefetching shapes or the cluster kernel");
    static_assert(!kDirectA || kImageEntries == static_cast<std::size_t>(kDim) * kDim,
                  "fragment images hold each matrix entry once");
    static_assert(kSharedBytes <= 227 * 1024, "fits an H100 block's shared memory");
};

// Moves the two lowest free qubits of a tile to column bits 1 and 2 and the
// third to column bit 0 (make_tile_layout puts them on bits 0, 1, 2), for
// double states. A lane's accumulators hold columns 2t + h (MmaAccumulators),
// so one store instruction of a warp writes columns 2t + h, t = 0..3, of 8
// rows: with the lowest free qubits on column bits 1 and 2 those are 4
// neighbouring amplitudes of each row wherever qubits 0 and 1 are free (high
// targets), 64 bytes, two whole sectors, where the ascending order wrote
// every other amplitude and half of each sector it touched. Nothing else
// depends on the order: the staging tables, the columns' offsets and the
// staged cells all follow local_role and free_stride. Measured on an H100
// (double, n = 30, fraction of the floor, two runs each, alternating with
// the ascending order and, at k = 8, its lanes trading amplitudes by shuffles
// to fill sectors, which this replaced): high targets k = 5 1.01 -> 1.10, k =
// 6 0.81 -> 0.87, k = 7 0.69 -> 0.73, k = 8 0.81 -> 0.82, k = 9 0.78 -> 0.79,
// k = 10 0.76 -> 0.77; scattered k = 6 0.81 -> 0.87, k = 7 0.65 -> 0.68, k =
// 9 0.75 -> 0.79, k = 10 0.75 -> 0.76, k = 5 1.15 -> 1.13; low targets level.
// Float states keep the ascending order: their staging puts free bit 0 among
// a warp's lanes (chunk_local_bits), which would then no longer be qubit 0
// and would split the warp's loads, and pair_stores fill their sectors.
inline void move_low_free_qubits_to_lane_columns(TileLayout& layout) {
    if (layout.num_free < 3) return;
    constexpr int kColumnBit[3] = {1, 2, 0};  // of free bits 0, 1, 2
    const Index stride[3] = {layout.free_stride[0], layout.free_stride[1], layout.free_stride[2]};
    for (int f = 0; f < 3; ++f) layout.free_stride[kColumnBit[f]] = stride[f];
    for (int p = 0; p < layout.tile_bits; ++p) {
        const int role = layout.local_role[p];
        if (role < 0 && -1 - role < 3) layout.local_role[p] = -1 - kColumnBit[-1 - role];
    }
}

// Bit j of an ascending-order matrix index is bit source_bit[j] of the
// caller's: target j of ascending_targets is the caller's targets[source_bit[j]].
struct TargetOrder {
    int source_bit[kMaxGateTargets] = {};
};

inline TargetOrder target_order(const GateQubits& gate) {
    TargetOrder order;
    for (int j = 0; j < gate.num_targets; ++j) order.source_bit[j] = j;
    std::sort(order.source_bit, order.source_bit + gate.num_targets,
              [&](int a, int b) { return gate.targets[a] < gate.targets[b]; });
    return order;
}

// The tensor-core kernels take a gate's targets in ascending order, whatever
// the caller's order: row bit j of their matrix is the j-th lowest target, and
// the matrix images are permuted to match (TargetOrder). A lane's rows g and
// g + 8 then put the lowest targets on the bits a warp's store spreads over,
// so low targets in descending order store the same neighbouring amplitudes
// as in ascending order. In the caller's order, descending low targets put
// the highest target on row bit 0 and every 16-byte store in a sector of its
// own: double k = 7, n = 30 took 44.2 ms on targets 6..0 against 22.6 ms
// now (H100), and the benchmark's scattered targets, in random order, gained
// 14 % at double k = 7 and 2 to 7 % at k = 9, 10 and float k = 7, 9, 10
// (bench/results/README.md).
//
// ascending_targets is the gate with its targets (and their strides) in
// target_order's order: a launcher computes the order once and hands it to
// both the layout and the images.
inline GateQubits ascending_targets(const GateQubits& gate, const TargetOrder& order) {
    GateQubits sorted = gate;
    for (int j = 0; j < gate.num_targets; ++j) {
        sorted.targets[j] = gate.targets[order.source_bit[j]];
        sorted.target_stride[j] = gate.target_stride[order.source_bit[j]];
    }
    return sorted;
}

// The caller's matrix index of ascending-order index `index` (K targets).
template <int K>
__device__ __forceinline__ int caller_index(const TargetOrder& order, int index) {
    int caller = 0;
#pragma unroll
    for (int j = 0; j < K; ++j) caller |= ((index >> j) & 1) << order.source_bit[j];
    return caller;
}

// The tile layout of the tensor-core kernels (one-block and cluster) for a
// state of Real: make_tile_layout's for the gate's targets in ascending
// order (order = target_order(gate)), with a double state's columns
// reordered as above.
template <class Real>
TileLayout mma_tile_layout(const GateQubits& gate, const TargetOrder& order, int column_bits) {
    TileLayout layout = make_tile_layout(ascending_targets(gate, order), column_bits);
    if constexpr (std::is_same<Real, double>::value) move_low_free_qubits_to_lane_columns(layout);
    return layout;
}

// Issues the copy of step q's matrix stage image (make_matrix_images) into
// stage `stage`: the kChunkEntries units that hold data, 2 kChunk contiguous
// units a row pair, neighbouring threads on neighbouring units (the padding
// is never read). The copies bypass L1: caching them there, so that the two
// blocks of a multiprocessor could share a chunk at k <= 7, measured 2 to 6 %
// slower at k = 6, 7 and 14 % at k = 8 (double, n = 30). Bulk copies (one per
// row pair, issued by warp 0 after the step's barrier and awaited on an
// mbarrier, each thread fencing its reads against the async proxy) measured
// 8 to 22 % slower at k = 6..8 in double and up to 23 % in float; one bulk
// copy of the whole stage (padding included) by one thread gained 1 to 3 % at
// k = 7, 8 and lost 1.5 % at k = 6, not enough for a second copy path. The
// same against the shapes of `d7071f8` (n = 30 double, 28 float, two runs
// each, alternating, every layout; ptxas freed 20 to 35 registers at k = 7,
// 8): double k = 7, 8 1 to 2 % slower, k = 5, 6 5 to 12 % slower, float k = 7
// 5 to 8 % slower, float k = 8 3 % faster. Every kernel issues a step's
// copies right after its barrier, before its products (but the X prefetch
// of double k = 7, 8, after them behind a split barrier: x_barrier_step in
// apply_matrix_mma.cu): issued after the first half of the products instead
// (the X prefetch and the cluster form's X exchange too), so that the DMMAs
// start sooner, they cost 1 to 6 % at double k = 6..10 (n = 30, three
// layouts, two runs each, alternating), under a barrier at every step.
template <class S>
__device__ __forceinline__ void copy_matrix_chunk(double2* ms, const double2* images, int q, int stage) {
    double2* dst = ms + stage * S::kStageEntries;
    const double2* src = images + static_cast<std::size_t>(q) * S::kStageEntries;
#pragma unroll
    for (int s = 0; s < S::kChunkEntries / kMmaThreads; ++s) {
        const int e = s * kMmaThreads + threadIdx.x;
        const int unit = e / (2 * S::kChunk) * S::kPairStride + e % (2 * S::kChunk);
        __pipeline_memcpy_async(dst + unit, src + unit, sizeof(double2));
    }
}

// The prologue of the matrix stream: chunks 0 .. kStages - 2 into stages 0
// .. kStages - 2, one commit group each.
template <class S>
__device__ __forceinline__ void copy_first_matrix_chunks(double2* ms, const double2* images) {
#pragma unroll
    for (int q = 0; q < S::kStages - 1; ++q) {
        if (q < S::kSteps) copy_matrix_chunk<S>(ms, images, q, q);
        __pipeline_commit();
    }
}

// The dynamic shared memory of the kernels, in the order kSharedBytes counts
// it: the X tile (kXSlots of them in the ring kernel), the matrix stages, the cluster form's X stages (none
// elsewhere), the raw copies of X (RawX and RawChunk shapes only), the staging
// tables with the cluster form's unit slots and the DirectA shapes' split
// barrier among them. The kernels keep no
// static shared memory: 16 bytes of it, which put this region 16 bytes
// further on, made the cluster kernel 12 % slower (H100, double n = 30, k =
// 9, two runs each, alternating: 93.7 -> 105.5 ms).
template <class S>
struct MmaShared {
    double2* xs;
    double2* ms;
    double2* xb;
    float2* raw;
    Index* x_offsets;
    Index* chunk_offset;
    unsigned* x_cells;
    __device__ explicit MmaShared(unsigned char* bytes)
        : xs(reinterpret_cast<double2*>(bytes)),
          ms(xs + S::kXSlots * S::kXSlotEntries),
          xb(ms + S::kMatrixStages * S::kStageEntries),
          raw(reinterpret_cast<float2*>(xb + S::kBStages * S::kColumns * S::kBStride)),
          x_offsets(reinterpret_cast<Index*>(raw + S::kRawEntries)),
          chunk_offset(x_offsets + S::kXPerThread),
          x_cells(reinterpret_cast<unsigned*>(chunk_offset + S::kOwnChunks + S::kUnitSlots + S::kSplitBarriers)) {}
    // The cluster kernel's unit slots (S::kUnitSlots of them).
    __device__ Index* unit_slots() const { return chunk_offset + S::kOwnChunks; }
    // The DirectA shapes' split barrier (S::kSplitBarriers of them).
    __device__ std::uint64_t* split_barrier() const {
        return reinterpret_cast<std::uint64_t*>(chunk_offset + S::kOwnChunks + S::kUnitSlots);
    }
};

// The cell of a staging-table entry that repeats an earlier one (small
// states): nothing is staged for it. Repeated stores of the same value by one
// thread would do no harm, but two cp.async of one thread into one address
// are not ordered (compute-sanitizer racecheck reports them as write-write
// hazards).
constexpr unsigned kRepeatedCell = ~0u;

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

// This thread's first amplitude of the block's own chunk c of the tile at
// `base`; its amplitudes of the chunk are at offsets[j] from it.
template <class V>
__device__ __forceinline__ const V* x_chunk_source(const V* amps, Index base, int c, const XStaging& x,
                                                   const Index* chunk_offset) {
    return amps + base + chunk_offset[c] + x.thread_offset;
}

// Whether the threads stage X in bank order (chunk_local_bits): a float
// state's X in the one-block kernel, where each thread stores its widened
// amplitudes into shared memory itself and waits on those stores' wavefronts.
// A double state's X travels by cp.async; the same order measured level
// there, slightly behind on high and scattered targets (k = 6..8, 0.97 to
// 1.02 of the ascending order's speed; before x_real_slot's swizzle, which
// took those copies from 16 wavefronts to 4). The cluster kernels (k = 9,
// 10), which stage a whole tile at once, lost 2 to 7 % with it in both
// precisions.
template <class S, class Real>
constexpr bool x_bank_order() {
    return S::kCluster == 1 && std::is_same<Real, float>::value;
}

// The local bits that vary within a chunk (every free bit and the target bits
// of the row's low kChunkBits bits), in the order the threads take them;
// their number is returned. In ascending order a warp on high targets stages
// 32 columns of one row of X: in x_real_slot's layout a column's rows 8 b ..
// 8 b + 7 are one 64-byte run (banks 0..15 or 16..31), and kXStride % 8 == 4
// moves column c + 1 by 16 banks but c + 2 by none, so without its swizzle
// those 32 lanes fell on 4 banks, 16 wavefronts a store; with it they fall
// on 16 banks, 4 wavefronts (x_real_slot). In bank order the threads take
// row bits 0..2 and free bit 0 first, the rest ascending: any warp's 32
// lanes then write 16 distinct 8-byte bank slots twice, two wavefronts, the
// fewest for 256 bytes. On low targets both orders are the same; on high
// ones a warp loads 8 runs of 4 neighbouring amplitudes instead of one of
// 32 (the same sectors). Measured on an H100 (float, n = 28, fraction of
// the floor, two runs each, alternating with the ascending order, before
// the swizzle): k = 6 high and scattered
// 0.66-0.67 -> 0.73-0.76, k = 7 high 0.80-0.81 -> 0.83-0.85, k = 8 high and
// scattered 0.83-0.84 -> 0.87-0.90, low targets level, k = 7 scattered
// 0.83-0.84 -> 0.82 (pair_stores below adds to these).
template <class S, bool kBankOrder>
__device__ inline int chunk_local_bits(const TileLayout& layout, int* positions) {
    const auto varies = [&](int role) { return role < 0 || role < S::kChunkBits; };
    const auto first = [&](int role) { return kBankOrder && (role == -1 || (role >= 0 && role < 3)); };
    int count = 0;
    for (int p = 0; p < layout.tile_bits; ++p) {
        if (first(layout.local_role[p])) positions[count++] = p;
    }
    for (int p = 0; p < layout.tile_bits; ++p) {
        const int role = layout.local_role[p];
        if (varies(role) && !first(role)) positions[count++] = p;
    }
    return count;
}

// Global offset (from a tile's base) of matrix row `row` of a gate with k
// targets: the target strides of its set bits.
__device__ __forceinline__ Index target_offset(const TileLayout& layout, unsigned row, int k) {
    Index offset = 0;
    for (int b = 0; b < k; ++b) {
        if ((row >> b) & 1u) offset += layout.target_stride[b];
    }
    return offset;
}
template <class S>
__device__ __forceinline__ Index target_offset(const TileLayout& layout, unsigned row) {
    return target_offset(layout, row, S::kK);
}

// Global offset (from a tile's base) of column `col`, the free strides of its
// set bits; Index(-1) for a column a small state lacks.
__device__ __forceinline__ Index column_offset(const TileLayout& layout, int col) {
    if (col >= (1 << layout.num_free)) return Index(-1);
    Index offset = 0;
    for (int f = 0; f < layout.num_free; ++f) {
        if ((col >> f) & 1) offset += layout.free_stride[f];
    }
    return offset;
}

// Fills the block's tables (`offsets`, `cells`, `chunk_offset`; read after a
// __syncthreads) and returns this thread's part. Chunk element i's local
// index holds i's bits at the chunk's varying positions, in chunk_local_bits's
// order; the thread takes the low kMmaThreadBits of them, the tables the rest.
template <class S, class Real>
__device__ inline XStaging make_x_staging(const TileLayout& layout, int row0, Index* offsets, unsigned* cells,
                                          Index* chunk_offset) {
    int positions[kMaxTileBits];
    const int count = chunk_local_bits<S, x_bank_order<S, Real>()>(layout, positions);  // kChunkBits + num_free
    const int thread_bits = min(kMmaThreadBits, count);
    // A chunk of a small state (fewer free qubits than kColumnBits) has fewer
    // than kXPerThread elements per thread, and the j beyond them would name
    // the same cells again: their cells are kRepeatedCell.
    const int distinct = count > thread_bits ? 1 << (count - thread_bits) : 1;
    for (int j = threadIdx.x; j < S::kXPerThread; j += kMmaThreads) {
        const unsigned l =
            static_cast<unsigned>(scatter_bits(static_cast<unsigned>(j) << thread_bits, positions, count));
        offsets[j] = local_offset(layout, l);
        cells[j] = j < distinct ? tile_cell(layout, l, layout.tile_bits) : kRepeatedCell;
    }
    for (int c = threadIdx.x; c < S::kOwnChunks; c += kMmaThreads) {
        const unsigned row = static_cast<unsigned>(row0) + (static_cast<unsigned>(c) << S::kChunkBits);
        chunk_offset[c] = target_offset<S>(layout, row);
    }
    const unsigned thread = threadIdx.x;
    const unsigned l = static_cast<unsigned>(scatter_bits(thread & ((1u << thread_bits) - 1), positions, count));
    XStaging x;
    x.thread_offset = local_offset(layout, l);
    x.thread_cell = tile_cell(layout, l, layout.tile_bits);
    x.active = thread < (1u << count);
    return x;
}

// X's layout in shared memory: column c's rows at xs + c * kXStride, in
// blocks of 8 rows (8 units, 16 doubles) that hold the B fragments of
// multiply_chunk as loaded: unit t (t < 4) holds (Re X[t], Re X[t + 4]) of
// the block's rows and unit 4 + t their imaginary parts. x_real_slot gives
// the real part's double of the X cell (column << 16 | row) for rows of the
// block's own chunk c; the imaginary part is kXImagOffset doubles on.
// Whole amplitudes did not pay here: X as (Re X, Im X) units, each copied
// by one 16-byte cp.async (.cg, past L1), with every 16 x 8 x 8 product
// split into two m16n8k4 ones (their B fragment one double, fed by the
// loaded units without register moves), was correct and slower from k = 5
// on (double n = 30 on an H100, fraction of the floor, alternating): k = 7
// 0.84-0.86 -> 0.74-0.81, k = 8 0.94-0.96 -> 0.86-0.90, k = 5 on high
// targets 0.91 -> 0.73. Each half alone lost too: the split products on
// this layout 6 to 20 %, also with each slice's first halves all issued
// before its second halves; whole amplitudes with m16n8k8 products 3 to
// 23 %, most on high targets, also with each column's rows swizzled so that
// the 16-byte copies of a warp fall on distinct bank groups. The table is
// in bench/results/README.md ("X as whole amplitudes").
//
// Within each block, column c's real units (and its imaginary units) are
// permuted: the pair of rows t, t + 4 sits in unit t ^ x_swizzle(c). A warp
// that stages one row of X over 32 columns (targets above the tile's free
// bits: high ones) writes 8-byte copies whose column stride, kXStride % 8
// == 4 units, moves by 64 bytes and back, so without the swizzle its 32
// lanes hit two 16-byte bank groups: 16 wavefronts a copy instruction. With
// it they spread over eight: 4 wavefronts. Columns 2 i and 2 i + 1 share a
// swizzle, so a quarter warp's B-fragment load (columns g = 2 i, 2 i + 1,
// units t of each) still hits 8 distinct groups, and the swizzle is a
// lane's constant (x_lane_unit): no instruction in the steps. Low targets,
// whose warps stage 16 rows of two neighbouring columns, keep their 2
// wavefronts, and the bank order below its 2. Measured on an H100 (ncu,
// double n = 26, k = 6 high targets, clocks as found: 1.95 GHz): 917 ->
// 833 us, L1 busy 77 -> 60 %, DRAM 69 -> 76 % of its peak (low targets 844
// and 841 us). Double n = 30, fraction of the floor, two runs each,
// alternating: k = 6 high 0.70 -> 0.75-0.76, scattered 0.69-0.70 -> 0.76,
// k = 9 high 0.92-0.93 -> 0.94-0.95, k = 10 high 0.96 -> 0.97, k = 5, 7 and
// 8 high and scattered 0 to 1 % faster; low, descending and float level
// (bench/results/README.md, "X swizzled by column").
constexpr int kXImagOffset = 8;
__device__ __forceinline__ unsigned x_swizzle(unsigned column) { return (column >> 1) & 3u; }
template <class S>
__device__ __forceinline__ double* x_real_slot(double2* xs, unsigned cell, int c) {
    const unsigned column = cell >> 16;
    const unsigned row = (cell & 0xffffu) + static_cast<unsigned>(c * S::kChunk);
    const unsigned unit = (row & ~7u) | ((row ^ x_swizzle(column)) & 3u);
    return reinterpret_cast<double*>(xs + column * S::kXStride + unit) + ((row >> 2) & 1u);
}

// The unit (from a block's first) of column `column` from which lane t
// loads its B fragments (multiply_chunk's `row`, less the chunk's first
// row): rows t and t + 4, swizzled as x_real_slot places them.
__device__ __forceinline__ int x_lane_unit(int column, int t) { return t ^ static_cast<int>(x_swizzle(column)); }

// Copies the amplitude at `from` into its X cell: two 8-byte cp.async, in
// the caller's next commit group.
template <class S>
__device__ __forceinline__ void copy_x_async(double2* xs, unsigned cell, int c, const double2* from) {
    double* re = x_real_slot<S>(xs, cell, c);
    __pipeline_memcpy_async(re, &from->x, sizeof(double));
    __pipeline_memcpy_async(re + kXImagOffset, &from->y, sizeof(double));
}

// Stores an amplitude (float2 widened, or double2) into its X cell.
template <class S, class V>
__device__ __forceinline__ void put_x(double2* xs, unsigned cell, int c, V v) {
    double* re = x_real_slot<S>(xs, cell, c);
    re[0] = v.x;
    re[kXImagOffset] = v.y;
}

// Stages the block's own chunk c of the tile at `base` into xs: double
// amplitudes by cp.async (they join the caller's next commit group), float
// ones loaded, widened and stored (visible after the next barrier). Only a
// state of one tile can have repeated entries (kRepeatedCell): kMayRepeat
// (here and in store_x_chunk) skips them, and the callers that stage tiles
// of larger states leave it off, so that the kernel's steps carry no test
// (with the test everywhere, ptxas spilled 8 more bytes in the double k = 7
// kernel).
template <class S, class Real, bool kMayRepeat>
__device__ __forceinline__ void stage_x_chunk(double2* xs, const DeviceComplex<Real>* amps, Index base, int c,
                                              const XStaging& x, const Index* offsets, const unsigned* cells,
                                              const Index* chunk_offset) {
    if (!x.active) return;
    const DeviceComplex<Real>* from = x_chunk_source(amps, base, c, x, chunk_offset);
#pragma unroll
    for (int j = 0; j < S::kXPerThread; ++j) {
        if (kMayRepeat && cells[j] == kRepeatedCell) continue;
        if constexpr (std::is_same<Real, double>::value) {
            copy_x_async<S>(xs, x.thread_cell | cells[j], c, from + offsets[j]);
        } else {
            put_x<S>(xs, x.thread_cell | cells[j], c, from[offsets[j]]);
        }
    }
}

// stage_x_chunk for the one-block kernel's X prefetch (a double state's
// chunks of tiles of large states), with all the thread's table entries read
// before its first copy. In stage_x_chunk each copy's addresses wait for its
// own entries, and the compiler keeps the next entries' reads behind that
// copy (it might write them): a chain of shared-memory latencies per
// element, which the threads ran right after the step's barrier, the DMMA
// pipe idle. Here the reads are issued together and the copies follow.
// stage_x_chunk keeps its order for its other callers: the ring kernel's
// tiles staged this way spilled 84 bytes at double k = 5.
template <class S>
__device__ __forceinline__ void prefetch_x_chunk(double2* xs, const double2* amps, Index base, int c,
                                                 const XStaging& x, const Index* offsets, const unsigned* cells,
                                                 const Index* chunk_offset) {
    if (!x.active) return;
    const double2* from = x_chunk_source(amps, base, c, x, chunk_offset);
    Index offset[S::kXPerThread];
    unsigned cell[S::kXPerThread];
#pragma unroll
    for (int j = 0; j < S::kXPerThread; ++j) {
        offset[j] = offsets[j];
        cell[j] = x.thread_cell | cells[j];
    }
#pragma unroll
    for (int j = 0; j < S::kXPerThread; ++j) copy_x_async<S>(xs, cell[j], c, from + offset[j]);
}

// A chunk of X in flight through registers: loaded by load_x_chunk and
// stored (widened, for a float state) into shared memory by store_x_chunk.
// The one-block kernel stages a float state's chunks this way, each stored
// one step after its loads, so that no thread waits for its global loads in
// the step that issues them (a double state's chunks travel by cp.async
// there). Measured on an H100 (float, n = 28, fraction of the floor, low
// targets): k = 6 0.57 -> 0.79, k = 8 0.68 -> 0.85.
template <class S, class Real>
struct PendingXChunk {
    DeviceComplex<Real> v[S::kXPerThread];
    int chunk = -1;  // the block's chunk they belong to; -1: none
};

template <class S, class Real>
__device__ __forceinline__ void load_x_chunk(PendingXChunk<S, Real>& pending, const DeviceComplex<Real>* amps,
                                             Index base, int c, const XStaging& x, const Index* offsets,
                                             const Index* chunk_offset) {
    pending.chunk = c;
    if (!x.active) return;
    const DeviceComplex<Real>* from = x_chunk_source(amps, base, c, x, chunk_offset);
#pragma unroll
    for (int j = 0; j < S::kXPerThread; ++j) pending.v[j] = from[offsets[j]];
}

template <class S, class Real, bool kMayRepeat>
__device__ __forceinline__ void store_x_chunk(double2* xs, PendingXChunk<S, Real>& pending, const XStaging& x,
                                              const unsigned* cells) {
    if (pending.chunk < 0) return;
    if (x.active) {
#pragma unroll
        for (int j = 0; j < S::kXPerThread; ++j) {
            if (kMayRepeat && cells[j] == kRepeatedCell) continue;
            put_x<S>(xs, x.thread_cell | cells[j], pending.chunk, pending.v[j]);
        }
    }
    pending.chunk = -1;
}

// Stages all the block's own chunks of the tile at `base` (as stage_x_chunk).
template <class S, class Real, bool kMayRepeat>
__device__ __forceinline__ void stage_x_tile(double2* xs, const DeviceComplex<Real>* amps, Index base,
                                             const XStaging& x, const Index* offsets, const unsigned* cells,
                                             const Index* chunk_offset) {
    for (int c = 0; c < S::kOwnChunks; ++c) {
        stage_x_chunk<S, Real, kMayRepeat>(xs, amps, base, c, x, offsets, cells, chunk_offset);
    }
}

// A float state's chunk c of X through shared memory, as stored:
// issue_raw_chunk copies this thread's share of it (from the tile at `base`)
// by cp.async into `raw`, in the caller's next commit group; widen_raw_chunk
// stores it into X's layout once that group is complete (a thread reads only
// the elements it copied itself, so no barrier lies between them; the stores
// are visible after the caller's next barrier). RawChunk shapes prefetch
// their chunks this way. Measured on an H100 (float, n = 28, fraction of the floor, low / high /
// scattered, two runs each, alternating with the chunk through registers):
// k = 7 0.86 / 0.85 / 0.81 -> 0.89 / 0.87 / 0.81, k = 8 0.91 / 0.89 / 0.89 ->
// 0.91 / 0.92 / 0.92, k = 6 0.82 / 0.77 / 0.82 -> 0.81 / 0.74 / 0.79, so k = 6
// keeps the registers (ptxas: the float k = 7 kernels' spills 24 and 32 ->
// 16 bytes, k = 6 16 -> 0).
template <class S>
__device__ __forceinline__ void issue_raw_chunk(float2* raw, const float2* amps, Index base, int c, const XStaging& x,
                                                const Index* offsets, const Index* chunk_offset) {
    if (!x.active) return;
    const float2* from = x_chunk_source(amps, base, c, x, chunk_offset);
#pragma unroll
    for (int j = 0; j < S::kXPerThread; ++j) {
        __pipeline_memcpy_async(raw + j * kMmaThreads + threadIdx.x, from + offsets[j], sizeof(float2));
    }
}

template <class S>
__device__ __forceinline__ void widen_raw_chunk(double2* xs, const float2* raw, int c, const XStaging& x,
                                                const unsigned* cells) {
    if (!x.active) return;
#pragma unroll
    for (int j = 0; j < S::kXPerThread; ++j) {
        put_x<S>(xs, x.thread_cell | cells[j], c, raw[j * kMmaThreads + threadIdx.x]);
    }
}

// The same for a whole tile (RawX shapes, k = 4 and 5, whose tiles are
// copied ahead of their turn): a tile slot of `raw` holds the tile's chunks
// one after another.
template <class S>
__device__ __forceinline__ void issue_raw_x(float2* raw, const float2* amps, Index base, const XStaging& x,
                                            const Index* offsets, const Index* chunk_offset) {
#pragma unroll
    for (int c = 0; c < S::kOwnChunks; ++c) {
        issue_raw_chunk<S>(raw + c * S::kXPerThread * kMmaThreads, amps, base, c, x, offsets, chunk_offset);
    }
}

template <class S>
__device__ __forceinline__ void widen_raw_x(double2* xs, const float2* raw, const XStaging& x, const unsigned* cells) {
#pragma unroll
    for (int c = 0; c < S::kOwnChunks; ++c) widen_raw_chunk<S>(xs, raw + c * S::kXPerThread * kMmaThreads, c, x, cells);
}

// Stages all the block's own chunks of the tile at `base` through
// registers, the loads of kBatch chunks in flight at a time; the stores are
// visible after the caller's next barrier. The cluster kernel stages this
// way, after prefetch_x_tile: its peers read these rows from this block's
// shared memory, and racecheck follows ordinary stores there where it
// reports hazards for cp.async copies (apply_matrix_mma_cluster.cu has that
// and the times against cp.async). Measured on an H100 (k = 10, low / high
// targets, two runs each, alternating) while the cluster kernel still staged
// the matrix in shared memory: double n = 30 0.645 / 0.629 -> 0.663 / 0.645
// of the floor against cp.async, float n = 28 0.64-0.66 -> 0.69-0.70 against
// one chunk's loads at a time.
template <class S, class Real>
__device__ __forceinline__ void load_x_tile(double2* xs, const DeviceComplex<Real>* amps, Index base,
                                            const XStaging& x, const Index* offsets, const unsigned* cells,
                                            const Index* chunk_offset) {
    constexpr int kBatch = S::kOwnChunks < 4 ? S::kOwnChunks : 4;
    static_assert(S::kOwnChunks % kBatch == 0, "whole batches of chunks");
    for (int c0 = 0; c0 < S::kOwnChunks; c0 += kBatch) {
        PendingXChunk<S, Real> pending[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) load_x_chunk<S>(pending[b], amps, base, c0 + b, x, offsets, chunk_offset);
#pragma unroll
        for (int b = 0; b < kBatch; ++b) store_x_chunk<S, Real, true>(xs, pending[b], x, cells);
    }
}

// Asks L2 for this thread's share of every chunk of the tile at `base`
// (the amplitudes load_x_tile loads), so that load_x_tile's batches after
// the first find their lines there or on their way, instead of each waiting
// for DRAM in turn. The prefetches take no registers and write nothing.
template <class S, class Real>
__device__ __forceinline__ void prefetch_x_tile(const DeviceComplex<Real>* amps, Index base, const XStaging& x,
                                                const Index* offsets, const Index* chunk_offset) {
    if (!x.active) return;
    for (int c = 0; c < S::kOwnChunks; ++c) {
        const DeviceComplex<Real>* from = x_chunk_source(amps, base, c, x, chunk_offset);
#pragma unroll
        for (int j = 0; j < S::kXPerThread; ++j) asm volatile("prefetch.global.L2 [%0];" ::"l"(from + offsets[j]));
    }
}

// A warp's accumulators, the three real products of the Gauss form
// (multiply_chunk): acc[j][0] += Re M Re X, acc[j][1] += Im M Im X,
// acc[j][2] += (Re M + Im M)(Re X + Im X), at rows warp_row0 + g (elements 0,
// 1) and warp_row0 + g + 8 (elements 2, 3) of the pass, columns col0 + 8 j +
// 2t (elements 0, 2) and 2t + 1 (1, 3). Re Y = acc[j][0] - acc[j][1] and
// Im Y = acc[j][2] - acc[j][0] - acc[j][1] (store_pass).
template <class S>
using MmaAccumulators = double[S::kTileCols][3][4];

// Product p (0: Re M Re X, 1: Im M Im X, 2: the sums') of one column tile's
// Gauss trio (MmaAccumulators), B from the tile's two loaded units.
__device__ __forceinline__ void gauss_product(double (&acc)[3][4], int p, const double (&a_re)[4],
                                              const double (&a_im)[4], const double (&a_sum)[4], double2 re,
                                              double2 im) {
    if (p == 0) {
        const double b[2] = {re.x, re.y};
        dmma_16x8x8(acc[0], a_re, b);
    } else if (p == 1) {
        const double b[2] = {im.x, im.y};
        dmma_16x8x8(acc[1], a_im, b);
    } else {
        const double b[2] = {re.x + im.x, re.y + im.y};
        dmma_16x8x8(acc[2], a_sum, b);
    }
}

// The order multiply_chunk issues a step's DMMAs in: by product (every
// column tile's Re M Re X, then every Im M Im X, then the sums', whose DADDs
// then have the other products' time to complete) for float k = 6, by
// column tile (its three products in turn) elsewhere. Measured on an H100 (n
// = 30 double, 28 float, time by product over time by column tile,
// alternating): float k = 6 0.96 / 1.00 / 0.99 / 0.97 (low / high /
// scattered / descending, three runs each; 0.95 / 0.98 / 0.99 in two runs
// of another command), double k = 6 1.00 / 1.01 / 1.01 / 1.00; in two runs
// each, float k = 7 1.03, k = 9 and 10 1.01 to 1.04, double k = 7..10 1.00
// to 1.03, k = 5 in both precisions 0.99 to 1.00 (ptxas, with every kernel
// by product: the cluster kernels spilled 12 bytes, float k = 7 24 instead
// of 16).
template <class S, class Real>
constexpr bool dmma_by_product() {
    return S::kK == 6 && std::is_same<Real, float>::value;
}

// One 8-deep slice of multiply_chunk (below: the form and its accuracy): A
// from the lane's four fragment units (re0, re1: (Re M, Re M) of the lane's
// row pair at the slice's columns t and t + 4; im0, im1 the imaginary
// parts'), B from X at unit `row` (the slice's first row + x_lane_unit) of
// the lane's columns.
template <class S, int XStride, bool kByProduct = false>
__device__ __forceinline__ void multiply_slice(MmaAccumulators<S>& acc, double2 re0, double2 re1, double2 im0,
                                               double2 im1, const double2* x, int col, int row) {
    const double a_re[4] = {re0.x, re0.y, re1.x, re1.y};
    const double a_im[4] = {im0.x, im0.y, im1.x, im1.y};
    const double a_sum[4] = {re0.x + im0.x, re0.y + im0.y, re1.x + im1.x, re1.y + im1.y};
    // The lane's units of column tile j: (Re X[t], Re X[t + 4]) and the imaginary parts'.
    const auto x_unit = [&](int j, int imag) { return x[(col + kDmmaCols * j) * XStride + row + 4 * imag]; };
    if constexpr (kByProduct) {
        double2 re[S::kTileCols], im[S::kTileCols];
#pragma unroll
        for (int j = 0; j < S::kTileCols; ++j) {
            re[j] = x_unit(j, 0);
            im[j] = x_unit(j, 1);
        }
#pragma unroll
        for (int p = 0; p < 3; ++p) {
#pragma unroll
            for (int j = 0; j < S::kTileCols; ++j) gauss_product(acc[j], p, a_re, a_im, a_sum, re[j], im[j]);
        }
    } else {
#pragma unroll
        for (int j = 0; j < S::kTileCols; ++j) {
            const double2 re = x_unit(j, 0);
            const double2 im = x_unit(j, 1);
#pragma unroll
            for (int p = 0; p < 3; ++p) gauss_product(acc[j], p, a_re, a_im, a_sum, re, im);
        }
    }
}

// acc += (this warp's 16 rows of the matrix chunk) * (the chunk of X, this
// warp's columns). mt points at the stage's unit t of the pair of the warp's
// rows g and g + 8 (pair warp_row0 / 2 + g). X's column c is at x + c *
// XStride in the planar layout of x_real_slot (unit r of a column, counted
// from the chunk's first row, belongs to row r's 8-row block); the lane
// reads column col = col0 + g, from unit row = x_lane_unit(col, t) + the
// chunk's first row.
//
// Complex arithmetic by Gauss's three real products: with M = Mr + i Mi and
// X = Xr + i Xi,
//   Re Y = Mr Xr - Mi Xi,   Im Y = (Mr + Mi)(Xr + Xi) - Mr Xr - Mi Xi,
// 6 real flops per complex multiply-add where the direct form takes 8, so a
// quarter fewer DMMAs for the same product. Each m16n8k8 product runs over 8
// complex rows of X: its A fragment is Mr, Mi or Mr + Mi of the warp's rows g
// and g + 8 (two 16-byte units of the stage each, (Mr, Mr) and (Mi, Mi) of
// the row pair; the sums are 4 DADDs per warp and 8 rows, shared by every
// column tile), its B fragment the real parts, the imaginary parts or their
// sums of two loaded amplitudes (rows t and t + 4). The sums cost 2 DADDs per
// column tile and 8 rows, against 3 DMMAs. The DADDs run on the DMMAs' pipe
// and hold it about a third of a DMMA each in isolation (dmma.cuh); here
// they seem to cost less, since the direct form, without them and with a
// third more DMMAs, measured 6 to 21 % slower (apply_matrix_mma.cu). Forming
// X's sums once per block instead, a step ahead into a sum stage that the
// products load as a third B unit (24 DADDs per warp and step -> 12 at
// double k = 7), measured slower (n = 30 double, 28 float, two runs each,
// alternating, every layout): double k = 6 8 to 15 %, k = 7 5 to 11 %, k = 8
// 1 to 4 %, float k = 6 20 to 33 % (ptxas: 28 to 40 bytes of spills).
// The extra fragment loads cost more than the adds they save. So in the
// cluster kernel, whose X chunks pass through registers anyway: each thread
// took a real and an imaginary unit of one column, added them and stored
// the sum as a third unit into the X stage (24 units a column, odd columns
// swizzled; 16 DADDs fewer and 8 more 16-byte loads per warp and step, 6
// to 7 registers fewer, no spills). Correct, racecheck clean, and slower
// (n = 30 double, 28 float, four layouts, two runs each, alternating, time
// against the DADDs here): double k = 9 0.99 to 1.01, k = 10 1.01 to 1.03,
// float k = 9 1.00 to 1.04, k = 10 1.04 to 1.05. Nor did the matrix's
// sums pay as a third plane of the stage images (Re M + Im M formed once by
// make_matrix_images_kernel; the one shape with room for it is double k =
// 7, 24 KiB more shared memory): 4 DADDs fewer and 2 more 16-byte fragment
// loads per warp and 8 rows, the matrix stream half as many bytes again;
// 218 registers (220), no spills, and 1.04 to 1.08 times the time (n = 30,
// four layouts, two runs each, in ABBA order; k = 6 level as a control).
// At k = 6 it spilled 24 (double) and 32 to 80 bytes (float).
//
// Accuracy: the real part is the direct form's. The imaginary part's error is
// bounded by a few units in the last place of (|Mr| + |Mi|)(|Xr| + |Xi|)
// rather than of |Mr| |Xi| + |Mi| |Xr| (Higham, Accuracy and Stability of
// Numerical Algorithms, 2nd ed., section 23.2.4): the same bound in norm, a
// weaker one for a component much smaller than its row's other terms (a
// matrix whose imaginary parts are 1e-9 of its real parts, on a real state,
// gives imaginary parts exact to about 1e-16 of the amplitudes, not of their
// own size). Every product runs in double, for float states too.
template <class S, int XStride, bool kByProduct = false>
__device__ __forceinline__ void multiply_chunk(MmaAccumulators<S>& acc, const double2* mt, const double2* x, int col,
                                               int row) {
#pragma unroll
    for (int d = 0; d < S::kChunk / 8; ++d) {
        // Complex rows 8 d .. 8 d + 7 of the chunk; the lane's columns 8 d + t and 8 d + t + 4.
        multiply_slice<S, XStride, kByProduct>(acc, mt[8 * d], mt[8 * d + 4], mt[S::kChunk + 8 * d],
                                               mt[S::kChunk + 8 * d + 4], x, col, row + 8 * d);
    }
}

// A lane's A fragments for one step (DirectA shapes): slice d's units
// re0, re1, im0, im1 as multiply_slice takes them.
template <class S>
struct MatrixFragments {
    double2 u[S::kChunk / 8][4];
};

// Loads this lane's fragments of step q (of the block's own steps) from the
// images in fragment order (make_fragment_images_kernel) for warp row
// `warp_row`: each load instruction of a warp reads 512 contiguous bytes.
// Where the block's warps stand in one column (kWarpCols = 1: k = 8 and the
// cluster shapes) every block reads the whole matrix once per tile, and L1
// would hold each line for one read, so the loads are cached in L2 only.
// Where they stand in several (double k = 7: two), the warps of a warp row
// read the same lines within a step of each other, and the loads are cached
// in L1 too, so that L1 serves the second read. Measured on an H100 (double
// k = 7, n = 30, ms low / high / scattered / descending, alternating, in two
// commands on two machines of three and two runs each): L2 only
// 23.17-23.73 / 23.68-23.93 / 23.11-23.21 / 23.28-23.47 and 22.72-23.28 /
// 23.88-24.47 / 22.80-22.87 / 23.25-23.33, through L1 23.06-23.34 /
// 22.98-23.09 / 22.60-22.72 / 23.05-23.28 and 22.69-22.89 / 23.44-23.52 /
// 22.50-22.56 / 22.89-23.12 (0.84-0.86 / 0.83-0.86 / 0.86-0.87 / 0.84-0.85
// of the floor). Through L1 at k = 8 too (each line read once there), as
// a runtime branch in one build: 2 to 3 % slower.
template <class S>
__device__ __forceinline__ void load_matrix_fragments(MatrixFragments<S>& f, const double2* images, int q,
                                                      int warp_row) {
    const double2* src =
        images + (static_cast<std::size_t>(q) * S::kWarpRows + warp_row) * S::kFragmentEntries + threadIdx.x % 32;
#pragma unroll
    for (int d = 0; d < S::kChunk / 8; ++d) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            if constexpr (S::kWarpCols > 1) {
                f.u[d][u] = __ldca(src + (d * 4 + u) * 32);
            } else {
                f.u[d][u] = __ldcg(src + (d * 4 + u) * 32);
            }
        }
    }
}

// multiply_chunk with the A fragments in registers (DirectA shapes).
template <class S, int XStride>
__device__ __forceinline__ void multiply_chunk(MmaAccumulators<S>& acc, const MatrixFragments<S>& f, const double2* x,
                                               int col, int row) {
#pragma unroll
    for (int d = 0; d < S::kChunk / 8; ++d) {
        multiply_slice<S, XStride>(acc, f.u[d][0], f.u[d][1], f.u[d][2], f.u[d][3], x, col, row + 8 * d);
    }
}

template <class S>
__device__ __forceinline__ void clear_accumulators(MmaAccumulators<S>& acc) {
#pragma unroll
    for (int j = 0; j < S::kTileCols; ++j)
#pragma unroll
        for (int p = 0; p < 3; ++p)
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[j][p][i] = 0.0;
}

// pair_stores: where a lane's two columns in a row, 2t and 2t + 1, are
// neighbouring amplitudes (qubit 0 free; see store_pass), a float lane writes
// both as one 16-byte store, so a warp's store covers 8 runs of 64 bytes.
// Measured on an H100 (n = 28, fraction of the floor, two runs each,
// alternating with the kernels before them and before the bank order of
// chunk_local_bits, which the figures include): float k = 6 high and
// scattered 0.65-0.66 -> 0.79-0.81, k = 7 high 0.80 -> 0.86-0.87, k = 8 high
// and scattered 0.82-0.83 -> 0.88; low targets level (0.99 to 1.02 of the
// former speed), k = 7 scattered (qubit 0 is a target) 0.99. Double states
// fill whole sectors by their column order instead
// (move_low_free_qubits_to_lane_columns). Float states in the one-block kernels:
// from k = 6, and at k = 4, 5 in the raw kernel (without spills there; the
// first kernel's k = 5 spilled 104 bytes for them), where they took float k =
// 5 on high targets from 0.69-0.74 to 0.79-0.83 of the floor (three runs
// each, alternating). In the cluster kernels they measured +2 % at k = 9 and
// -2 to -3 % at k = 10 in every layout, low targets included, which never
// take them. Where they apply, the one-block kernels have a second form for
// gates whose qubit 0 is free, the only one with their code: in one kernel
// with a run-time test, the untaken branches cost float k = 8 on low targets
// 3 to 6 % (k = 7 scattered 2 to 3 %).
template <class S, class Real>
constexpr bool pair_stores() {
    return std::is_same<Real, float>::value && (S::kK >= 6 || S::kRawX) && S::kCluster == 1;
}

// Y at accumulator element i of column tile j (MmaAccumulators).
template <class S>
__device__ __forceinline__ double2 amplitude_at(const MmaAccumulators<S>& acc, int j, int i) {
    return make_double2(acc[j][0][i] - acc[j][1][i], acc[j][2][i] - (acc[j][0][i] + acc[j][1][i]));
}

// Clears element i of column tile j for the next pass.
template <class S>
__device__ __forceinline__ void clear_products(MmaAccumulators<S>& acc, int j, int i) {
    acc[j][0][i] = 0.0;
    acc[j][1][i] = 0.0;
    acc[j][2][i] = 0.0;
}

template <class S>
__device__ __forceinline__ double2 take_amplitude(MmaAccumulators<S>& acc, int j, int i) {
    const double2 y = amplitude_at<S>(acc, j, i);
    clear_products<S>(acc, j, i);
    return y;
}

__device__ __forceinline__ void store_amplitude(double2* at, double2 y) { *at = y; }
__device__ __forceinline__ void store_amplitude(float2* at, double2 y) {
    *at = make_float2(static_cast<float>(y.x), static_cast<float>(y.y));
}

// Writes a finished pass (this lane's rows pass_row + row_offset[half]) of
// the tile at `base` to global memory and clears the accumulators. Columns 2t
// and 2t + 1 are neighbouring amplitudes when qubit 0 is free (free bit 0 is
// qubit 0; the offset of column 2t is then even, and so are the targets' and
// the tile base's). On high targets a warp's store then covers 8 rows x 4
// lanes, and one amplitude per lane fills half of each sector it touches:
// pair_stores fill whole ones. kNeighbours: the launcher runs this form only
// where qubit 0 is free (pair_stores). ncu samples warps in this function
// 10 % of the time at double k = 7 (5 % at k = 8), mostly waiting for a
// store to release its registers; forming all of a pass's amplitudes before
// storing any (on the one-block shapes, which have the registers) measured
// level to 3 % slower at double k = 7, 8 and float k = 8 (two runs each).
template <class S, class Real, bool kNeighbours>
__device__ __forceinline__ void store_pass(DeviceComplex<Real>* amps, const TileLayout& layout, Index base,
                                           unsigned pass_row, const Index (&lane_row_offset)[2],
                                           const Index (&col_offset)[S::kTileCols][2], MmaAccumulators<S>& acc) {
    const Index pass_offset = base + target_offset<S>(layout, pass_row);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const Index row_offset = pass_offset + lane_row_offset[half];
#pragma unroll
        for (int j = 0; j < S::kTileCols; ++j) {
            if constexpr (kNeighbours && pair_stores<S, Real>()) {
                if (col_offset[j][1] != Index(-1)) {
                    const double2 y0 = take_amplitude<S>(acc, j, 2 * half);
                    const double2 y1 = take_amplitude<S>(acc, j, 2 * half + 1);
                    float4* const at = reinterpret_cast<float4*>(amps + row_offset + col_offset[j][0]);
                    *at = make_float4(static_cast<float>(y0.x), static_cast<float>(y0.y), static_cast<float>(y1.x),
                                      static_cast<float>(y1.y));
                    continue;
                }
            }
            // Each amplitude formed only where its column exists: forming
            // them first, as take_amplitude does, cost ptxas 48 to 104 bytes
            // of spills in the kernels at the 128-register cap.
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int i = 2 * half + h;
                if (col_offset[j][h] != Index(-1)) {
                    store_amplitude(amps + row_offset + col_offset[j][h], amplitude_at<S>(acc, j, i));
                }
                clear_products<S>(acc, j, i);
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
#pragma unroll
    for (int j = 0; j < S::kTileCols; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) col_offset[j][h] = column_offset(layout, col0 + kDmmaCols * j + 2 * t + h);
    }
#pragma unroll
    for (int half = 0; half < 2; ++half) lane_row_offset[half] = target_offset<S>(layout, warp_row0 + g + 8 * half);
}

// Where this thread sits in the block's products: its DMMA lane group g and
// thread t within it, its warp's first row within a pass and first column,
// and the unit its B-fragment loads take within each 8-row block of X
// (x_lane_unit of its column col0 + g).
template <class S>
struct WarpPlace {
    int g = dmma_group(threadIdx.x % 32);
    int t = dmma_thread_in_group(threadIdx.x % 32);
    int warp_row0 = (threadIdx.x / 32 % S::kWarpRows) * kDmmaRows;
    int col0 = (threadIdx.x / 32 / S::kWarpRows) * S::kTileCols * kDmmaCols;
    int x_unit = x_lane_unit(col0 + g, t);
};

// The one-block kernels' start: the block's staging tables (complete, behind
// a barrier, when it returns), this thread's part of the X staging and its
// accumulators' offsets (lane_offsets). The kernels still declare the
// offsets and the warp place themselves: a struct holding all of it, bound
// by reference, cost the float k = 6 pair-store kernel 16 bytes of spills
// under its 128-register cap (ptxas, CUDA 13).
template <class S, class Real>
__device__ __forceinline__ XStaging set_up_one_block(const TileLayout& layout, const WarpPlace<S>& place,
                                                     Index* x_offsets, unsigned* x_cells, Index* chunk_offset,
                                                     Index (&col_offset)[S::kTileCols][2],
                                                     Index (&lane_row_offset)[2]) {
    const XStaging x = make_x_staging<S, Real>(layout, 0, x_offsets, x_cells, chunk_offset);
    lane_offsets<S>(layout, place.warp_row0, place.col0, place.g, place.t, col_offset, lane_row_offset);
    __syncthreads();  // the staging tables are complete before any thread reads them
    return x;
}

// An mbarrier in shared memory that all kMmaThreads threads of a block
// arrive at once per phase: split_barrier_wait(bar, p) returns once the
// phase of parity p is complete (the phases alternate, starting at 0). The
// arrival releases the thread's earlier shared-memory reads and the wait
// acquires every arrived thread's.
__device__ __forceinline__ unsigned shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void split_barrier_init(std::uint64_t* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void split_barrier_arrive(std::uint64_t* bar) {
    // The arrival's state is not needed (the waits go by parity): the sink.
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
}
__device__ __forceinline__ void split_barrier_wait(std::uint64_t* bar, unsigned parity) {
#if __CUDA_ARCH__ >= 900
#define QMARG_MBARRIER_WAIT "mbarrier.try_wait.parity"  // waits in hardware a while before it fails
#else
#define QMARG_MBARRIER_WAIT "mbarrier.test_wait.parity"
#endif
    asm volatile(
        "{\n\t.reg .pred done;\n"
        "WAIT:\n\t" QMARG_MBARRIER_WAIT
        ".shared::cta.b64 done, [%0], %1;\n\t"
        "@!done bra WAIT;\n}" ::"r"(shared_address(bar)),
        "r"(parity)
        : "memory");
#undef QMARG_MBARRIER_WAIT
}

// Zeros the columns a small state's (only) tile lacks, so the products read
// defined values.
template <class S>
__device__ __forceinline__ void zero_missing_columns(double2* xs, int columns) {
    for (int e = threadIdx.x; e < (S::kColumns - columns) * S::kRows; e += kMmaThreads) {
        xs[(columns + e / S::kRows) * S::kXStride + e % S::kRows] = make_double2(0.0, 0.0);
    }
}

// Stages a one-block kernel's first tile (at `base`; `columns` of the
// tile's kColumns exist) as stage_x_tile does.
template <class S, class Real>
__device__ __forceinline__ void stage_first_x_tile(double2* xs, const DeviceComplex<Real>* amps, Index base,
                                                   int columns, const XStaging& x, const Index* offsets,
                                                   const unsigned* cells, const Index* chunk_offset) {
    if (columns < S::kColumns) {
        // A state of one tile, whose staging tables may repeat entries.
        stage_x_tile<S, Real, true>(xs, amps, base, x, offsets, cells, chunk_offset);
        zero_missing_columns<S>(xs, columns);
    } else {
        stage_x_tile<S, Real, false>(xs, amps, base, x, offsets, cells, chunk_offset);
    }
}

// The unit both image layouts are made of: (Re M[row][col], Re M[row +
// 8][col]), or the imaginary parts' where `imag`, M being the gate's matrix
// with its targets in ascending order (order = target_order(gate)).
template <int K>
__device__ __forceinline__ double2 row_pair_unit(const double2* matrix, const TargetOrder& order, int row, int col,
                                                 bool imag) {
    const std::size_t from_col = caller_index<K>(order, col);
    const double2 first = matrix[caller_index<K>(order, row) * (std::size_t{1} << K) + from_col];
    const double2 second = matrix[caller_index<K>(order, row + 8) * (std::size_t{1} << K) + from_col];
    return imag ? make_double2(first.y, second.y) : make_double2(first.x, second.x);
}

// The gate's matrix as the stage images the kernels copy, one block row
// range (rows [b * kRows, (b + 1) * kRows): a cluster block's rows, all rows
// elsewhere) after another, step after step: for block range b, step q
// (pass q / kChunksPerPass, columns from kc = (q % kChunksPerPass) kChunk),
// pair p = 8 * block + g of the pass's rows r = b kRows + pass kPassRows + 16
// block + g and r + 8, and column kk < kChunk:
//   images[(b * kSteps + q) * kStageEntries + p * kPairStride + kk]
//     = (Re M[r][kc + kk], Re M[r + 8][kc + kk]),
//   images[... + kChunk + kk] = (Im M[r][kc + kk], Im M[r + 8][kc + kk]),
// and zeros in the padding units, where M is the gate's matrix with its
// targets in ascending order: M[r][c] is the caller's entry at
// caller_index(order, r), caller_index(order, c).
template <class S>
__global__ void make_matrix_images_kernel(const double2* __restrict__ matrix, double2* __restrict__ images,
                                          const TargetOrder order) {
    for (Index e = global_thread_index(); e < S::kImageEntries; e += grid_thread_count()) {
        const int image = static_cast<int>(e / S::kStageEntries);  // b * kSteps + q
        const int b = image / S::kSteps;
        const int q = image % S::kSteps;
        const int unit = static_cast<int>(e % S::kStageEntries);
        const int p = unit / S::kPairStride;
        const int u = unit % S::kPairStride;
        double2 value = make_double2(0.0, 0.0);
        if (u < 2 * S::kChunk) {
            const int row = b * S::kRows + q / S::kChunksPerPass * S::kPassRows + 16 * (p / 8) + p % 8;
            const int col = q % S::kChunksPerPass * S::kChunk + u % S::kChunk;
            value = row_pair_unit<S::kK>(matrix, order, row, col, u >= S::kChunk);
        }
        images[e] = value;
    }
}

// The gate's matrix in fragment order, for DirectA shapes: the units that
// lane l of warp row w loads for slice d of step q (load_matrix_fragments),
// over the steps of every block of a cluster one after another,
//   images[((q * kWarpRows + w) * kChunk / 8 + d) * 128 + u * 32 + l]
//     = (Re M[r][c], Re M[r + 8][c])  for u = 0, 1,
//       (Im M[r][c], Im M[r + 8][c])  for u = 2, 3,
// with r = (q / kChunksPerPass) kPassRows + 16 w + g and c = (q %
// kChunksPerPass) kChunk + 8 d + t + 4 (u % 2), g = l / 4, t = l % 4: the
// units multiply_slice takes as re0, re1, im0, im1. Block b of a cluster
// reads from step b * kSteps on; so do the blocks of a companion shape with
// the same kPassRows, kWarpRows and kChunk, whose steps then name the same
// rows. M as in make_matrix_images_kernel.
template <class S>
__global__ void make_fragment_images_kernel(const double2* __restrict__ matrix, double2* __restrict__ images,
                                            const TargetOrder order) {
    for (Index e = global_thread_index(); e < S::kImageEntries; e += grid_thread_count()) {
        const int warp_step = static_cast<int>(e / S::kFragmentEntries);  // q * kWarpRows + w
        const int q = warp_step / S::kWarpRows;
        const int w = warp_step % S::kWarpRows;
        const int unit = static_cast<int>(e % S::kFragmentEntries);  // (d * 4 + u) * 32 + lane
        const int d = unit / 128;
        const int u = unit / 32 % 4;
        const int g = dmma_group(unit % 32), t = dmma_thread_in_group(unit % 32);
        const int row = q / S::kChunksPerPass * S::kPassRows + 16 * w + g;
        const int col = q % S::kChunksPerPass * S::kChunk + 8 * d + t + 4 * (u & 1);
        images[e] = row_pair_unit<S::kK>(matrix, order, row, col, u >= 2);
    }
}

// The gate's matrix on the device, row-major (std::complex<double> and
// double2 share their bytes), its copy queued on the stream: what the image
// kernels read.
inline DeviceArray<double2> device_copy_of(const Matrix& matrix) {
    const std::size_t entries = static_cast<std::size_t>(matrix.dim()) * matrix.dim();
    DeviceArray<double2> device_matrix(entries, "the gate matrix");
    copy_to_device_async(device_matrix.data(), matrix.data(), entries * sizeof(double2));
    return device_matrix;
}

// The gate's matrix on the device, as shape S reads it: in fragment order
// (make_fragment_images_kernel) for DirectA shapes, as stage images
// (make_matrix_images_kernel) for the others, its targets in `order` (as
// mma_tile_layout). Matrix is
// row-major std::complex<double>: the same bytes as double2. The copy and the
// layout are queued on the stream, and both arrays go back to the
// stream-ordered pool as they leave scope (the row-major copy here, the
// images after the gate's kernel): no synchronisation, so consecutive gates
// queue up without a host round trip.
template <class S>
DeviceArray<double2> matrix_images(const TargetOrder& order, const Matrix& matrix) {
    const DeviceArray<double2> device_matrix = device_copy_of(matrix);
    DeviceArray<double2> images(S::kImageEntries, S::kDirectA ? "the gate matrix in fragment order"
                                                              : "the gate matrix laid out stage by stage");
    const auto kernel = [] {
        if constexpr (S::kDirectA) {
            return make_fragment_images_kernel<S>;
        } else {
            return make_matrix_images_kernel<S>;
        }
    }();
    kernel<<<grid_stride_blocks(static_cast<Index>(S::kImageEntries), 256), 256>>>(device_matrix.data(),
                                                                                    images.data(), order);
    QMARG_CHECK_LAUNCH(matrix_images);
    return images;
}

}  // namespace gpu
}  // namespace qmarg
