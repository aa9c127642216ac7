// Double k = 6 on sm_90 as warp streams in teams of two: every warp of a
// block owns a group a round, a group being one DMMA's 8 columns of the
// gate's product (the tile's three lowest free qubits) by all 64 rows: 512
// amplitudes, 8 KiB. The two warps of a team copy the team's next two
// groups (neighbouring tiles) into their owners' halves of double buffers
// in shared memory (16-byte cp.async, past L1), each warp 32 rows of both,
// while each multiplies its current group by the whole matrix, which the
// block holds in shared memory for all its groups (Gauss's three real
// products in fragment order, 96 KiB, loaded once), and stores the group's
// Y from its accumulators straight to global memory. A team waits at a
// barrier of its own once a round; the block's four teams drift apart, so
// the loads, products and stores of a multiprocessor overlap the way
// independent warps do.
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
// This kernel is that probe made a gate (with, since, one barrier of two
// warps a round: "Teams" below).
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
//
// Teams. Until then each warp copied its own group and no barrier joined
// the warps: its copies read 64 runs of 128 bytes (one row's 8 columns,
// high targets) far apart, and the eight warps of a block, which start on
// neighbouring tiles, drifted apart. Without products, the streams read
// 0.86 to 0.88 of the copy on high and scattered targets that way; with a
// block barrier a round, warp w copying rows 8 w .. 8 w + 7 of all eight
// groups (1 KiB runs), 0.90 to 0.93, but with products the barrier's
// lockstep cost more than the runs gave (0.81 to 0.86 on every layout):
// the eight warps multiplied together and left memory idle. Teams keep the
// longer runs (256 bytes, read by one warp) and let the teams drift.
// Fraction of the copy floor on an H100 (apply_matrix_bench, double n = 30,
// three rounds alternating with the kernel before, one process each):
//   low          teams 0.861 to 0.867   one warp a group 0.847 to 0.855
//   high               0.894 to 0.903                    0.838 to 0.853
//   scattered          0.889 to 0.895                    0.825 to 0.842
//   descending         0.852 to 0.863                    0.840 to 0.850
// Teams of four (512-byte runs, 16 rows a warp) were mixed in a probe,
// from 0.05 below one warp a group to 0.05 above.
// apply_matrix_k6_teams_H100.json has those, the block barrier, the
// streams without products, and a form that split each group's product in
// halves to keep three half groups in flight (0.76 to 0.79 on every
// layout: not kept).
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
//     of the group that warp `warp` owns in buffer b (re, im): written by
//     the cp.async of both warps of its team (rows with bit 5 = member),
//     read by the owner alone, from its team's barrier of the round until
//     its team's barrier of the next round. Columns a small state lacks
//     hold zeros.
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
// A team's warps copy its groups together: member m of a team takes the
// rows whose bit 5 is m, 32 rows of each of the team's 2 groups, 8
// amplitudes a lane of each.
constexpr int kTeamWarps = 2;
constexpr int kTeamRowBits = log2_of(kTeamWarps);                       // the highest row bits pick the member
// The member is kTeamRowBits row bits, and the block's warps split into
// whole teams (how a round's tiles share a base: place_base, below).
static_assert(1 << kTeamRowBits == kTeamWarps && kStreamWarps % kTeamWarps == 0,
              "teams of a power of two warps that divide the block");
constexpr int kTeamLoads = kStreamGroupUnits / kTeamWarps / 32;         // 8
constexpr std::size_t kStreamSharedBytes =
    (static_cast<std::size_t>(kStreamImageUnits) + kStreamWarps * 2 * kStreamGroupUnits) * sizeof(double2) +
    8 * sizeof(Index);

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

// The named barrier of a team (id 0 is __syncthreads'): it orders the
// team's shared-memory accesses as __syncthreads orders a block's.
__device__ __forceinline__ void team_barrier(int team) {
    asm volatile("bar.sync %0, %1;" ::"r"(1 + team), "r"(kTeamWarps * 32) : "memory");
}

// Local index number j (j < 2^(tile_bits - kTeamRowBits)) of those whose
// highest kTeamRowBits row bits are `member`'s bits: j's bits fill the
// other local bits in order. Row bit i is the i-th lowest target's local
// bit (the targets ascend).
__device__ __forceinline__ unsigned team_local_index(const TileLayout& layout, unsigned j, unsigned member) {
    unsigned l = 0, member_positions = 0;
    for (int b = 0; b < kTeamRowBits; ++b) {
        const int p = layout.target_local_sorted[kStreamTargets - kTeamRowBits + b];
        l |= ((member >> b) & 1u) << p;
        member_positions |= 1u << p;
    }
    for (int p = 0; p < layout.tile_bits; ++p) {
        if ((member_positions >> p) & 1u) continue;
        l |= (j & 1u) << p;
        j >>= 1;
    }
    return l;
}

