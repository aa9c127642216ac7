// The bin-stationary marginal engine (MarginalStrategy::BinStationary), its
// streaming path. For k >= n - 4, where takes_transposed_path says so,
// marginal_probabilities_bin_stationary hands the case to the transposed path
// (cuda/marginal_transpose.cu) instead.
//
// Each thread walks amplitudes along index bits that are NOT selected, so the
// bin it adds into never changes while it streams: it accumulates in two
// registers (the two amplitudes of one vector load), with no atomics. Bits are
// assigned to roles by the host planner (src/marginal_bin_stationary_plan.cpp;
// docs/marginal_engine.md has the full argument):
//
//   bit 0           the two amplitudes of one 16-byte (float) / 32-byte (double) load
//   bits 1..5       lane id: a warp reads 64 contiguous amplitudes, coalesced
//   3 more bits     warp id: selected bits first, so a warp owns fixed bins
//   unselected rest inner loop ("tasks" of a segment): the thread's bins are fixed
//   selected rest   outer loop: one segment per value; bins change between segments
//
// At the end of a segment the threads that share a bin are combined in a fixed
// tree (shuffles over unselected lane bits, shared memory over unselected warp
// bits) and each bin is written once: directly to the output, or to a partial
// array that a second pass sums in a fixed order when a segment is split over
// several blocks (levels of sum_rows_tree_kernel for many rows, one level of
// sum_rows_kernel for a few; second_pass_levels has the rule and its numbers).
// Where four warps hold the four bins of each 32-byte sector, they trade
// their sums through shared memory first, so that each sector is stored
// whole by one warp (kSectorStores, above stream_segments); where a
// thread's consecutive segments are the four bins (double states, segments
// of one load), neighbouring lanes store them together; and where a float
// state's segments are one or two loads, the lanes end them as a
// reduce-scatter, each keeping one segment of four (kScatter).
// The levels are chained with programmatic dependent launch, which hides their
// launch gaps (measured on an H100 at n = 24, k = 1: 0.83 -> 0.88 of the read
// roofline; n = 26 worst cell 0.89 -> 0.90). Folding the rows inside the first
// kernel instead (last block of a group adds them, found with an integer
// ticket) was tried and measured slower: its serial tail and the shared memory
// it needs cost more than the launches. There are no floating-point atomics,
// and the launch shape is a function of (n, qubits, precision) alone (the
// precision through takes_transposed_path's rule), so results are bitwise
// identical on every run and every GPU. How the kernel loads the state (plain
// or evict-first, marginal_state_loads.hpp) depends on the GPU's L2 and
// changes no addition.
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "check.cuh"
#include "device_array.cuh"
#include "launch.cuh"
#include "marginal_atomic_merge.hpp"
#include "marginal_bin_stationary_plan.hpp"
#include "marginal_common.cuh"
#include "marginal_transpose_plan.hpp"
#include "qmarg/bits.hpp"
#include "qmarg/error.hpp"

