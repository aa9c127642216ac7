// Double k = 6 on sm_90 as warp streams: every warp of a block works through
// groups of its own, a group being one DMMA's 8 columns of the gate's
// product (the tile's three lowest free qubits) by all 64 rows: 512
// amplitudes, 8 KiB. A warp copies its next group into its own half of a
// double buffer in shared memory (16-byte cp.async, past L1) while it
// multiplies the current one by the whole matrix, which the block holds in
// shared memory for all its groups (Gauss's three real products in fragment
// order, 96 KiB, loaded once), and stores the group's Y from its
// accumulators straight to global memory. After the block's start no
// barrier joins the warps: each waits only for its own copies, so the eight
// warps of a multiprocessor drift apart and its loads, products and stores
// overlap the way independent warps do.
//
// Why k = 6 has a kernel of its own (H100, double, n = 30): the gate's
// floor there is the copy of the state (11.3 ms); the products alone (24
// m16n8k8 DMMAs per 128 amplitudes) would take 6 to 8 ms at the clocks the
// board allows. Both together hold it at its 700 W limit: the one-block
// kernel ran at 1560 MHz and 15.3 ms (0.74 of the floor), 10.6 J a run. An
// in-place read-negate-write of the state with those DMMAs beside it, on
// operands held in registers, took 12.3 ms (0.92 of the copy's time, 8.6 J)
// at the same limit, and with the A and B fragments loaded from shared
// memory for every DMMA (four 8-byte loads of A, two of B) 12.8 ms (0.88,
// 9.0 J): warps that each load, multiply and store their own amplitudes,
// with no barrier between them, leave the products room under the power
// limit, where the one-block kernel's steps (a block's 64-column tile
// staged behind barriers, the matrix streamed from L2 in chunks) did not.
// This kernel is that probe made a gate.
//
// It pays wherever qubits 0..2 are targets or free, in any mix (no control
// among them; mma_streams_pay): the group buffer's cells then keep each
// 32-byte sector of the state whole (stream_cell). Cells that split the
// sectors cost the 16-byte copies dearly: targets 3..8 (qubits 0..2 the
// group's columns) at n = 28 on the column-major cells, by Nsight Compute: 32
// shared-memory wavefronts per copy instruction against 4 on low targets,
// twice the sectors from L2 to L1 (2.7e8 against 1.3e8) and 3.68 ms against
// 3.01; on the row-major cells 2.99 ms. Measured on an H100 (double, n = 30,
// fraction of the copy floor, the median of 20 runs in each of three rounds,
// alternating with the one-block kernel in one process), streams against
// one-block:
//   low              0.855 / 0.833 / 0.864   0.809 / 0.772 / 0.790
//   descending       0.887 / 0.849 / 0.864   0.808 / 0.786 / 0.785
//   high             0.809 / 0.856 / 0.837   0.706 / 0.784 / 0.780
//   21 22 7 29 26 27 0.835 / 0.853 / 0.862   0.810 / 0.778 / 0.792
//   0 2 4 6 8 7      0.862 / 0.850 / 0.852   0.822 / 0.795 / 0.797
//   0 3 4 5 6 7      0.830 / 0.850 / 0.845   0.728 / 0.802 / 0.799
//   1 2 3 4 5 6      0.835 / 0.876 / 0.864   0.822 / 0.800 / 0.813
//   1 3 5 7 9 11     0.868 / 0.862 / 0.869   0.818 / 0.802 / 0.798
// (the last four lay a 128-byte line of the state over 2 or 4 rows of the
// buffer). High and scattered targets on the column-major cells had run at
// 0.67 to 0.68. What did not help them before the cells were found, in the
// same kind of rounds: a block barrier before each round's copies, so that
// the eight warps read neighbouring tiles together (1 KiB runs): 0.60 to 0.63;
// L2's 256-byte prefetch hint on the copies: no change; the stores of each
// row's 8 columns as two whole 64-byte runs (a shuffle between lanes) or
// through the group's buffer as whole lines: no gain, and 0.05 lost on low
// targets for the second. Nor, with the cells in place, anything that cut
// the shared loads (apply_matrix_k6_shared_loads_H100.json; three rounds
// each through apply_matrix_bench against this kernel, which ran 0.82 to
// 0.87 there): two neighbouring tiles a warp, each A-fragment load feeding
// both groups' DMMAs (38 % fewer shared loads; 4 warps a block with double
// buffers 0.70, 8 warps with single buffers 0.80 to 0.83); Re M + Im M
// formed from the other two fragments instead of loaded (DADDs share the
// DMMA pipe: 0.79 to 0.81); X loaded straight into registers, the next
// tile's as each slice frees them (0.69 to 0.77). Each ran at higher clocks
// at the same 700 W, spending less power a clock, but stalled more than the
// clocks gave back. So did warp pairs sharing double-buffered 16-column
// groups, each A-fragment load feeding two DMMAs with 8 warps kept (0.84 to
// 0.87 against 0.85 to 0.87, 45 to 105 MHz higher); Gauss's products
// regrouped for two DADDs an output instead of three were level
// (apply_matrix_k6_pairs_H100.json). That file also has what limits the
// kernel: without its products it reaches 0.94 of the copy on low targets
// but 0.87 to 0.88 on high and scattered ones, where it reads 0 to 0.03
// below that with them: there the memory pattern is the limit, and on low
// targets the products' power.
// The GPU tests, and compute-sanitizer racecheck and memcheck on
// WarpStreamKernelMatchesCpu, ran on every layout.
//
// Shared-memory invariants (`ms`, `groups`, both double2):
//   ms[((rb * 8 + s) * 3 + p) * 64 + h * 32 + lane] holds lane's A fragment
//     units for row block rb (rows 16 rb ..), slice s (columns 8 s ..) and
//     product p (0: Re M, 1: Im M, 2: Re M + Im M): (a0, a1) for h = 0,
//     (a2, a3) for h = 1 (cuda/dmma.cuh), of the matrix with its targets in
//     ascending order, from the block's start to its end.
//   groups[(warp * 2 + b) * 512 + stream_cell<R>(c, r)] holds row r, column c
//     of the group in buffer b of warp `warp` (re, im), from the warp's
//     wait for that group's copies until the warp's __syncwarp after the
//     group's stores; only that warp reads or writes it. Columns a small
//     state lacks hold zeros.
#include <string>