template <bool kRowMajor>
__global__ void __launch_bounds__(kStreamThreads, 1)
    apply_matrix_mma_stream_kernel(double2* amps, const double2* __restrict__ images,
                                   const __grid_constant__ TileLayout layout) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    double2* const ms = reinterpret_cast<double2*>(shared_bytes);
    double2* const groups = ms + kStreamImageUnits;
    // The part of a row's offset that its bits 3..5 give.
    Index* const row_offset_high = reinterpret_cast<Index*>(groups + kStreamWarps * 2 * kStreamGroupUnits);

    for (int e = threadIdx.x; e < kStreamImageUnits; e += kStreamThreads) {
        __pipeline_memcpy_async(ms + e, images + e, sizeof(double2));
    }
    __pipeline_commit();
    for (int e = threadIdx.x; e < kStreamWarps * 2 * kStreamGroupUnits; e += kStreamThreads) {
        groups[e] = make_double2(0.0, 0.0);
    }
    if (threadIdx.x < 8) row_offset_high[threadIdx.x] = target_offset(layout, threadIdx.x << 3, kStreamTargets);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int team = warp / kTeamWarps, member = warp % kTeamWarps;
    const int g = dmma_group(lane), t = dmma_thread_in_group(lane);
    // The lane's output rows g (+ 8, + 16 rb) and columns 2 t, 2 t + 1
    // (Index(-1): a column a small state lacks).
    const Index row_offset_g = target_offset(layout, g, kStreamTargets);
    const Index lane_column_offset[2] = {column_offset(layout, 2 * t), column_offset(layout, 2 * t + 1)};
    // The lane's copies in each of the team's groups: local indices number
    // lane + 32 i of the member's rows (cell -1: none in a small state).
    Index copy_offset[kTeamLoads];
    int copy_cell[kTeamLoads];
    const unsigned member_count = 1u << (layout.tile_bits - kTeamRowBits);
#pragma unroll
    for (int i = 0; i < kTeamLoads; ++i) {
        const unsigned j = static_cast<unsigned>(lane + 32 * i);
        const unsigned l = team_local_index(layout, j, static_cast<unsigned>(member));
        copy_offset[i] = j < member_count ? local_offset(layout, l) : 0;
        copy_cell[i] = j < member_count ? static_cast<int>(tile_cell(layout, l, layout.tile_bits)) : -1;
    }
    // Tiles are numbered so that those of a round, round + 0..7 (round a
    // multiple of 8), differ only in the tile number's low 3 bits: a tile's
    // base is the round's OR that of its place in the round.
    Index place_base[kTeamWarps];
#pragma unroll
    for (int v = 0; v < kTeamWarps; ++v) {
        place_base[v] = tile_base(layout, team * kTeamWarps + v) & ~layout.control_mask;
    }
    __pipeline_wait_prior(0);
    __syncthreads();  // the matrix, the zeroed buffers and the table are visible to every warp

    const Index stride = static_cast<Index>(gridDim.x) * kStreamWarps;
    // The member's rows of the team's groups of the round into buffer b.
    auto copy_round = [&](Index round, int b) {
        const Index round_base = tile_base(layout, round);
#pragma unroll
        for (int v = 0; v < kTeamWarps; ++v) {
            const int owner = team * kTeamWarps + v;
            if (round + owner >= layout.num_tiles) continue;
            double2* const buffer = groups + (owner * 2 + b) * kStreamGroupUnits;
            const double2* const from = amps + (round_base | place_base[v]);
#pragma unroll
            for (int i = 0; i < kTeamLoads; ++i) {
                if (copy_cell[i] < 0) continue;
                const int c = copy_cell[i] >> 16, r = copy_cell[i] & 0xffff;
                __pipeline_memcpy_async(buffer + stream_cell<kRowMajor>(c, r), from + copy_offset[i], sizeof(double2));
            }
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
    // Round r: the block's warps own tiles first_tile + r * stride + warp;
    // the copies of a tile past the end are skipped and its owner idles.
    // Every warp of a team runs the same rounds, so the team barriers match.
    const Index first_tile = static_cast<Index>(blockIdx.x) * kStreamWarps;
    copy_round(first_tile, 0);
    __pipeline_commit();
    int b = 0;
    for (Index round = first_tile; round < layout.num_tiles; round += stride, b ^= 1) {
        __pipeline_wait_prior(0);  // this lane's copies of the round
        // Every member's copies of the round have landed, and every member
        // has finished with buffer b ^ 1 (its group of the round before).
        team_barrier(team);
        if (round + stride < layout.num_tiles) copy_round(round + stride, b ^ 1);
        __pipeline_commit();
        if (round + warp < layout.num_tiles) {
            multiply_group(groups + (warp * 2 + b) * kStreamGroupUnits, tile_base(layout, round + warp));
        }
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