namespace qmarg {
namespace gpu {
namespace {

// The plan (src/marginal_bin_stationary_plan.hpp) is this file's vocabulary.
using namespace bin_stationary;

static_assert(sizeof(AmpPair<float>) == 1 << kLogFloatLoadBytes, "a float load as the plan counts it");
static_assert(sizeof(AmpPair<double>) == 1 << kLogDoubleLoadBytes, "a double load as the plan counts it");

// The kernels of the second pass are launched with programmatic dependent
// launch (launch.cuh), so that a level of the second pass costs no launch gap.

// The index and bin offsets of segment `segment` (outer bits deposited).
__device__ inline void segment_offsets(const Plan& plan, std::uint64_t segment, std::uint64_t& index,
                                       std::uint64_t& bin) {
    index = 0;
    bin = 0;
    for (int t = 0; t < plan.outer_bits; ++t) {
        if ((segment >> t) & 1u) {
            index ^= plan.flip_index[t] ^ (t ? plan.flip_index[t - 1] : 0);
            bin ^= plan.flip_bin[t] ^ (t ? plan.flip_bin[t - 1] : 0);
        }
    }
}

// Steps a segment counter to the next segment and `offset` (its index or its
// bin offset) with it: the increment flips the counter's bits up to its
// lowest clear one, t, so the offset changes by flips[t] (Plan::flip_index,
// Plan::flip_bin).
__device__ __forceinline__ void next_segment(const std::uint64_t (&flips)[kMaxOuterBits], std::uint64_t& segment,
                                             std::uint64_t& offset) {
    offset ^= flips[__ffsll(static_cast<long long>(~segment)) - 1];
    ++segment;
}

// How the blocks that share a segment (plan.log_parts > 0) combine their bins.
enum class Merge {
    // Each block writes its bins to its own partial row, and a second pass
    // adds the rows in a fixed order: deterministic (BinStationary).
    PartialRows,
    // Each block adds its bins into the zeroed output with one floating-point
    // atomic per bin: no second pass, but the order of the additions depends
    // on which block finishes first (BinStationaryAtomic).
    Atomic,
};

// kSegmentTasks (1 or 2; 0 runs the general loop): every segment is that
// many tasks and no warp bit is unselected (step_segments_apply), so every
// step or every second one ends a segment and no segment needs the block: the
// segments of a batch are combined level by level in groups of
// step_group<Real>() (below), not one after another.
//
// The group: 4 steps in double (64 registers, 4 blocks per SM, as the
// general form), 2 in float, where 4 took the form with 8 loads to 69
// registers (3 blocks per SM instead of 4) and all 8 to 92. Measured on an
// H100 (BinStationary, the general form / groups of 2 / groups of 4, two runs
// each, alternating): double n = 22, k = 16 high 0.83 / 0.85 / 0.88, k = 18
// 0.84 / 0.86 / 0.88; n = 24, k = 18 high 0.925 / 0.93-0.95 / 0.94-0.95; float
// n = 22, k = 16 and 18 high and descending 0.67-0.69 / 0.74-0.76 /
// 0.69-0.73; n = 24, k = 18 0.74-0.75 / 0.85-0.88 / 0.79; n = 26, k = 20 high
// 0.886 / 0.925 / 0.925, descending 0.855 / 0.885 / 0.88. Cells whose
// segments are longer ran the same kernels and measured the same.
template <class Real>
constexpr int step_group() {
    return std::is_same<Real, double>::value ? 4 : 2;
}

// What one load adds to a thread's two bins: |a0|^2 (index bit 0 clear) and
// |a1|^2 (bit 0 set), in double.
template <class Real>
__device__ __forceinline__ void load_sums(const AmpPair<Real>& a, double& sum0, double& sum1) {
    sum0 = static_cast<double>(a.x) * a.x + static_cast<double>(a.y) * a.y;
    sum1 = static_cast<double>(a.z) * a.z + static_cast<double>(a.w) * a.w;
}

// The sums of a batch's segments g .. g + N - 1 (the step form), each
// segment's kSegmentTasks loads added in step order, as the general loop
// adds them.
template <class Real, int kSegmentTasks, int kUnroll, int N>
__device__ __forceinline__ void batch_segment_sums(const AmpPair<Real> (&v)[kUnroll], int g, double (&sum0)[N],
                                                   double (&sum1)[N]) {
#pragma unroll
    for (int j = 0; j < N; ++j) {
        load_sums<Real>(v[(g + j) * kSegmentTasks], sum0[j], sum1[j]);
#pragma unroll
        for (int t = 1; t < kSegmentTasks; ++t) {
            double load0, load1;
            load_sums<Real>(v[(g + j) * kSegmentTasks + t], load0, load1);
            sum0[j] += load0;
            sum1[j] += load1;
        }
    }
}

// Without bit 0 a thread's two amplitudes share a bin: sum1 is folded into
// sum0 (and left 0), for N segments.
template <int N>
__device__ __forceinline__ void fold_bit0(const Plan& plan, double (&sum0)[N], double (&sum1)[N]) {
    if (!plan.bit0_selected) {
#pragma unroll
        for (int j = 0; j < N; ++j) {
            sum0[j] += sum1[j];
            sum1[j] = 0;
        }
    }
}

// Butterflies over the lane bits set in `mask`, lowest first, one level for
// all N segments before the next: each lane adds its partner's sums.
template <int N>
__device__ __forceinline__ void butterfly_lanes(const Plan& plan, unsigned mask, double (&sum0)[N],
                                                double (&sum1)[N]) {
#pragma unroll
    for (int b = 0; b < kLaneBits; ++b) {
        if ((mask >> b) & 1u) {
#pragma unroll
            for (int j = 0; j < N; ++j) sum0[j] += __shfl_xor_sync(0xffffffffu, sum0[j], 1 << b);
            // Without bit 0 sum1 is 0 (fold_bit0): no shuffles for it.
            if (plan.bit0_selected) {
#pragma unroll
                for (int j = 0; j < N; ++j) sum1[j] += __shfl_xor_sync(0xffffffffu, sum1[j], 1 << b);
            }
        }
    }
}

// The warp's part of a segment end, for N segments at once (both forms of
// the kernel come here, so a bin gets the same additions in the same order
// whichever form runs): fold_bit0, then each unselected lane bit, lowest
// first, adds the partner lane's sums, one level for all N before the next.
template <int N>
__device__ __forceinline__ void combine_lanes(const Plan& plan, double (&sum0)[N], double (&sum1)[N]) {
    fold_bit0(plan, sum0, sum1);
    butterfly_lanes(plan, plan.nonselected_lane_mask, sum0, sum1);
}

// The step form's segment ends as a reduce-scatter (kScatter, where
// plan.step_scatter): the same tree of additions as combine_lanes, but at
// each of the levels over the lowest log2(N) unselected lane bits a lane
// sends half of the segments it holds to its partner and keeps the other
// half, so that after them it holds one segment, the one numbered by its
// bits at those positions (its rank); the remaining unselected bits are
// butterflies over that one. A lane adds its own value and its partner's, as
// the butterfly does on both lanes, so every bin gets the same bits (a + b
// == b + a exactly): N / 2 + N / 4 + ... + 1 shuffles where the butterflies
// take N per level, and the group's N lanes of distinct rank store the N
// segments with one instruction. Needs log2(N) unselected lane bits.
template <int N>
__device__ __forceinline__ void scatter_lanes(const Plan& plan, int lane, double (&sum0)[N], double (&sum1)[N]) {
    static_assert(N >= 2 && (N & (N - 1)) == 0, "a power of two of segments");
    fold_bit0(plan, sum0, sum1);
    unsigned rest = plan.nonselected_lane_mask;
#pragma unroll
    for (int half = N / 2; half >= 1; half /= 2) {
        const int b = __ffs(static_cast<int>(rest)) - 1;
        rest &= rest - 1;
        const bool upper = (lane >> b) & 1;
        // Pairs (2j, 2j + 1) of the segments left: this lane keeps the one
        // its bit b picks, as element j.
#pragma unroll
        for (int j = 0; j < half; ++j) {
            const double send0 = upper ? sum0[2 * j] : sum0[2 * j + 1];
            const double keep0 = upper ? sum0[2 * j + 1] : sum0[2 * j];
            sum0[j] = keep0 + __shfl_xor_sync(0xffffffffu, send0, 1 << b);
            if (plan.bit0_selected) {
                const double send1 = upper ? sum1[2 * j] : sum1[2 * j + 1];
                const double keep1 = upper ? sum1[2 * j + 1] : sum1[2 * j];
                sum1[j] = keep1 + __shfl_xor_sync(0xffffffffu, send1, 1 << b);
            }
        }
    }
    // The remaining unselected bits: butterflies over the one segment kept.
    butterfly_lanes(plan, rest, reinterpret_cast<double(&)[1]>(sum0[0]), reinterpret_cast<double(&)[1]>(sum1[0]));
}

// kSectorStores with the general loop (where plan.sector_stores): at each
// segment end the 4 warps that differ in warp bits 0 and 1 (bins 0 and 1)
// trade their sums through shared memory, so that 4 neighbouring lanes store
// the 4 bins of one 32-byte sector: a store instruction writes 8 whole
// sectors where it wrote 32 bins in 32 sectors (each thread stores the sums
// of another one; every sum is the same, so the bins are the same bits).
// Written for k close to n on qubit lists in random order, where the lanes
// hold bins scattered over the output (the sweep's double n = 24, k = 20:
// lanes on bins 7, 15, 8, 6, 11), and every scattered 8-byte store is an L2
// tag lookup, a crossbar slot and mostly a hop across the L2 halves
// (docs/marginal_engine.md, "What the output costs"). In the sweep's grid
// only that cell runs it (float runs the transposed path there). Measured
// on an H100 against the kernels before (`qmarg bench marginal`, n = 24, 26,
// k = 16, 18, 20, lowest, descending and random qubits, both precisions,
// Auto and BinStationary, two runs each, alternating): the sweep's order
// 0.890-0.896 -> 0.910-0.913, every other cell level within the runs'
// spread; an earlier form gave 0.886-0.893 -> 0.899-0.907 in two more
// commands. The exchange has an instance of its own: as a runtime branch of
// the common kernel, with barriers of the four warps alone (bar.sync 1 and
// 2, 128 threads), ptxas took the general kernels from 60-62 to 77-80
// registers, and float cells that never took the branch lost 0.01 to 0.03;
// block barriers leave the registers as they were (a barrier id in a
// register instead reserves all 16 barriers).
//
// kSectorStores with kSegmentTasks = 1 (the step form, where
// plan.step_sector_stores): lanes 4m..4m+3 hold the same sums (lane bits 0
// and 1 are unselected) and a batch's segments 4j..4j+3 are bins 0..3 of a
// sector (bins 0 and 1 are the lowest outer bits), so after every fourth
// segment lane 4m + q stores bin q of the sector: one store instruction per
// four segments writes whole sectors where four wrote a bin each. Double
// states only; for the highest qubits in either order and others whose
// bins 0 and 1 were warp bits before (step_sectors_pay has the rule and the
// measurements: double n = 22, k = 16 highest 0.855 -> 0.88).
//
// Whole sectors stored evict-first: those sector stores are st.global.cs,
// so L2 evicts the bins' lines first. Why that pays was not found; the
// guess is that the output's dirty lines then leave L2 while the state still
// streams, instead of holding lines the state's loads need (at n <= 22, where
// the loads are plain) or staying for the next call to write back (at n >=
// 24). Measured on an H100 (Auto and BinStationary, alternating with plain
// stores: two or three runs each in five commands, and one engine sweep of
// each in one command): double n = 22, k = 16 highest 0.851-0.854 ->
// 0.891-0.893, descending 0.842-0.845 -> 0.878-0.880, k = 18 descending
// 0.840 -> 0.875; n = 24, k = 18 +0.006 to +0.012, k = 20 descending
// 0.889-0.893 -> 0.895-0.904; n = 26, k = 20 +0.002 to +0.006; n = 20, k =
// 14 and 16 descending about +0.04 (calls of 8 us, whose times there jump
// between runs by as much); the form's other cells level within 0.005 (k =
// 14..16 at n = 22 to 26, k = 18 at n = 26, k = 20 at n = 22 and highest at
// n = 24). The same hint on every store of a final bin (the general loop's,
// the reduce-scatter's) lost up to 0.036 in float (n = 20 to 24, k = 10..16
// on the highest, descending, scattered and random qubits) and 0.005 in the
// general loop's sector form (double n = 24, k = 20 random), so only this
// form has it.
//
// The body has two entries (below): bin_stationary_kernel, and
// step_scatter_kernel for the step form with kScatter.
template <class Real, int kUnroll, Merge kMerge, StateLoads kLoads, int kSegmentTasks = 0, bool kSectorStores = false,
          bool kScatter = false>
__device__ __forceinline__ void stream_segments(const AmpPair<Real>* amps2, Plan plan, double* out,
                                                double* partials) {
    __shared__ double warp_values[kWarps][2][32];
    launch_dependents();
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    const std::uint64_t thread_index = plan.lane_offset[lane] | plan.warp_offset[warp];
    static_assert(!kSectorStores || (kSegmentTasks <= 1 && kMerge == Merge::PartialRows), "segments of 1, unsplit");
    // The bins this thread stores: its own, or with the general loop's
    // kSectorStores those of lane store_lane of warp store_warp (bin bits 0,
    // 1 from lane bits 0, 1).
    constexpr bool kWarpSectors = kSectorStores && kSegmentTasks == 0;
    const int store_lane = kWarpSectors ? (warp & 3) * 8 + lane / 4 : lane;
    const int store_warp = kWarpSectors ? (warp & ~3) | (lane & 3) : warp;
    const std::uint64_t thread_bin = plan.lane_bin[store_lane] | plan.warp_bin[store_warp];
    // With the step form's sector stores, every lane of 4m..4m+3 stores.
    const unsigned writer_mask = plan.nonselected_lane_mask & (kSectorStores && kSegmentTasks == 1 ? ~3u : ~0u);
    const bool writer_lane = (lane & writer_mask) == 0;
    // kScatter: the bin offset, within its group of kScatterSegments, of the
    // segment this lane stores (its rank: its bits at the lowest
    // kLogScatterSegments unselected lane bits), and whether the lane is its
    // group's writer of it (zero at the unselected lane bits above those).
    std::uint64_t rank_bin = 0;
    bool scatter_writer = false;
    if constexpr (kScatter) {
        unsigned rest = plan.nonselected_lane_mask, rank = 0;
#pragma unroll
        for (int t = 0; t < kLogScatterSegments; ++t) {
            const int b = __ffs(static_cast<int>(rest)) - 1;
            rest &= rest - 1;
            rank |= ((static_cast<unsigned>(lane) >> b) & 1u) << t;
        }
        std::uint64_t rank_index;  // (not needed: the loads run on their own cursor)
        segment_offsets(plan, rank, rank_index, rank_bin);
        scatter_writer = (lane & rest) == 0;
    }

    const std::uint64_t unit = blockIdx.x;
    const int log_parts = plan.log_parts;
    const std::uint64_t part = unit & ((std::uint64_t{1} << log_parts) - 1);
    const std::uint64_t first_segment = (unit >> log_parts) << plan.log_segments_per_block;
    const std::uint64_t tasks = std::uint64_t{1} << plan.log_segment_tasks;
    const std::uint64_t steps = tasks << plan.log_segments_per_block;  // (segment, task) pairs of this block
    // Atomic merge: the blocks of a segment add into `out` (zeroed by the
    // kernel before this one, which is waited for before the first addition),
    // or into their copy of it.
    const bool add_into_out = kMerge == Merge::Atomic && log_parts != 0;
    double* dest = add_into_out ? out + (part & plan.copy_mask) * plan.copy_stride
                   : log_parts  ? partials + part * plan.bins
                                : out;
    // The thread's index bits with this block's part of its segment.
    const std::uint64_t block_index = thread_index | deposit_bits(part, plan.part_mask);
    const std::uint64_t not_task = ~plan.task_mask;

    // Two cursors walk the same (segment, task) sequence: the load cursor runs
    // kUnroll steps ahead of the accumulate cursor, so kUnroll loads are in
    // flight even when segments are a single task long.
    std::uint64_t load_segment = first_segment, load_index, load_inner = 0, load_task = 0;
    std::uint64_t sum_segment = first_segment, sum_bin, sum_task = 0;
    segment_offsets(plan, first_segment, load_index, sum_bin);
    // The thread's sums for its two bins in the current segment (one-element
    // arrays: combine_lanes takes N segments).
    double acc0[1] = {0}, acc1[1] = {0};

    for (std::uint64_t step = 0; step < steps; step += kUnroll) {
        AmpPair<Real> v[kUnroll];
#pragma unroll
        for (int j = 0; j < kUnroll; ++j) {
            if (step + j < steps) {
                v[j] = load_pair<kLoads>(amps2 + ((block_index | load_index | load_inner) >> 1));
                if (++load_task == tasks) {
                    load_task = 0;
                    load_inner = 0;
                    next_segment(plan.flip_index, load_segment, load_index);
                } else {
                    load_inner = ((load_inner | not_task) + 1) & plan.task_mask;  // next subset of task_mask
                }
            }
        }
        // The first loads are in flight while the zeroing kernel finishes.
        if (kMerge == Merge::Atomic && step == 0) wait_for_previous_kernel();
        if constexpr (kSegmentTasks > 0) {
            // Every kSegmentTasks steps are a segment of their own:
            // combine_lanes takes a group of segments at once, each shuffle
            // level for the whole group, so that their chains of shuffles and
            // adds overlap instead of running one after another (with a
            // segment end every step or two, the general loop's tests order
            // them). A segment's loads are added in step order from the
            // first, as the general loop adds them, so both forms give the
            // same bits. The host launches this only where `steps` is a
            // multiple of kUnroll and the segments are not split (one dest
            // row, no atomics).
            static_assert(kUnroll % kSegmentTasks == 0, "whole segments in a batch");
            constexpr int kSegments = kUnroll / kSegmentTasks;
            constexpr int kGroup = kSegments < step_group<Real>() ? kSegments : step_group<Real>();
            static_assert(!kSectorStores || kSegments % 4 == 0, "whole sectors in a batch");
            if constexpr (kScatter) {
                // Groups of kScatterSegments segments (all 8 of a batch at
                // once took ptxas to 92 registers), each group's first
                // segment at a multiple of 4 of the block's count, so that
                // its segments' bins are sum_bin and the lowest two outer
                // bits' images (rank_bin).
                static_assert(!kSectorStores && kSegments % kScatterSegments == 0, "whole groups in a batch");
#pragma unroll
                for (int g = 0; g < kSegments; g += kScatterSegments) {
                    double sum0[kScatterSegments], sum1[kScatterSegments];
                    batch_segment_sums<Real, kSegmentTasks>(v, g, sum0, sum1);
                    scatter_lanes(plan, lane, sum0, sum1);
                    if (scatter_writer) {
                        const std::uint64_t bin = thread_bin | sum_bin | rank_bin;
                        dest[bin] = sum0[0];
                        if (plan.bit0_selected) dest[bin | plan.bit0_bin] = sum1[0];
                    }
#pragma unroll
                    for (int j = 0; j < kScatterSegments; ++j) next_segment(plan.flip_bin, sum_segment, sum_bin);
                }
                continue;
            }
            // kSectorStores: the sums this lane stores, those of segment
            // 4j + q of the batch (q = lane & 3; one register each instead
            // of four sums held).
            const int q = lane & 3;
            double picked0 = 0, picked1 = 0;
#pragma unroll
            for (int g = 0; g < kSegments; g += kGroup) {
                double sum0[kGroup], sum1[kGroup];
                batch_segment_sums<Real, kSegmentTasks>(v, g, sum0, sum1);
                combine_lanes(plan, sum0, sum1);
#pragma unroll
                for (int j = 0; j < kGroup; ++j) {
                    const int segment = g + j;
                    if (kSectorStores) {
                        if (q == segment % 4) {
                            picked0 = sum0[j];
                            picked1 = sum1[j];
                        }
                        if (segment % 4 == 3 && writer_lane) {
                            // sum_bin is the sector's bin 3 (bins 0 and 1
                            // are the lowest outer bits): this lane's is q.
                            const std::uint64_t sector = sum_bin & ~std::uint64_t{3};
                            const std::uint64_t bin = thread_bin | sector | static_cast<unsigned>(q);
                            // Evict-first (st.global.cs): "Whole sectors
                            // stored evict-first", above stream_segments.
                            __stcs(dest + bin, picked0);
                            if (plan.bit0_selected) __stcs(dest + (bin | plan.bit0_bin), picked1);
                        }
                    } else if (writer_lane) {
                        const std::uint64_t bin = thread_bin | sum_bin;
                        dest[bin] = sum0[j];
                        if (plan.bit0_selected) dest[bin | plan.bit0_bin] = sum1[j];
                    }
                    next_segment(plan.flip_bin, sum_segment, sum_bin);
                }
            }
        } else {
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) {
                if (step + j >= steps) continue;
                double load0, load1;
                load_sums<Real>(v[j], load0, load1);
                acc0[0] += load0;
                acc1[0] += load1;
                if (++sum_task < tasks) continue;
                // End of a segment (the same step for every thread of the block):
                // combine the threads that share a bin, in a fixed order.
                sum_task = 0;
                combine_lanes(plan, acc0, acc1);
                if (plan.nonselected_warp_mask != 0) {
                    // Lanes that hold their warp's bins publish them; the warps whose
                    // unselected warp bits are zero then sum over those bits in order.
                    if (writer_lane) {
                        warp_values[warp][0][lane] = acc0[0];
                        warp_values[warp][1][lane] = acc1[0];
                    }
                    __syncthreads();  // all warps published before any reads
                    if (writer_lane && (warp & plan.nonselected_warp_mask) == 0) {
                        acc0[0] = 0;
                        acc1[0] = 0;
                        for (unsigned w = 0; w < kWarps; ++w) {
                            if ((w & ~plan.nonselected_warp_mask) == static_cast<unsigned>(warp)) {
                                acc0[0] += warp_values[w][0][lane];
                                acc1[0] += warp_values[w][1][lane];
                            }
                        }
                    }
                    __syncthreads();  // reads done before the next segment overwrites warp_values
                }
                if (add_into_out && plan.gather_atomics) {
                    // The block's only segment end (a split segment is one
                    // per block), so warp_values is not reused after this.
                    double* ranked = &warp_values[0][0][0];
                    if (writer_lane && (warp & plan.nonselected_warp_mask) == 0) {
                        const unsigned rank = plan.lane_rank[lane] | plan.warp_rank[warp];
                        ranked[rank] = acc0[0];
                        if (plan.bit0_selected) ranked[rank | plan.bit0_rank] = acc1[0];
                    }
                    __syncthreads();  // every rank stored before any is added
                    const unsigned ranks = 1u << __popcll(plan.gather_mask);
                    for (unsigned r = threadIdx.x; r < ranks; r += kThreads) {
                        atomicAdd(dest + (sum_bin | deposit_bits(r, plan.gather_mask)), ranked[r]);
                    }
                } else if (kSectorStores) {
                    // warp_values as [acc][warp][lane], each warp's lanes
                    // XOR-swizzled by 8 (warp & 3) so that the gathering reads
                    // take two wavefronts; the second barrier keeps the next
                    // segment's sums out until every thread has read these.
                    double* values = &warp_values[0][0][0];
                    const int swizzle = (warp & 3) << 3;
                    values[warp * 32 + (lane ^ swizzle)] = acc0[0];
                    values[(kWarps + warp) * 32 + (lane ^ swizzle)] = acc1[0];
                    __syncthreads();
                    const int slot = store_warp * 32 + (store_lane ^ ((lane & 3) << 3));
                    const std::uint64_t bin = thread_bin | sum_bin;
                    dest[bin] = values[slot];
                    if (plan.bit0_selected) dest[bin | plan.bit0_bin] = values[kWarps * 32 + slot];
                    __syncthreads();
                } else if (writer_lane && (warp & plan.nonselected_warp_mask) == 0) {
                    const std::uint64_t bin = thread_bin | sum_bin;
                    if (add_into_out) {
                        atomicAdd(dest + bin, acc0[0]);
                        if (plan.bit0_selected) atomicAdd(dest + (bin | plan.bit0_bin), acc1[0]);
                    } else {
                        dest[bin] = acc0[0];
                        if (plan.bit0_selected) dest[bin | plan.bit0_bin] = acc1[0];
                    }
                }
                acc0[0] = 0;
                acc1[0] = 0;
                next_segment(plan.flip_bin, sum_segment, sum_bin);
            }
        }
    }
}

template <class Real, int kUnroll, Merge kMerge, StateLoads kLoads, int kSegmentTasks = 0, bool kSectorStores = false>
__global__ void __launch_bounds__(kThreads) bin_stationary_kernel(const AmpPair<Real>* amps2, Plan plan, double* out,
                                                                  double* partials) {
    stream_segments<Real, kUnroll, kMerge, kLoads, kSegmentTasks, kSectorStores>(amps2, plan, out, partials);
}

// The step form with kScatter (float, 8 loads in flight), held to 64
// registers (4 blocks per SM, as the other forms with 8 loads): without the
// bound ptxas took it to 71 (3 blocks per SM); groups of 2 segments instead
// stayed at 58 unbound and measured 0.003 to 0.009 lower at float n = 26,
// k = 19 and 20, two runs each (step_scatter_pays has the rest).
template <class Real, int kUnroll, StateLoads kLoads, int kSegmentTasks>
__global__ void __launch_bounds__(kThreads, 4) step_scatter_kernel(const AmpPair<Real>* amps2, Plan plan, double* out) {
    stream_segments<Real, kUnroll, Merge::PartialRows, kLoads, kSegmentTasks, false, true>(amps2, plan, out, nullptr);
}

// One level of the fixed-order second pass. `in` holds `parts` rows of `bins`
// partial sums, `row_stride` doubles apart (`bins`; further for the atomic
// merge's copies of the output); thread (group, bin) adds rows
// [group*per_group, +per_group) in order into out[group][bin]. Neighbouring
// threads take neighbouring bins, so every row is read coalesced.
__global__ void sum_rows_kernel(const double* in, std::uint64_t bins, std::uint64_t row_stride, std::uint64_t groups,
                                std::uint64_t per_group, double* out) {
    launch_dependents();
    wait_for_previous_kernel();
    const std::uint64_t id = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (id >= groups * bins) return;
    const std::uint64_t bin = id % bins;
    const std::uint64_t group = id / bins;
    const double* row = in + group * per_group * row_stride + bin;
    double sum = 0;
    for (std::uint64_t p = 0; p < per_group; ++p) sum += row[p * row_stride];
    out[id] = sum;
}

// One level of the second pass as a tree, for many rows: a block adds
// `per_group` rows of up to 32 neighbouring bins of one group. Thread (slice
// s, bin b) adds rows s, s + S, s + 2S, ... in order (S = 256 / tile bins
// slices), then the S slice sums are added in a fixed halving tree in shared
// memory. Rows are read coalesced along the bins, and one level adds up to
// 8 S rows (1024 rows of one or two bins) with a short serial chain, where
// sum_rows_kernel needs a level per 32 rows.

// kFullChain: every thread adds exactly kTreeSerialRows rows, and issues
// their loads before the first addition (the same additions in the same
// order, so the same bits). Measured on an H100 with the loads issued
// together for every level: +0.02-0.03 of the read roofline where a thread
// adds 8 rows (double n = 24, k = 5: 0.878 -> 0.898), -0.005-0.012 where it
// adds 1 to 4, so only full chains take it.
template <bool kFullChain>
__global__ void __launch_bounds__(kTreeThreads) sum_rows_tree_kernel(const double* in, std::uint64_t bins,
                                                                    std::uint64_t per_group, double* out) {
    __shared__ double partial[kTreeThreads];
    launch_dependents();
    wait_for_previous_kernel();
    const unsigned tile_bins = static_cast<unsigned>(tree_tile_bins(bins));
    const unsigned slices = static_cast<unsigned>(tree_slices(bins));
    const unsigned b = threadIdx.x % tile_bins;
    const unsigned slice = threadIdx.x / tile_bins;
    const std::uint64_t tiles = bins / tile_bins;
    const std::uint64_t group = blockIdx.x / tiles;
    const std::uint64_t bin = (blockIdx.x % tiles) * tile_bins + b;
    const double* rows = in + group * per_group * bins + bin;
    double sum = 0;
    if constexpr (kFullChain) {
        double row[kTreeSerialRows];
#pragma unroll
        for (std::uint64_t j = 0; j < kTreeSerialRows; ++j) row[j] = rows[(slice + j * slices) * bins];
#pragma unroll
        for (std::uint64_t j = 0; j < kTreeSerialRows; ++j) sum += row[j];
    } else {
        for (std::uint64_t r = slice; r < per_group; r += slices) sum += rows[r * bins];
    }
    partial[threadIdx.x] = sum;
    for (unsigned half = slices / 2; half >= 1; half /= 2) {
        __syncthreads();
        if (slice < half) partial[threadIdx.x] += partial[threadIdx.x + half * tile_bins];
    }
    if (slice == 0) out[group * bins + bin] = partial[threadIdx.x];
}

// Small states (n < kMinQubits, or a compact state that small): a thread per
// bin sums its 2^(n-k) amplitudes (n: the full state's qubits, the bits of
// fixed_mask held at fixed_values).
template <class Real>
__global__ void small_state_kernel(const Real* amps, int n, const __grid_constant__ QubitList qubits,
                                   std::uint64_t fixed_mask, std::uint64_t fixed_values, double* out) {
    const std::uint64_t bins = std::uint64_t{1} << qubits.count;
    const std::uint64_t bin = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (bin >= bins) return;
    std::uint64_t selected_mask = 0;
    for (int j = 0; j < qubits.count; ++j) selected_mask |= std::uint64_t{1} << qubits.qubits[j];
    const std::uint64_t others = ((std::uint64_t{1} << n) - 1) & ~selected_mask & ~fixed_mask;
    const std::uint64_t base = scatter_bits(bin, qubits.qubits, qubits.count) | fixed_values;
    double sum = 0;
    std::uint64_t rest = 0;
    do {
        const std::uint64_t i = base | rest;
        const double re = amps[2 * i], im = amps[2 * i + 1];
        sum += re * re + im * im;
        rest = ((rest | ~others) + 1) & others;
    } while (rest != 0);
    out[bin] = sum;
}

// A launch on the default stream with programmatic dependent launch: the
// kernel may start while the one before it runs, and waits for it with
// wait_for_previous_kernel before it touches what that kernel writes.
struct DependentLaunch {
    cudaLaunchConfig_t config = {};
    cudaLaunchAttribute overlap = {};
    DependentLaunch(std::uint64_t blocks, int threads) {
        config.gridDim = dim3(static_cast<unsigned>(blocks));
        config.blockDim = dim3(static_cast<unsigned>(threads));
        config.stream = 0;
        overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        overlap.val.programmaticStreamSerializationAllowed = 1;
        config.attrs = &overlap;
        config.numAttrs = 1;
    }
};

// Zeroes the bins that the atomic merge adds into, and lets the streaming
// kernel launch behind it at once (launch_dependents).
__global__ void __launch_bounds__(kThreads) zero_bins_kernel(double* out, std::uint64_t bins) {
    launch_dependents();
    const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
    for (std::uint64_t b = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < bins; b += stride)
        out[b] = 0;
}
// At most this many zeroing blocks: one wave on an H100, so that the
// streaming kernel's blocks can start as soon as all of them have.
constexpr std::uint64_t kMaxZeroBlocks = 1024;

// Launches a plan: the streaming kernel, and where a segment is split over
// several blocks, what merges their bins (kMerge).
template <class Real, int kUnroll, Merge kMerge, StateLoads kLoads>
void run_plan(const AmpPair<Real>* amps2, const Launch& launch, double* out) {
    if (launch.blocks > 0x7fffffffu) {
        throw Error("BinStationary: " + std::to_string(launch.blocks) + " blocks exceed the grid limit");
    }
    const std::uint64_t parts = std::uint64_t{1} << launch.plan.log_parts;
    const std::uint64_t bins = launch.plan.bins;
    if (parts == 1) {
        // Nothing is merged, so the step form serves both merges.
        if (step_segments_apply(launch.plan, kUnroll)) {
            // (Only float plans with 8 loads in flight scatter: step_scatter_pays.)
            if constexpr (std::is_same<Real, float>::value && kUnroll == kFloatLoadsInFlight) {
                if (launch.plan.step_scatter) {
                    if (launch.plan.log_segment_tasks == 0) {
                        step_scatter_kernel<Real, kUnroll, kLoads, 1>
                            <<<static_cast<unsigned>(launch.blocks), kThreads>>>(amps2, launch.plan, out);
                    } else {
                        step_scatter_kernel<Real, kUnroll, kLoads, 2>
                            <<<static_cast<unsigned>(launch.blocks), kThreads>>>(amps2, launch.plan, out);
                    }
                    QMARG_CHECK_LAUNCH(step_scatter_kernel);
                    return;
                }
            }
            // (Only a double plan stores whole sectors in the step form: step_sectors_pay.)
            constexpr bool kStepSectors = std::is_same<Real, double>::value;
            if (kStepSectors && launch.plan.step_sector_stores) {  // segments of one task
                bin_stationary_kernel<Real, kUnroll, Merge::PartialRows, kLoads, 1, kStepSectors>
                    <<<static_cast<unsigned>(launch.blocks), kThreads>>>(amps2, launch.plan, out, nullptr);
            } else if (launch.plan.log_segment_tasks == 0) {
                bin_stationary_kernel<Real, kUnroll, Merge::PartialRows, kLoads, 1>
                    <<<static_cast<unsigned>(launch.blocks), kThreads>>>(amps2, launch.plan, out, nullptr);
            } else {
                bin_stationary_kernel<Real, kUnroll, Merge::PartialRows, kLoads, 2>
                    <<<static_cast<unsigned>(launch.blocks), kThreads>>>(amps2, launch.plan, out, nullptr);
            }
        } else if (launch.plan.sector_stores) {
            bin_stationary_kernel<Real, kUnroll, Merge::PartialRows, kLoads, 0, true>
                <<<static_cast<unsigned>(launch.blocks), kThreads>>>(amps2, launch.plan, out, nullptr);
        } else {
            bin_stationary_kernel<Real, kUnroll, kMerge, kLoads>
                <<<static_cast<unsigned>(launch.blocks), kThreads>>>(amps2, launch.plan, out, nullptr);
        }
        QMARG_CHECK_LAUNCH(bin_stationary_kernel);
        return;
    }
    if constexpr (kMerge == Merge::Atomic) {
        // The blocks add into `out` itself, or into copies of it that a last
        // kernel adds up (choose_merge says where that pays).
        const std::uint64_t copies = launch.plan.copy_mask + 1;
        const std::uint64_t added_bins = copies == 1 ? bins : copies * launch.plan.copy_stride;
        DeviceArray<double> copies_of_out(copies == 1 ? 0 : added_bins, "BinStationaryAtomic copies of the bins");
        double* const added = copies == 1 ? out : copies_of_out.data();
        const std::uint64_t zero_blocks = std::min(kMaxZeroBlocks, (added_bins + kThreads - 1) / kThreads);
        zero_bins_kernel<<<static_cast<unsigned>(zero_blocks), kThreads>>>(added, added_bins);
        QMARG_CHECK_LAUNCH(zero_bins_kernel);
        DependentLaunch streaming(launch.blocks, kThreads);
        QMARG_CUDA_CHECK(cudaLaunchKernelEx(&streaming.config, bin_stationary_kernel<Real, kUnroll, kMerge, kLoads>,
                                            amps2, launch.plan, added, static_cast<double*>(nullptr)));
        if (copies > 1) {
            DependentLaunch sum((bins + kThreads - 1) / kThreads, kThreads);
            QMARG_CUDA_CHECK(cudaLaunchKernelEx(&sum.config, sum_rows_kernel, static_cast<const double*>(added), bins,
                                                launch.plan.copy_stride, std::uint64_t{1}, copies, out));
        }
        // `copies_of_out` goes back to the stream-ordered pool after the kernels that use it.
        return;
    }
    // Partial rows, then levels that add groups of rows, until one row is
    // left: the output. Every level's size is a function of (parts, bins)
    // alone, so the order of the additions is fixed.
    const std::vector<Level> levels = second_pass_levels(launch.plan.log_parts, bins);
    std::uint64_t scratch_rows = parts;
    for (std::size_t j = 0; j + 1 < levels.size(); ++j) scratch_rows += levels[j].groups;
    DeviceArray<double> scratch(scratch_rows * bins, "BinStationary partial bins");
    bin_stationary_kernel<Real, kUnroll, kMerge, kLoads>
        <<<static_cast<unsigned>(launch.blocks), kThreads>>>(amps2, launch.plan, out, scratch.data());
    QMARG_CHECK_LAUNCH(bin_stationary_kernel);
    const double* in = scratch.data();
    double* next = scratch.data() + parts * bins;
    std::uint64_t rows = parts;
    for (const Level& level : levels) {
        double* level_out = level.groups == 1 ? out : next;
        const std::uint64_t per_group = rows / level.groups;
        if (level.tree) {
            DependentLaunch tree(level.groups * (bins / tree_tile_bins(bins)), kTreeThreads);
            const bool full_chain = per_group == tree_level_rows(bins);
            QMARG_CUDA_CHECK(cudaLaunchKernelEx(&tree.config,
                                                full_chain ? sum_rows_tree_kernel<true> : sum_rows_tree_kernel<false>,
                                                in, bins, per_group, level_out));
        } else {
            DependentLaunch sum((level.groups * bins + kThreads - 1) / kThreads, kThreads);
            QMARG_CUDA_CHECK(
                cudaLaunchKernelEx(&sum.config, sum_rows_kernel, in, bins, bins, level.groups, per_group, level_out));
        }
        in = level_out;
        next += level.groups * bins;
        rows = level.groups;
    }
    // `scratch` goes back to the stream-ordered pool after the kernels that use it.
}

// Launches a plan with the loads in flight that suit it. 8 loads of a double
// state need 94 registers (2 blocks per SM): at n = 30 they read at 0.93 of
// the roofline against 0.99-1.00 with 4 (62 registers), and at n = 24 they are
// level on average and lose up to 0.06 in some cells. A float load is half as
// wide, and 8 of them take 62 registers (4 blocks per SM) against 46 (5
// blocks) for 4: 128 KiB in flight per SM instead of 80. Measured on an H100,
// float, mean over k = 1..20 in four layouts, the plans alone alternating:
// n = 22 0.722 -> 0.738, n = 24 0.844 -> 0.855, n = 26 0.930 -> 0.942, better
// or level in every cell; in the sweeps n = 28 is level and n = 30 1.5% slower
// in every cell (2.77 -> 2.83 ms), where a block runs 512 steps instead of 8
// to 128 and its loads are already in flight. The number of loads does not
// change the order of the additions, so the bins are the same bits either way.
template <class Real, Merge kMerge, StateLoads kLoads>
void run_streaming(const AmpPair<Real>* amps2, int num_qubits, const Launch& launch, double* out) {
    if constexpr (std::is_same<Real, float>::value) {
        if (loads_in_flight(num_qubits, true) == kFloatLoadsInFlight) {
            return run_plan<Real, kFloatLoadsInFlight, kMerge, kLoads>(amps2, launch, out);
        }
    }
    run_plan<Real, kLoadsInFlight, kMerge, kLoads>(amps2, launch, out);
}

// The same, with the kernels that load the state as `loads` says (one
// instantiation per StateLoads; state_loads_for has the rule).
template <class Real, Merge kMerge>
void run_streaming(const AmpPair<Real>* amps2, int num_qubits, const Launch& launch, StateLoads loads,
                   double* out) {
    with_state_loads(loads, [&](auto chosen) {
        run_streaming<Real, kMerge, decltype(chosen)::value>(amps2, num_qubits, launch, out);
    });
}

// `num_qubits` and `qubits` are the full state's; with fixed bits the plan is
// the compact state's, and so are the rules that choose it.
template <class Real, Merge kMerge>
void run_streaming_path(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits, StateLoads loads,
                        double* out, const FixedBits& fixed = {}) {
    const int k = static_cast<int>(qubits.size());
    const int compact_qubits = fixed.compact_qubits(num_qubits);
    if (compact_qubits < kMinQubits) {
        const QubitList list = make_qubit_list(qubits);
        const std::uint64_t bins = std::uint64_t{1} << k;
        const unsigned blocks = static_cast<unsigned>((bins + 255) / 256);
        small_state_kernel<Real><<<blocks, 256>>>(reinterpret_cast<const Real*>(amps), num_qubits, list, fixed.mask,
                                                  fixed.values, out);
        QMARG_CHECK_LAUNCH(small_state_kernel);
        return;
    }
    const bool single_precision = std::is_same<Real, float>::value;
    constexpr bool kAtomics = kMerge == Merge::Atomic;
    // Only the atomic merge depends on the device (choose_merge).
    const MergeDevice device = kAtomics ? merge_device() : MergeDevice{};
    MergePlan chosen = fixed.mask == 0
                           ? choose_merge(num_qubits, qubits, single_precision, kAtomics, device)
                           : choose_merge(compact_qubits, fixed.compact(qubits), single_precision, kAtomics, device);
    if (fixed.mask != 0) chosen.launch = spread_onto_full_index(chosen.launch, fixed);
    const auto* amps2 = reinterpret_cast<const AmpPair<Real>*>(amps + fixed.values);
    if (chosen.atomic) {
        run_streaming<Real, Merge::Atomic>(amps2, compact_qubits, chosen.launch, loads, out);
    } else {
        run_streaming<Real, Merge::PartialRows>(amps2, compact_qubits, chosen.launch, loads, out);
    }
}

// k >= n - 4: the output is large, and it is written in tiles
// (cuda/marginal_transpose.cu) unless the streaming kernel writes it
// coalesced on a small state (takes_transposed_path has the rule). The
// transposed path splits no segment, so it has nothing to merge.
// Both paths load the state as state_loads_for_device says.
// With fixed bits, every rule (the path, the loads, the plan) sees the
// compact state: the amplitudes read.
template <class Real, Merge kMerge>
void run_bin_stationary(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits, double* out,
                        const FixedBits& fixed = {}) {
    const bool single_precision = std::is_same<Real, float>::value;
    const int compact_qubits = fixed.compact_qubits(num_qubits);
    const StateLoads loads =
        state_loads_for_device(compact_qubits, static_cast<int>(qubits.size()), single_precision);
    const bool transposed = fixed.mask == 0
                                ? takes_transposed_path(num_qubits, qubits, single_precision)
                                : takes_transposed_path(compact_qubits, fixed.compact(qubits), single_precision);
    if (transposed) {
        marginal_probabilities_transpose(amps, num_qubits, qubits, loads, out, fixed);
        return;
    }
    run_streaming_path<Real, kMerge>(amps, num_qubits, qubits, loads, out, fixed);
}

}  // namespace

template <class Real>
void marginal_probabilities_bin_stationary(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                           double* out) {
    run_bin_stationary<Real, Merge::PartialRows>(amps, num_qubits, qubits, out);
}

template <class Real>
void marginal_probabilities_bin_stationary_atomic(const std::complex<Real>* amps, int num_qubits,
                                                  const Qubits& qubits, double* out) {
    run_bin_stationary<Real, Merge::Atomic>(amps, num_qubits, qubits, out);
}

template <class Real>
void marginal_probabilities_bin_stationary_streaming(const std::complex<Real>* amps, int num_qubits,
                                                     const Qubits& qubits, StateLoads loads, double* out) {
    run_streaming_path<Real, Merge::PartialRows>(amps, num_qubits, qubits, loads, out);
}

template <class Real>
void conditional_marginal_bin_stationary(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                         const FixedBits& fixed, double* out) {
    check_fixed_bits(fixed, num_qubits, qubits);
    run_bin_stationary<Real, Merge::PartialRows>(amps, num_qubits, qubits, out, fixed);
}

template void marginal_probabilities_bin_stationary<float>(const std::complex<float>*, int, const Qubits&, double*);
template void marginal_probabilities_bin_stationary<double>(const std::complex<double>*, int, const Qubits&,
                                                            double*);
template void marginal_probabilities_bin_stationary_atomic<float>(const std::complex<float>*, int, const Qubits&,
                                                                   double*);
template void marginal_probabilities_bin_stationary_atomic<double>(const std::complex<double>*, int, const Qubits&,
                                                                    double*);
template void marginal_probabilities_bin_stationary_streaming<float>(const std::complex<float>*, int, const Qubits&,
                                                                      StateLoads, double*);
template void marginal_probabilities_bin_stationary_streaming<double>(const std::complex<double>*, int,
                                                                       const Qubits&, StateLoads, double*);
template void conditional_marginal_bin_stationary<float>(const std::complex<float>*, int, const Qubits&,
                                                         const FixedBits&, double*);
template void conditional_marginal_bin_stationary<double>(const std::complex<double>*, int, const Qubits&,
                                                          const FixedBits&, double*);

}  // namespace gpu
}  // namespace qmarg