#include "apply_matrix_mma_common.cuh"

namespace qmarg {
namespace gpu {
namespace {

constexpr int kStreamTargets = 6;
constexpr int kStreamRows = 1 << kStreamTargets;                        // 64
constexpr int kStreamColumnBits = 3;                                    // one DMMA's 8 columns
constexpr int kStreamGroupUnits = kStreamRows << kStreamColumnBits;     // 512 amplitudes
constexpr int kStreamWarps = 8;
constexpr int kStreamThreads = kStreamWarps * 32;
constexpr int kStreamRowBlocks = kStreamRows / kDmmaRows;               // 4
constexpr int kStreamSlices = kStreamRows / 8;                          // m16n8k8: 8 deep
constexpr int kStreamProducts = 3;                                      // Gauss's
constexpr int kStreamImageUnits = kStreamRowBlocks * kStreamSlices * kStreamProducts * 64;  // 96 KiB
// A lane's 16 amplitudes of a group are local indices lane + 32 u: the lane
// fixes local bits 0..4, u bits 5..8.
constexpr int kStreamLoads = kStreamGroupUnits / 32;                    // 16
constexpr std::size_t kStreamSharedBytes =
    (static_cast<std::size_t>(kStreamImageUnits) + kStreamWarps * 2 * kStreamGroupUnits) * sizeof(double2) +
    (kStreamLoads + 8) * sizeof(Index) + kStreamLoads * sizeof(int);

// The unit of row r, column c in a group buffer. A B-fragment load (lanes
// g, t read column g, rows 8 s + t and + 4: a quarter warp reads columns 2 j
// and 2 j + 1, 4 rows each) touches 8 different 16-byte bank groups in both
// forms, and each 32-byte sector of the state (qubit 0's two values) lands
// whole in one 32-byte bank pair (stream_cells picks the form):
// - column-major (qubit 0 a target, row bit 0): each column's 64 rows are
//   contiguous, and within each run of 8 rows the rows are permuted by an
//   XOR with c's bits (bit 0 to bit 2, bits 1, 2 to bits 0, 1);
// - row-major (qubit 0 free: column bit 1, the columns' bits 1, 2, 0 being
//   free qubits 0, 1, 2, mma_tile_layout): each row's 8 columns are
//   contiguous in the state's order, XORed with the row's low two bits.
// A 128-byte line of the state (qubits 0..2) then spans one row of the
// buffer where qubits 0..2 are all targets or all free, and 2 or 4 where
// they are mixed.
template <bool kRowMajor>
__device__ __forceinline__ int stream_cell(int c, int r) {
    if (kRowMajor) return r * 8 + (((c >> 1) | ((c & 1) << 2)) ^ (r & 3));
    return c * kStreamRows + (r & ~7) + ((r & 7) ^ (((c & 1) << 2) | ((c >> 1) & 3)));
}

// d += a * b, a = (a01, a23) as held in `ms`.
__device__ __forceinline__ void stream_dmma(double (&d)[4], double2 a01, double2 a23, double b0, double b1) {
    const double a[4] = {a01.x, a01.y, a23.x, a23.y};
    const double b[2] = {b0, b1};
    dmma_16x8x8(d, a, b);
}

template <bool kRowMajor>
__global__ void __launch_bounds__(kStreamThreads, 1)
    apply_matrix_mma_stream_kernel(double2* amps, const double2* __restrict__ images,
                                   const __grid_constant__ TileLayout layout) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    double2* const ms = reinterpret_cast<double2*>(shared_bytes);
    double2* const groups = ms + kStreamImageUnits;
    // u's part of a load's offset and cell (-1: no such amplitude in a small
    // state), and the part of a row's offset that its bits 3..5 give.
    Index* const load_offset = reinterpret_cast<Index*>(groups + kStreamWarps * 2 * kStreamGroupUnits);
    Index* const row_offset_high = load_offset + kStreamLoads;
    int* const load_cell = reinterpret_cast<int*>(row_offset_high + 8);

    for (int e = threadIdx.x; e < kStreamImageUnits; e += kStreamThreads) {
        __pipeline_memcpy_async(ms + e, images + e, sizeof(double2));
    }
    __pipeline_commit();
    for (int e = threadIdx.x; e < kStreamWarps * 2 * kStreamGroupUnits; e += kStreamThreads) {
        groups[e] = make_double2(0.0, 0.0);
    }
    const unsigned local_count = 1u << layout.tile_bits;
    if (threadIdx.x < kStreamLoads) {
        const unsigned l = threadIdx.x << 5;
        const bool exists = l < local_count;
        load_offset[threadIdx.x] = exists ? local_offset(layout, l) : 0;
        load_cell[threadIdx.x] = exists ? static_cast<int>(tile_cell(layout, l, layout.tile_bits)) : -1;
    } else if (threadIdx.x < kStreamLoads + 8) {
        const int v = threadIdx.x - kStreamLoads;
        row_offset_high[v] = target_offset(layout, v << 3, kStreamTargets);
    }
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = dmma_group(lane), t = dmma_thread_in_group(lane);
    const Index lane_offset = local_offset(layout, lane);
    const int lane_cell = static_cast<int>(tile_cell(layout, lane, layout.tile_bits));
    // The lane's output rows g (+ 8, + 16 rb) and columns 2 t, 2 t + 1
    // (Index(-1): a column a small state lacks).
    const Index row_offset_g = target_offset(layout, g, kStreamTargets);
    const Index lane_column_offset[2] = {column_offset(layout, 2 * t), column_offset(layout, 2 * t + 1)};
    __pipeline_wait_prior(0);
    __syncthreads();  // the matrix, the zeroed buffers and the tables are visible to every warp

    double2* const buffers = groups + warp * 2 * kStreamGroupUnits;
    const Index stride = static_cast<Index>(gridDim.x) * kStreamWarps;
    auto copy_group = [&](Index base, double2* buffer) {
#pragma unroll
        for (int u = 0; u < kStreamLoads; ++u) {
            const int cell = load_cell[u];
            if (cell < 0) continue;
            const int c = (lane_cell | cell) >> 16, r = (lane_cell | cell) & 0xffff;
            __pipeline_memcpy_async(buffer + stream_cell<kRowMajor>(c, r), amps + base + lane_offset + load_offset[u],
                                    sizeof(double2));
        }
    };
    // Y = M X for the group in buffer x, tile base `at`, stored from the
    // accumulators.
    auto multiply_group = [&](const double2* x, Index at) {
        double acc[kStreamRowBlocks][kStreamProducts][4];
#pragma unroll
        for (int rb = 0; rb < kStreamRowBlocks; ++rb) {
#pragma unroll
            for (int p = 0; p < kStreamProducts; ++p) {
#pragma unroll
                for (int i = 0; i < 4; ++i) acc[rb][p][i] = 0.0;
            }
        }
#pragma unroll 2
        for (int s = 0; s < kStreamSlices; ++s) {
            // B: rows 8 s + t and 8 s + t + 4 of column g, and their sums.
            const double2 x0 = x[stream_cell<kRowMajor>(g, 8 * s + t)];
            const double2 x1 = x[stream_cell<kRowMajor>(g, 8 * s + t + 4)];
            const double sum0 = x0.x + x0.y, sum1 = x1.x + x1.y;
            const double2* const a = ms + s * kStreamProducts * 64 + lane;
#pragma unroll
            for (int rb = 0; rb < kStreamRowBlocks; ++rb) {
                const double2* const ar = a + rb * kStreamSlices * kStreamProducts * 64;
                stream_dmma(acc[rb][0], ar[0], ar[32], x0.x, x1.x);
                stream_dmma(acc[rb][1], ar[64], ar[96], x0.y, x1.y);
                stream_dmma(acc[rb][2], ar[128], ar[160], sum0, sum1);
            }
        }
        // Re Y = Re M Re X - Im M Im X, Im Y = (Re M + Im M)(Re X + Im X)
        // - Re M Re X - Im M Im X; element i of a row block's accumulators
        // is row 16 rb + g + 8 (i / 2), column 2 t + i % 2.
#pragma unroll
        for (int rb = 0; rb < kStreamRowBlocks; ++rb) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const Index row = at + row_offset_g + row_offset_high[rb * 2 + h];
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int i = 2 * h + e;
                    const double rr = acc[rb][0][i], ii = acc[rb][1][i], ss = acc[rb][2][i];
                    if (lane_column_offset[e] == Index(-1)) continue;
                    __stcs(amps + row + lane_column_offset[e], make_double2(rr - ii, ss - rr - ii));
                }
            }
        }
    };
    // Round r: the block's warps take tiles first_tile + r * stride + warp;
    // a warp whose tile is past the end copies and stores nothing.
    const Index first_tile = static_cast<Index>(blockIdx.x) * kStreamWarps;
    Index base = first_tile + warp < layout.num_tiles ? tile_base(layout, first_tile + warp) : 0;
    if (first_tile + warp < layout.num_tiles) copy_group(base, buffers);
    __pipeline_commit();
    int b = 0;
    for (Index round = first_tile; round < layout.num_tiles; round += stride, b ^= 1) {
        const Index tile = round + warp;
        const bool has_next = tile + stride < layout.num_tiles;
        const Index next_base = has_next ? tile_base(layout, tile + stride) : base;
        // The next group goes into the other buffer, whose last readers
        // passed the __syncwarp at the end of the previous group.
        if (has_next) copy_group(next_base, buffers + (b ^ 1) * kStreamGroupUnits);
        __pipeline_commit();
        __pipeline_wait_prior(1);  // this group's copies, issued one commit group ago
        __syncwarp();              // ... from every lane
        if (tile < layout.num_tiles) multiply_group(buffers + b * kStreamGroupUnits, base);
        __syncwarp();  // every lane is done reading buffer b before the next group's copies refill it
        base = next_base;
    }
    __pipeline_wait_prior(0);  // only empty groups can be pending
}

// The gate's matrix (row-major, its targets in the caller's order) as the
// kernel's `ms` holds it: for row block rb, slice s, product p, half h and
// lane l (g = l / 4, t = l % 4),
//   images[((rb * 8 + s) * 3 + p) * 64 + h * 32 + l]
//     = (P[16 rb + g][8 s + t + 4 h], P[16 rb + g + 8][8 s + t + 4 h]),
// P = Re M, Im M or Re M + Im M, M with its targets in ascending order.
__global__ void make_stream_images_kernel(const double2* __restrict__ matrix, double2* __restrict__ images,
                                          const TargetOrder order) {
    for (Index e = global_thread_index(); e < kStreamImageUnits; e += grid_thread_count()) {
        const int unit = static_cast<int>(e);
        const int lane = unit % 32, h = unit / 32 % 2, p = unit / 64 % 3, s = unit / 192 % 8, rb = unit / 1536;
        const int row = 16 * rb + dmma_group(lane);
        const int col = 8 * s + dmma_thread_in_group(lane) + 4 * h;
        auto part = [&](int r) {
            const double2 m = matrix[caller_index<kStreamTargets>(order, r) * kStreamRows +
                                     caller_index<kStreamTargets>(order, col)];
            return p == 0 ? m.x : p == 1 ? m.y : m.x + m.y;
        };
        images[e] = make_double2(part(row), part(row + 8));
    }
}

// The cells that keep each 32-byte sector of the state (qubit 0's two
// values) whole in a group buffer: column-major where qubit 0 is a target
// (row bit 0), row-major where it is free (column bit 1, with the columns
// reordered: at least three free qubits). None where a control lies among
// qubits 0..2, so that a line holds only part of a group's amplitudes: the
// one-block kernel is faster there (control 1, targets 0, 2..6, fraction of
// the whole state's copy floor: 1.113 / 1.116 / 1.126 against the streams'
// 1.073 / 1.084 / 1.081), nor where a small state's only free qubits leave
// qubit 0 on column bit 0.
enum class StreamCells { ColumnMajor, RowMajor, None };

StreamCells stream_cells(const TileLayout& layout) {
    // Local bits ascend: qubits 0..2 are in the tile iff local bit 2 is.
    if (layout.tile_bits < 3 || layout.local_bits[2] != 2) return StreamCells::None;
    if (layout.local_role[0] >= 0) return StreamCells::ColumnMajor;
    return layout.num_free >= 3 ? StreamCells::RowMajor : StreamCells::None;
}

// The gate as the streams take it: its targets in ascending order, its
// tiles (a group's kStreamColumnBits free qubits) and the buffer form. The
// rule (mma_streams_pay) and the launcher both judge this one layout.
struct StreamPlan {
    TargetOrder order;
    TileLayout layout;
    StreamCells cells;
};

StreamPlan plan_streams(const GateQubits& gate) {
    StreamPlan plan;
    plan.order = target_order(gate);
    plan.layout = mma_tile_layout<double>(gate, plan.order, kStreamColumnBits);
    plan.cells = stream_cells(plan.layout);
    return plan;
}

}  // namespace

bool mma_streams_pay(const GateQubits& gate) {
    return gate.num_targets == kStreamTargets && plan_streams(gate).cells != StreamCells::None;
}

bool apply_matrix_mma_streams(std::complex<double>* amps, const GateQubits& gate, const Matrix& matrix) {
    if (gate.num_targets != kStreamTargets) {
        throw Error("apply_matrix_mma_streams: " + std::to_string(gate.num_targets) + " targets; this kernel takes " +
                    std::to_string(kStreamTargets));
    }
    const int optin = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    if (compute_capability_major() < 9 || static_cast<std::size_t>(optin) < kStreamSharedBytes) return false;

    const StreamPlan plan = plan_streams(gate);
    const TileLayout& layout = plan.layout;
    // A layout that mma_streams_pay turns down (a direct call's) runs
    // correctly on either form.
    auto kernel = plan.cells == StreamCells::RowMajor ? apply_matrix_mma_stream_kernel<true>
                                                      : apply_matrix_mma_stream_kernel<false>;
    allow_shared_memory(kernel, kStreamSharedBytes, "the warp-stream kernel for 6 targets");
    // A warp a tile (a group), kStreamWarps a block.
    const unsigned blocks = resident_grid(kernel, kStreamThreads, kStreamSharedBytes,
                                          (layout.num_tiles + kStreamWarps - 1) / kStreamWarps);

    const DeviceArray<double2> device_matrix = device_copy_of(matrix);
    DeviceArray<double2> images(kStreamImageUnits, "the gate matrix in the warp-stream kernel's fragment order");
    make_stream_images_kernel<<<grid_stride_blocks(kStreamImageUnits, 256), 256>>>(device_matrix.data(),
                                                                                  images.data(), plan.order);
    QMARG_CHECK_LAUNCH(make_stream_images_kernel);
    kernel<<<blocks, kStreamThreads, kStreamSharedBytes>>>(reinterpret_cast<double2*>(amps), images.data(), layout);
    QMARG_CHECK_LAUNCH(apply_matrix_mma_stream_kernel);
    return true;
}

}  // namespace gpu
}  // namespace qmarg
