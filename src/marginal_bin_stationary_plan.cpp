// BinStationary's plan and merge rules (marginal_bin_stationary_plan.hpp).
// Every number below was measured with the kernels of
// cuda/marginal_bin_stationary.cu on an H100; the kernels' names (run_plan,
// bin_stationary_kernel, sum_rows_kernel, ...) are that file's.
#include "marginal_bin_stationary_plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <vector>

#include "marginal_atomic_merge.hpp"
#include "marginal_transpose_plan.hpp"

namespace qmarg {
namespace gpu {
namespace bin_stationary {
namespace {

// tau, the tasks per block: 2^(n - 9 - 12) for large n (about 4096 blocks),
// at least 2^3. A function of n alone: the summation order must not depend on
// the GPU the code runs on. Measured on an H100 against 2^13 blocks / at least
// 2^2 tasks: equal at n = 30, 2-10 points better at n = 22-26 (less per-block
// overhead). Blocks of whole segments follow their own rules
// (log_whole_segment_tau, log_block_tasks).
constexpr int kLogTargetBlocks = 12;
constexpr int kLogMinTasks = 3;
// A block of whole segments (segments no longer than tau, none split, so
// nothing to merge) reads at least 2^kLogMinWholeSegmentBlockBytes of the
// state where that leaves at least 2^kLogMinWholeSegmentBlocks blocks:
// tau's minimum of 2^3 tasks (one 32-byte load a thread each) in double,
// 2^4 in float, whose blocks of 2^3 tasks read 32 KiB. It changes float
// states of 2^22 to 2^24 amplitudes (2^25 and more already run >= 2^4 tasks
// a block), there on qubit lists whose segments are at most 2^3 tasks long
// (the highest k >= n - 9 qubits, descending ones, and others that leave few
// qubits above 5 unselected): twice the segments a block, half the blocks.
// Measured on an H100 (`qmarg bench marginal`, Auto, float, n = 20..26, k =
// 12, 14..20, five layouts, seed 1, two runs each, alternating with blocks
// of tau tasks; 81 cells whose plan changes): n = 24 mean +0.015, the
// highest k = 16..19 0.899 / 0.819 / 0.844 / 0.860 -> 0.911 / 0.850 / 0.875
// / 0.892, descending 0.896 / 0.817 / 0.839 / 0.850 -> 0.910 / 0.855 /
// 0.864 / 0.878, the one loss k = 19 random 0.910 -> 0.895; n = 22 mean
// +0.017, the highest and descending k = 14..17 +0.01 to +0.06; n = 23
// mean +0.003 (-0.018 to +0.023); the 154 cells whose plan stays level
// (-0.003, the spread between the two processes). At n = 20 the same
// blocks (128 of them, fewer than the SMs) lost 0.04 on average and up to
// 0.11, hence the minimum count of blocks. The plans of few and of many parts
// both follow it; with the precision in the plan, the launch shape stays a
// function of (n, qubits, precision).
constexpr int kLogMinWholeSegmentBlockBytes = 16;
constexpr int kLogMinWholeSegmentBlocks = 9;
// The log2 of the tasks a block of whole segments runs at least, for a plan
// of 2^task_bits tasks whose tau is 2^log_tau: log_tau or log_tau + 1.
int log_whole_segment_tau(int task_bits, int log_tau, bool single_precision) {
    // A task is one load of an amplitude pair a thread.
    const int log_load_bytes = single_precision ? kLogFloatLoadBytes : kLogDoubleLoadBytes;
    const int log_min_tasks = kLogMinWholeSegmentBlockBytes - (kLaneBits + kWarpBits) - log_load_bytes;
    return std::max(log_tau, std::min(log_min_tasks, task_bits - kLogMinWholeSegmentBlocks));
}
// The log2 of the tasks a block of whole segments runs: as above, but on a
// double state whose segments are at most kLoadsInFlight tasks (the highest
// or descending k >= n - 8 qubits, lists that leave at most two qubits above
// 5 unselected) a block runs one batch, kLoadsInFlight steps (32 KiB of the
// state), and ends. Measured on an H100 (`qmarg bench marginal`,
// double, Auto and BinStationary, n = 22, 24, 26, k = 14..20, five layouts,
// seed 1, two runs each alternating with the blocks above): n = 24, k = 20
// highest 0.898-0.899 -> 0.907-0.908, descending 0.899-0.900 -> 0.904-0.906;
// k = 18 on either +0.005 to +0.009; n = 26, k = 18 and 20 on either +0.011
// to +0.014; n = 22, k = 16 descending 0.880 -> 0.898, k = 18 +0.005 to
// +0.010, k = 20 lowest and scattered +0.006; the other cells level within
// 0.003. Blocks of 128 and 256 KiB lost there instead (n = 24, k = 20
// highest 0.900 -> 0.892 -> 0.888; n = 22, k = 18 highest 0.874 -> 0.852).
// Only where that leaves at least 2^kLogMinOneBatchBlocks blocks (n >= 22):
// at n = 20 (512 blocks of one batch against 256 of two) the highest and
// descending k = 12 lost 0.79 -> 0.76 and k = 16 random 0.78 -> 0.74, the
// other k = 12..16 cells level (same run, alternating, two runs each).
constexpr int kLogOneBatchTasks = 2;
constexpr int kLogMinOneBatchBlocks = 11;
static_assert(1 << kLogOneBatchTasks == kLoadsInFlight, "a batch of double loads");
int log_block_tasks(int task_bits, int inner_bits, int log_whole_tau, bool single_precision) {
    const bool one_batch = !single_precision && inner_bits <= kLogOneBatchTasks &&
                           task_bits - kLogOneBatchTasks >= kLogMinOneBatchBlocks;
    return one_batch ? kLogOneBatchTasks : log_whole_tau;
}
// The cap on the parts of a segment, 2^(n - k - kLogPartialShare). Measured on
// an H100 (ratio of the call to the read roofline, caps 2^(n-k-4) .. 2^(n-k-7)
// alternating in one process): 7 is best or level in almost every cell, and
// far ahead where many bins meet long segments (qubits 0..k-1): double n = 24,
// k = 12: 0.83 / 0.86 / 0.89 / 0.94 for 4 / 5 / 6 / 7; k = 16: 0.85 -> 0.95;
// n = 26, k = 20: 0.93 -> 0.98; float n = 24, k = 12: 0.74 -> 0.86. Means over
// k = 5..20 in four layouts: double n = 24 0.892 -> 0.911, n = 26 0.958 ->
// 0.968; float n = 24 0.828 -> 0.848, n = 26 0.913 -> 0.926.
constexpr int kLogPartialShare = 7;
// ... but never below 2^8 blocks where a segment can be cut that far: at
// n = 20 the cap alone left 16 blocks for k = 10 on qubits 0..9 (0.27 of the
// roofline, against 0.60 with the old cap and 128 blocks). At n = 24 the cap
// leaves 256 blocks for every k on the lowest qubits, the best of the caps.
constexpr int kLogMinSplitBlocks = 8;
// How many blocks the parts of split segments aim at. Many: about 2^12 (tau
// above), short blocks in waves, which suits the atomic merge: the blocks
// finish over the whole call, so their atomics on a bin arrive spread out.
// Few: at most 2^8 on states of up to 2^26 amplitudes (one wave of long
// blocks on an H100), which suits partial rows: 16 times fewer rows for the
// second pass and less per-block work. First measured with 2^9 blocks of
// contiguous runs, on an H100 (n = 22..26,
// k = 1..20, five layouts, the two alternating; docs/marginal_engine.md):
// with partial rows, few parts took double n = 24 from 45 to 55 cells of 60
// at >= 0.9 of the read roofline and float n = 24 from 46 to 55 at >= 0.85,
// level at n = 22 and 26; with atomics where they pay on many parts, many
// parts stay ahead (float n = 24, k = 1: 0.96 against 0.92, where one wave
// of blocks ends in a burst of atomics on the same bins). Larger states keep
// many parts: their blocks already run >= 128 tasks, and the merge is <= 1 %
// of the call. With interleaved parts (assign_part_bits), 2^8 blocks beat
// 2^9 (H100, n = 22..26, k = 1..20, five layouts, both precisions, two runs
// alternating, ratio to the read roofline): BinStationary mean float n = 24
// 0.885 -> 0.896, n = 26 0.950 -> 0.958, double n = 24 0.936 -> 0.947,
// n = 26 0.981 -> 0.987; float n = 24, k = 8 lowest 0.829 -> 0.875, k = 14..16
// random 0.87 -> 0.93-0.94 (the segments no longer split: no second pass);
// at n = 22, k = 3..5 +0.02 to +0.05 and k = 2 -0.02. The losses: float
// n = 24, k = 10 on the highest or descending qubits 0.87 -> 0.84 (128
// segments of two parts instead of four), k = 6 there -0.02. 2^10 blocks
// were worse everywhere.
// FewInFours: float states of up to 2^24 amplitudes cut a segment that few
// parts split in two into four instead (2^9 blocks where those plans have
// 2^8). Measured on an H100 (`qmarg bench marginal`, n = 22..26, k = 10, 14,
// 16, four layouts, both precisions, three runs each, alternating with the
// plain few parts; the plans that differ are k = 10 on the highest and on
// descending qubits, k = 14 scattered and, at n = 26, k = 16 lowest):
// BinStationary float n = 24, k = 10 highest 0.834 -> 0.863 and descending
// 0.832 -> 0.864, n = 22 +0.012 and +0.010; the losses float n = 24, k = 14
// scattered 0.882 -> 0.871 (Auto 0.923 -> 0.915), float n = 26 k = 16 lowest
// -0.007, and the double cells that changed at n = 24 and 26, -0.003 to
// -0.018 (n = 26, k = 10 highest 0.991 -> 0.972), so only small float states
// take it (docs/marginal_engine.md, "256 few parts").
constexpr int kLogFewPartsMaxBlocks = 8;
constexpr int kFewPartsMaxQubits = 26;
constexpr int kFewInFoursMaxQubits = 24;
Parts few_parts_for(int num_qubits, bool single_precision) {
    return single_precision && num_qubits <= kFewInFoursMaxQubits ? Parts::FewInFours : Parts::Few;
}

constexpr std::uint64_t kBinsPerSector = 4;  // doubles in a 32-byte sector
constexpr std::uint64_t kBinsPerLine = 16;   // doubles in a 128-byte line
constexpr int kLogBinsPerKib = 7;            // 128 doubles in a KiB
constexpr std::uint64_t kBinsPerKib = std::uint64_t{1} << kLogBinsPerKib;

// Whether a block of the atomic merge gathers its bins in shared memory and
// adds them from consecutive threads (Plan::gather_atomics), instead of
// each writer warp adding its own bins, one instruction for a lane's first
// bin and one for its second (bit 0): where every warp of a block writes (8
// or 16 instructions; gathered, 1 to 8) and at least 2^8 blocks add into
// the line of bin 0 (the parts of its segments, over the copies of the
// output). The atomics of one instruction that fall into one line reach the
// L2 together. Measured on an H100 (BinStationaryAtomic, n = 20..26, k =
// 1..6 and 8, five layouts, both precisions, against each warp adding its
// own bins). Gathering wherever it saves instructions: float n = 22, k = 4 on
// qubits 0, 7, 14, 21 (16 instructions, 512 blocks on one line) 0.644 ->
// 0.794 of the read roofline, double 0.768 -> 0.882; k = 3 and 4 on the
// highest, descending or scattered qubits +0.02 to +0.07 at n = 20, 22;
// float n = 24, k = 4 scattered 0.868 -> 0.900; but with 1 to 4
// instructions (k = 1, 2) or 2^5 to 2^7 blocks a line (k = 6, 8 on high
// qubits) the barrier before the gathered atomics cost up to 0.025. With
// this rule, in a second run: the gains again (float n = 22, k = 4
// scattered 0.639 -> 0.788, n = 24 0.869 -> 0.908, n = 26 0.923 -> 0.967;
// double n = 22 0.768 -> 0.883), no cell worse by more than the run's noise
// (0.026 at float n = 22, in a cell whose plan and merge did not change),
// the median per n and precision 0.985 to 1.008 of the time before.
// (Since unselected_warp_bits_pay, the warps of those plans on states of
// 2^22 to 2^26 amplitudes hold unselected bits, so one warp of a block
// writes and nothing is gathered there; n = 20, 21 and n >= 27 still gather.)
constexpr int kLogGatherMinBlocksPerLine = 8;
constexpr int kGatherMinInstructions = 8;
// Calls f(sectors) for each atomic instruction of a block, gathered or
// not, with the distinct 32-byte sectors of the output (sorted) that its
// lanes' bins fall into: the requests the instruction makes of the L2.
template <class F>
void for_each_atomic_instruction(const Plan& plan, bool gathered, F&& f) {
    std::vector<std::uint64_t> sectors;
    auto end_instruction = [&]() {
        std::sort(sectors.begin(), sectors.end());
        sectors.erase(std::unique(sectors.begin(), sectors.end()), sectors.end());
        f(sectors);
        sectors.clear();
    };
    if (gathered) {
        const std::uint64_t ranks = std::uint64_t{1} << __builtin_popcountll(plan.gather_mask);
        for (std::uint64_t r = 0; r < ranks; ++r) {
            sectors.push_back(deposit_bits(r, plan.gather_mask) / kBinsPerSector);
            if (r % 32 == 31 || r + 1 == ranks) end_instruction();
        }
        return;
    }
    for (int w = 0; w < kWarps; ++w) {
        if (w & plan.nonselected_warp_mask) continue;
        for (int second = 0; second <= plan.bit0_selected; ++second) {
            for (int lane = 0; lane < 32; ++lane) {
                if (lane & plan.nonselected_lane_mask) continue;
                const std::uint64_t bin = plan.lane_bin[lane] | plan.warp_bin[w] | (second ? plan.bit0_bin : 0);
                sectors.push_back(bin / kBinsPerSector);
            }
            end_instruction();
        }
    }
}
// Whether the blocks of a plan can gather (a split segment's blocks run one
// segment each, which the kernel's gathering relies on) and at least
// 2^kLogGatherMinBlocksPerLine of them add into the line of bin 0.
bool gathering_may_pay(const Plan& plan) {
    static_assert(kWarps * 2 * 32 >= (1 << kIdentityBits), "warp_values holds a rank for every identity bin");
    if (plan.log_parts == 0 || plan.log_segments_per_block != 0) return false;
    // Segments share the line of bin 0 where their outer bits select bin bits below kBinsPerLine.
    const std::uint64_t outer_bins = plan.outer_bits > 0 ? plan.flip_bin[plan.outer_bits - 1] : 0;
    const int log_segments_per_line = __builtin_popcountll(outer_bins & (kBinsPerLine - 1));
    const int log_copies = __builtin_popcountll(plan.copy_mask);
    return plan.log_parts + log_segments_per_line - log_copies >= kLogGatherMinBlocksPerLine;
}
bool gather_atomics_pay(const Plan& plan) {
    if (!gathering_may_pay(plan)) return false;
    const int instructions = (kWarps >> __builtin_popcount(plan.nonselected_warp_mask)) * (1 + plan.bit0_selected);
    const int gathered = std::max(1, (1 << __builtin_popcountll(plan.gather_mask)) / 32);
    return instructions >= kGatherMinInstructions && gathered < instructions;
}

// The sectors that the atomics of the whole call add into, in the KiB of
// the output that receives the most, each counted once per instruction
// that touches it: what the L2 has to process there one request after
// another. A block's instructions are those of its writer warps (a lane's
// first bin, then with bit 0 its second), or with gathered atomics 32
// ranks each; its segment's bins meet those of every part and of the
// segments whose outer bits select bin bits within the KiB.
std::uint64_t atomic_sectors_per_kib(const Plan& plan) {
    if (plan.log_parts == 0) return 0;  // nothing is merged with atomics
    std::vector<std::uint64_t> sectors_in_kib;  // indexed by the KiB of the output
    for_each_atomic_instruction(plan, plan.gather_atomics, [&](const std::vector<std::uint64_t>& sectors) {
        for (std::uint64_t sector : sectors) {
            const std::uint64_t kib = sector / (kBinsPerKib / kBinsPerSector);
            if (kib >= sectors_in_kib.size()) sectors_in_kib.resize(kib + 1, 0);
            ++sectors_in_kib[kib];
        }
    });
    const std::uint64_t outer_bins = plan.outer_bits > 0 ? plan.flip_bin[plan.outer_bits - 1] : 0;
    const int log_segments_per_kib = __builtin_popcountll(outer_bins & (kBinsPerKib - 1));
    const std::uint64_t block_sectors = *std::max_element(sectors_in_kib.begin(), sectors_in_kib.end());
    return block_sectors << (plan.log_parts + log_segments_per_kib);
}

// Whether, on states of up to 2^kGatherSectorsMaxQubits amplitudes, a
// block of the atomic merge into the output itself gathers its bins also
// where that saves no instruction (gather_atomics_pay) but halves the
// sector requests of its atomics, from at least kGatherMinSectors (with at
// least 2^8 blocks on a line, as there): on the lowest qubits bit 0 and the
// lanes select neighbouring bins, so a lane's two bins share a sector, and
// each of the writer warp's two instructions requests every sector of the
// block's bins, half of each; gathered, each sector comes whole in one
// instruction (the L2 serialises requests, not additions). Measured on an
// H100 first with gathering forced wherever a block's one segment allows
// it (Auto, n = 22, 24, 26, k = 2..6 and 8, lowest, random and scattered
// qubits, both precisions, three runs each, alternating): where it halved
// 2 or 4 sectors (k <= 3), saved none (random, scattered) or added into
// copies of the output (the lowest 6) the barrier cost 0.005 to 0.017, and
// at n = 26 the lowest 4, 5 and 8 moved by -0.01 to +0.008. With this rule
// (n = 22..24, k = 3..6 and 10, lowest and random qubits, three runs each,
// alternating with the rule before), in the cells it changes: the lowest 5
// (16 sectors -> 8, few parts into the output) float n = 24 0.898-0.900 ->
// 0.921-0.926, n = 23 0.815-0.818 -> 0.864-0.866, n = 22 0.707-0.712 ->
// 0.773-0.777; double n = 24 0.913-0.926 -> 0.933-0.948, n = 23
// 0.908-0.910 -> 0.942-0.944, n = 22 0.820-0.822 -> 0.878-0.880; the
// lowest 4 (8 -> 4) float n = 22 0.775-0.783 -> 0.798-0.801, elsewhere
// -0.001 to +0.006. The cells it leaves alone were level.
constexpr int kGatherSectorsMaxQubits = 24;
constexpr std::uint64_t kGatherMinSectors = 8;
// The sector requests of one block's atomics.
std::uint64_t block_atomic_sectors(const Plan& plan, bool gathered) {
    std::uint64_t requests = 0;
    for_each_atomic_instruction(plan, gathered,
                                [&](const std::vector<std::uint64_t>& sectors) { requests += sectors.size(); });
    return requests;
}
bool halves_sector_requests(const Plan& plan) {
    const std::uint64_t sectors = block_atomic_sectors(plan, false);
    return sectors >= kGatherMinSectors && 2 * block_atomic_sectors(plan, true) <= sectors;
}
bool gather_halves_sectors(int num_qubits, const Launch& launch) {
    const Plan& plan = launch.plan;
    return num_qubits <= kGatherSectorsMaxQubits && plan.copy_mask == 0 && gathering_may_pay(plan) &&
           launch.gathering_halves_sectors;
}

// The order a block counts its segments in (Plan::flip_index): first the
// outer bits whose bin bit is below kOuterFirstBins (a step within 256 bytes
// of the output), lowest first, so that a block's consecutive segments
// complete whole lines of the output; then the others in ascending index
// position (the stable sort keeps that order). In index order alone, where
// the outer bits select high bins (descending and other falling orders), a
// block writes part of a line per segment and leaves the rest of it to
// blocks that run much later. The order of the segments changes no
// addition: the bins are the same bits.
// Measured on an H100 (BinStationary, k = 12..20, ratio to the read
// roofline, two runs each, alternating with index order and with a first
// stretch of 16 bins, one line): on descending qubits double n = 24, k = 18
// 0.918 -> 0.940 (16 bins: 0.933), k = 20 0.897 -> 0.908 (0.905), n = 26,
// k = 20 0.927 -> 0.952 (0.943), n = 28, k = 20 0.968 -> 0.972; float n =
// 26, k = 16 0.968 -> 0.981, k = 20 0.887 -> 0.917 (0.905), n = 28, k = 20
// 0.945 -> 0.951; double n = 22 and float n = 22, 24 level (-0.007 to
// +0.006, the spread between runs there). Elsewhere (five layouts at n =
// 22..26; random and highest qubits at n = 28, 30) the mean of each state
// size and precision moved by no more than on the lowest and highest
// qubits, whose order this leaves as it was (-0.006 to +0.006).
constexpr std::uint64_t kOuterFirstBins = 32;
bool outer_bit_before(std::uint64_t bin_a, std::uint64_t bin_b) {
    const bool first_a = bin_a < kOuterFirstBins, first_b = bin_b < kOuterFirstBins;
    if (first_a != first_b) return first_a;
    return first_a && bin_a < bin_b;
}

// Whether a plan's warp bits are the three lowest unselected bits above the
// lanes instead of the selected ones there (make_plan). The selected bits
// then all go to the segments: a block adds 8 times fewer bins (its warps'
// sums meet in shared memory first) in 8 times as many segments, each 8
// times shorter, so fewer blocks share a segment and fewer atomics or
// partial rows meet on a line of the output. It pays on states of up to
// 2^kFewPartsMaxQubits amplitudes where a segment keeps at least 2^9 tasks
// (segment_task_bits, the inner bits it leaves), or 2^5 on the plan of many
// parts; with fewer, the segments end too often. The merge rules below
// choose on the plans it gives.
// Measured on an H100 (`qmarg bench marginal`, the sweep's k and five
// layouts, BinStationary and Auto, two runs each alternating with selected
// warp bits everywhere, ratio to the read roofline):
// - n = 22..26, both precisions: the mean per n, precision and strategy
//   +0.001 to +0.008, no double cell more than 0.01 lower; float n = 24,
//   k = 8 lowest 0.891 -> 0.926 and k = 10 scattered 0.888 -> 0.920 (Auto);
//   n = 22, k = 8 and 10 lowest +0.04 to +0.14 (atomics where partial rows
//   or copies of the output ran); the losses on the lowest qubits, float
//   n = 26, k = 10 and 12 0.955 -> 0.924 and 0.958 -> 0.935, n = 24, k = 14
//   0.928 -> 0.903 (Auto).
// - k = 7, 9, 11, 13 (Auto): float n = 24, k = 9 lowest 0.883 -> 0.928,
//   n = 22, k = 7 random 0.680 -> 0.806; again the lowest qubits lost, float
//   n = 26, k = 11 0.965 -> 0.934, n = 24, k = 11 and 13 0.919 -> 0.895 and
//   0.899, n = 22, k = 7 -0.03 (its two segments' parts meet too often for
//   atomics now: partial rows).
// - double n = 20: mean +0.004, cells -0.02 to +0.075.
// With unselected warp bits wherever three are left (every n, every plan),
// segments of 4 tasks or fewer lost 0.1 to 0.31 (float n = 24, k = 14, 15
// on high or descending qubits; k = 20 lowest), segments of 2^5 to 2^8
// tasks on the plan of few parts up to 0.035 (BinStationary float n = 24,
// k = 10 random 0.886 -> 0.851), and n = 28 and 30 were level (means 0 to
// +0.008, the worst cell -0.012).
// WarpBits::SideBySide (side_by_side_warps_pay) takes the bound of many
// parts for the plan of few parts too.
constexpr int kLogUnselectedWarpsMinTasks = 9;
constexpr int kLogUnselectedWarpsManyPartsMinTasks = 5;
enum class WarpBits { SelectedFirst, SideBySide };
bool unselected_warp_bits_pay(int num_qubits, int segment_task_bits, Parts parts, WarpBits warps) {
    if (num_qubits > kFewPartsMaxQubits) return false;
    const bool short_segments_pay = parts == Parts::Many || warps == WarpBits::SideBySide;
    return segment_task_bits >= (short_segments_pay ? kLogUnselectedWarpsManyPartsMinTasks
                                                    : kLogUnselectedWarpsMinTasks);
}

// Splits the inner bits (ascending index positions) into the part bits and
// the task bits of plan.log_parts parts (setting part_mask, task_mask and
// log_segment_tasks). The plan of few parts (one wave of at most
// 2^kLogFewPartsMaxBlocks long blocks on small states) interleaves its
// parts (`interleaved`): the part bits are the lowest inner bits, so part
// p runs tasks p, p + P, p + 2P, ... of its segment, and the blocks of the
// wave sweep the state side by side. Every other plan gives a part one
// contiguous run of tasks (the part bits are the highest inner bits). The
// parts cover the same amplitudes either way; only which block adds which
// changes, and for a given plan that is fixed, so BinStationary stays
// deterministic.
// Why: in one wave of long blocks that each read a contiguous run, the
// blocks end at different times, and the wave's tail reads with part of the
// GPU idle. A probe on an H100 (a plain read of 128 MiB in 4 KiB pieces, L2
// flushed, medians of 300 runs): 512 blocks of contiguous runs 47.6 us,
// interleaved 46.1, 4096 short blocks 45.9, the read roofline 46.3; 256 MiB:
// 90.9, 89.0, 89.5, 89.5.
// Through the library (n = 22..26, k = 1..15, five layouts, both
// precisions, five alternating runs at n = 24, 26 and one at n = 22, ratio
// to the read roofline): BinStationary float n = 24 mean 0.868 -> 0.877,
// k = 6 scattered 0.827 -> 0.858, k = 4 scattered 0.847 -> 0.868, k = 5
// random 0.835 -> 0.852; float n = 26 0.944 -> 0.951; double n = 22 0.821
// -> 0.835, n = 24 0.932 -> 0.935, n = 26 0.977 -> 0.982 (worst cell 0.939
// -> 0.956); float n = 22 level. BinStationaryAtomic, where it runs the
// plan of few parts: float n = 24, k = 6 scattered 0.885 -> 0.914, k = 15
// scattered 0.904 -> 0.925, k = 8 lowest 0.878 -> 0.890, and one loss, k = 10
// lowest 0.896 -> 0.886 (its 2 x 256 blocks now end together, and their
// atomics into the output meet at the end of the call). Interleaving the
// plan of many parts as well (several waves; two runs) gained in double
// (n = 24, 26: +0.005 to +0.02) and lost in float (n = 24, k = 1..4: -0.01),
// so that plan keeps contiguous runs.
void assign_part_bits(Plan& plan, const std::vector<int>& inner, bool interleaved) {
    const int count = static_cast<int>(inner.size());
    for (int j = 0; j < count; ++j) {
        const bool part_bit = interleaved ? j < plan.log_parts : j >= count - plan.log_parts;
        (part_bit ? plan.part_mask : plan.task_mask) |= std::uint64_t{1} << inner[j];
    }
    plan.log_segment_tasks = count - plan.log_parts;
}

// Whether make_plan leaves bins 0 and 1 to the segments instead of the
// warps: on a double state, where every unselected bit lies below the warps
// (segments of one task), lane bits 0 and 1 (index bits 1 and 2) are
// unselected and bins 0 and 1 lie above the lanes, with three more selected
// bits there for the warps. Then consecutive segments of a thread step
// through bins 0..3 (outer_bit_before counts the lowest bins first) and 4
// neighbouring lanes hold the same sums, so the step form stores each sector
// of the output whole (kSectorStores with kSegmentTasks = 1), where the four
// warps that held bins 0..3 stored a bin of every sector each. Nothing else
// changes: the unselected bits stay where they were, so every bin gets the
// same additions in the same order (the same bits).
// Measured on an H100 (`qmarg bench marginal`, Auto and BinStationary, n =
// 22, 24, 26, k = 16..20, highest, descending, random and scattered qubits,
// two runs each, alternating with the plan before, which the cells that do
// not change read within 0.005 of): double n = 22, k = 16 highest 0.855 ->
// 0.880-0.884, descending 0.852-0.854 -> 0.863-0.866, k = 17 descending
// 0.855-0.860 -> 0.865-0.866, the other cells that change level (n = 24, k
// = 20 descending, the cell it was written for, 0.895-0.898 -> 0.895-0.899:
// its scattered stores were not what held it back). A second command (double,
// n = 22, 23, 24, k = 12, 14, 16..20, highest and descending): n = 23, k = 17
// highest 0.916-0.921 -> 0.934-0.938, descending 0.915-0.916 ->
// 0.925-0.928, k = 18, 19 descending +0.006 to +0.011; n = 24, k = 18..20
// +0.001 to +0.007 (k = 20 descending 0.895-0.898 -> 0.899-0.903); no cell
// lost more than 0.005. Float lost where double gained (n = 22, k = 16
// highest and descending 0.764-0.777 -> 0.750-0.754) and gained or held
// elsewhere (n = 22, k = 20 highest 0.819 -> 0.840, n = 24, k = 18 +0.005
// to +0.009, n = 26 level), so float keeps warps on bins 0 and 1.
bool step_sectors_pay(const Qubits& qubits, const std::vector<std::uint64_t>& bin_of,
                      const std::vector<int>& rest_selected, const std::vector<int>& rest_unselected,
                      bool single_precision) {
    return !single_precision && rest_unselected.empty() && bin_of[1] == 0 && bin_of[2] == 0 && qubits.size() >= 2 &&
           qubits[0] > kLaneBits && qubits[1] > kLaneBits && rest_selected.size() >= 2 + kWarpBits;
}

// The plan's side of kSectorStores in the step form (Plan::step_sector_stores).
bool step_sector_stores_rule(const Plan& plan) {
    // (A segment of one task is never split: step_segments_apply.)
    return plan.log_segment_tasks == 0 && plan.nonselected_warp_mask == 0 &&
           (plan.nonselected_lane_mask & 3u) == 3u && plan.outer_bits >= 2 && plan.flip_bin[0] == 1 &&
           plan.flip_bin[1] == 3;
}

// Float states of 2^24 to 2^28 amplitudes (8 loads in flight) whose
// segments run the step form and leave at least two lane bits unselected end
// their segments as a reduce-scatter (step_scatter_kernel in
// cuda/marginal_bin_stationary.cu): 2 + 1 shuffles for four segments where
// the butterflies take four per level (float n = 26, k = 20 on the highest
// qubits, five lane bits unselected: 6 instead of 20), and one store
// instruction for them where there were four. Measured
// on an H100 (Auto, n = 22, 24, 26, k = 16..20, highest, descending, random
// and lowest qubits, two runs each, alternating with the butterflies, in two
// commands): float n = 26, k = 20 descending 0.898-0.902 -> 0.914-0.916,
// highest 0.913-0.915 -> 0.923-0.926, k = 19 +0.005 to +0.01; n = 24, k = 17
// highest 0.896-0.898 -> 0.921-0.922, descending 0.899-0.903 -> 0.917-0.919,
// k = 18 +0.015 to +0.03, k = 19 descending +0.01, highest level; random and
// lowest qubits level. At n = 22 (a 32 MiB state) it lost: k = 16 and 17
// highest 0.772-0.783 -> 0.758-0.762, descending 0.764-0.775 -> 0.758-0.762,
// hence the lower bound. Double states keep the butterflies: the same form
// lost there, 0.02 to 0.04 at double n = 22, k = 16..18 highest and
// descending (against the whole-sector stores of step_sectors_pay, with the
// same stores), 0.007 to 0.02 at n = 24, k = 18, level or 0.005 lower
// elsewhere (0.04 with the 64-register bound that the float form needs,
// step_scatter_kernel has it). Why fewer shuffles lose in double was not
// found. Float states of more than 2^28 amplitudes (4 loads in flight) were
// not measured with it.
bool step_scatter_pays(int n, const Plan& plan, bool single_precision) {
    return single_precision && n >= 24 && loads_in_flight(n, true) == kFloatLoadsInFlight &&
           step_segments_apply(plan, kFloatLoadsInFlight) &&
           __builtin_popcount(plan.nonselected_lane_mask) >= kLogScatterSegments;
}

Launch make_plan(int n, const Qubits& qubits, Parts parts, bool single_precision, WarpBits warps) {
    const int k = static_cast<int>(qubits.size());
    std::vector<std::uint64_t> bin_of(n, 0);  // bin bit contributed by each index bit
    for (int j = 0; j < k; ++j) bin_of[qubits[j]] = std::uint64_t{1} << j;
    auto selected = [&](int bit) { return bin_of[bit] != 0; };

    Launch launch{};
    Plan& plan = launch.plan;
    plan.bins = std::uint64_t{1} << k;
    plan.bit0_selected = selected(0);
    plan.bit0_bin = bin_of[0];
    for (int b = 0; b < kLaneBits; ++b)
        if (!selected(b + 1)) plan.nonselected_lane_mask |= 1u << b;
    for (int lane = 0; lane < 32; ++lane) {
        plan.lane_offset[lane] = static_cast<std::uint64_t>(lane) << 1;
        plan.lane_bin[lane] = 0;
        for (int b = 0; b < kLaneBits; ++b)
            if ((lane >> b) & 1) plan.lane_bin[lane] |= bin_of[b + 1];
    }

    // Warp bits: the selected bits above the lanes first, those of the lowest
    // bins first (so that a block writes neighbouring bins together), then the
    // lowest unselected bits; only unselected ones where that pays.
    std::vector<int> rest_selected, rest_unselected;
    for (int bit = 1 + kLaneBits; bit < n; ++bit) (selected(bit) ? rest_selected : rest_unselected).push_back(bit);
    std::sort(rest_selected.begin(), rest_selected.end(), [&](int a, int b) { return bin_of[a] < bin_of[b]; });
    std::vector<int> warp_bits;
    const int inner_bits_if_unselected = static_cast<int>(rest_unselected.size()) - kWarpBits;
    if (!unselected_warp_bits_pay(n, inner_bits_if_unselected, parts, warps)) {
        // Segments of one task whose lane bits 0 and 1 are unselected: bins
        // 0 and 1 go to the segments instead, so that the step form stores
        // whole sectors (step_sector_stores_rule).
        const bool step_sectors = step_sectors_pay(qubits, bin_of, rest_selected, rest_unselected, single_precision);
        const std::size_t skipped = step_sectors ? 2 : 0;
        for (std::size_t j = skipped; j < rest_selected.size(); ++j)
            if (static_cast<int>(warp_bits.size()) < kWarpBits) warp_bits.push_back(rest_selected[j]);
    }
    for (int bit : rest_unselected)
        if (static_cast<int>(warp_bits.size()) < kWarpBits) warp_bits.push_back(bit);
    for (int b = 0; b < kWarpBits; ++b)
        if (!selected(warp_bits[b])) plan.nonselected_warp_mask |= 1u << b;
    for (int w = 0; w < kWarps; ++w) {
        plan.warp_offset[w] = 0;
        plan.warp_bin[w] = 0;
        for (int b = 0; b < kWarpBits; ++b) {
            if ((w >> b) & 1) {
                plan.warp_offset[w] |= std::uint64_t{1} << warp_bits[b];
                plan.warp_bin[w] |= bin_of[warp_bits[b]];
            }
        }
    }

    // The remaining bits: unselected ones form the inner loop, selected ones the segments.
    auto is_warp_bit = [&](int bit) { return std::find(warp_bits.begin(), warp_bits.end(), bit) != warp_bits.end(); };
    std::vector<int> outer, inner;  // each in ascending index position
    for (int bit = 1 + kLaneBits; bit < n; ++bit) {
        if (is_warp_bit(bit)) continue;
        (selected(bit) ? outer : inner).push_back(bit);
    }
    const int inner_bits = static_cast<int>(inner.size());  // u
    std::stable_sort(outer.begin(), outer.end(), [&](int a, int b) { return outer_bit_before(bin_of[a], bin_of[b]); });
    plan.outer_bits = static_cast<int>(outer.size());
    std::uint64_t flip_index = 0, flip_bin = 0;
    for (int t = 0; t < kMaxOuterBits; ++t) {
        if (t < plan.outer_bits) {
            flip_index |= std::uint64_t{1} << outer[t];
            flip_bin |= bin_of[outer[t]];
        }
        plan.flip_index[t] = flip_index;
        plan.flip_bin[t] = flip_bin;
    }

    const int task_bits = n - kIdentityBits;  // = inner_bits + outer_bits
    const bool few_parts = parts != Parts::Many && n <= kFewPartsMaxQubits;
    const int log_tau = std::max(kLogMinTasks, task_bits - kLogTargetBlocks);
    const int log_whole_tau = log_whole_segment_tau(task_bits, log_tau, single_precision);
    if (inner_bits >= log_whole_tau) {
        // Long segments: cut each into P parts of about tau tasks. The partial
        // rows are written and read once more (2 x P x 2^k x 8 bytes): P is
        // capped at 2^(n-k-kLogPartialShare) so that this stays within 1/128
        // of a double state (1/64 of a float one), unless that leaves fewer
        // than 2^kLogMinSplitBlocks blocks.
        plan.log_parts = std::min(inner_bits - log_tau,
                                  std::max({0, n - k - kLogPartialShare, kLogMinSplitBlocks - plan.outer_bits}));
        if (few_parts) {
            // Longer parts, for 2^kLogFewPartsMaxBlocks blocks in all (never more parts than above;
            // FewInFours: four parts a segment where that leaves two).
            const int log_few_tau = std::max(kLogMinTasks, task_bits - kLogFewPartsMaxBlocks);
            int log_few_parts = std::max(0, inner_bits - log_few_tau);
            if (parts == Parts::FewInFours && log_few_parts == 1) log_few_parts = 2;
            plan.log_parts = std::min(plan.log_parts, log_few_parts);
        }
        plan.log_segments_per_block = 0;
    } else {
        // Short segments: M whole segments per block.
        const int log_tasks = log_block_tasks(task_bits, inner_bits, log_whole_tau, single_precision);
        plan.log_segments_per_block = std::min(plan.outer_bits, log_tasks - inner_bits);
        plan.log_parts = 0;
    }
    launch.blocks = std::uint64_t{1} << (plan.outer_bits - plan.log_segments_per_block + plan.log_parts);
    assign_part_bits(plan, inner, /*interleaved=*/few_parts);

    plan.gather_mask = plan.bit0_bin;
    for (int lane = 0; lane < 32; ++lane) plan.gather_mask |= plan.lane_bin[lane];
    for (int w = 0; w < kWarps; ++w) plan.gather_mask |= plan.warp_bin[w];
    for (int lane = 0; lane < 32; ++lane)
        plan.lane_rank[lane] = static_cast<std::uint16_t>(extract_bits(plan.lane_bin[lane], plan.gather_mask));
    for (int w = 0; w < kWarps; ++w)
        plan.warp_rank[w] = static_cast<std::uint16_t>(extract_bits(plan.warp_bin[w], plan.gather_mask));
    plan.bit0_rank = static_cast<std::uint16_t>(extract_bits(plan.bit0_bin, plan.gather_mask));
    plan.sector_stores = plan.log_parts == 0 && plan.nonselected_lane_mask == 0 && plan.nonselected_warp_mask == 0 &&
                         plan.warp_bin[1] == 1 && plan.warp_bin[2] == 2;
    // (Never on a float plan: step_sectors_pay gives bins 0 and 1 to the
    // segments only in double, and elsewhere bin 0 above the lanes is a warp bit.)
    plan.step_sector_stores = step_sector_stores_rule(plan);
    plan.step_scatter = step_scatter_pays(n, plan, single_precision);

    // As the atomic merge would run the plan into the output itself, gathered
    // where gather_atomics_pay: the bound that small_state_many_parts_merge
    // puts on this count was fitted on it (gather_halves_sectors, which came
    // later, decides on the chosen plan only and moves no merge).
    Plan into_out = plan;
    into_out.gather_atomics = gather_atomics_pay(into_out);
    launch.atomic_sectors_per_kib = atomic_sectors_per_kib(into_out);
    launch.gathering_halves_sectors = halves_sector_requests(plan);
    return launch;
}

// The plans of the last few cases. Building one takes 0.3-0.5 us of host time
// and sits on the critical path of every call, before the first launch; a
// caller that asks for the same marginals again (a benchmark, a sampler, the
// same observable after every circuit layer) finds them here. A plan is a
// function of (n, qubits, parts, precision, warp bits) alone, so it holds
// on every device.
class PlanCache {
public:
    Launch get(int n, const Qubits& qubits, Parts parts, bool single_precision, WarpBits warps) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const Entry& entry : entries_) {
            if (entry.n == n && entry.parts == parts && entry.warps == warps &&
                entry.single_precision == single_precision && entry.qubits == qubits) {
                return entry.launch;
            }
        }
        Entry& entry = entries_[next_];
        next_ = (next_ + 1) % entries_.size();
        entry.launch = make_plan(n, qubits, parts, single_precision, warps);
        entry.qubits = qubits;
        entry.parts = parts;
        entry.warps = warps;
        entry.single_precision = single_precision;
        entry.n = n;
        return entry.launch;
    }

private:
    struct Entry {
        int n = -1;  // -1: empty
        Parts parts = Parts::Many;
        WarpBits warps = WarpBits::SelectedFirst;
        bool single_precision = false;
        Qubits qubits;
        Launch launch{};
    };
    std::mutex mutex_;
    std::array<Entry, 32> entries_;  // two plans (many and few parts) per case
    std::size_t next_ = 0;  // the entry replaced next: the oldest
};

Launch cached_plan(int n, const Qubits& qubits, Parts parts, bool single_precision,
                   WarpBits warps = WarpBits::SelectedFirst) {
    static PlanCache cache;
    return cache.get(n, qubits, parts, single_precision, warps);
}

static_assert(1 + kLaneBits == kStreamingStorePrefix, "streaming_stores_coalesce names bit 0 and the lane bits");

// Whether BinStationaryAtomic merges a plan's split segments with atomics.
// Every bin receives one atomic per part, and the L2 adds the atomics that
// fall into one stretch of the output at a bounded rate; so the atomics pay
// while the most that meet in one KiB of the output (parts x min(2^k, 128)
// bins) stay under 2^(n - kLogAtomicShare), twice that for plans of at most
// 2^kLogFewBlocks blocks, where the second pass is a larger part of the call.
// Fitted to a sweep on an H100 (n = 20..26, k = 1..20, five layouts, both
// precisions, the two merges alternating; docs/marginal_engine.md has the
// table): atomics everywhere gained up to 0.14 of the read roofline at k <= 2
// and k >= 10, and lost up to 0.39 where 4096 parts met 32 bins (float n = 24,
// k = 5); with the rule 3 of the 420 split cells lost 0.017 to 0.048.
// Many parts (more than 2^kLogFewBlocks blocks, in waves) send their
// atomics over the whole call; on a device whose multiprocessors each
// stream faster than the H100's (MergeDevice) the call is shorter by that
// ratio while the L2 adds atomics at the same rate, so for them the bound
// shrinks by it: on an H200 (1.44 times) 2^(n - 10.52). Plans of one wave
// send theirs at its end whatever the device, and keep the bound: at n =
// 20 and 22 the shrunk bound would have taken 30 cells of the H200 sweeps
// to partial rows, where atomics ran 5 to 29 % faster. In those sweeps
// (bench/results/marginal_H200_*, both merges timed in the same rounds) the
// cells it moves are the lowest 6 and 10 of 28 qubits (2^18 a KiB), whose
// partial rows ran 2 to 8 % faster (float 0.964 and 0.926 of the atomics'
// time, double 0.980 and 0.985). With the shrunk bound (H200, n = 28, k =
// 4, 5, 6, 8, 10, 12 on the lowest qubits, both precisions, two runs each,
// alternating with the bound before): the lowest 6 float 0.929 -> 0.973,
// double 0.971 -> 0.996; the lowest 10 float 0.852 -> 0.926, double 0.927
// -> 0.953; the other cells within 0.002. Left: the lowest 5 and 12 in
// float (2^17 and 2^16 a KiB) at 0.923 and 0.878 against partial rows'
// 0.979 and 0.922; halving the bound for float states (their calls are half
// as long) would have moved them, and on the H100 six float n = 24 cells
// where atomics ran 4 to 8 % faster.
constexpr int kLogAtomicShare = 10;
constexpr int kLogFewBlocks = 10;
bool atomic_merge_pays(int num_qubits, int k, const Launch& launch, const MergeDevice& device) {
    if (launch.plan.log_parts == 0) return false;  // no segment is split: nothing to merge
    const int log_meeting = launch.plan.log_parts + std::min(k, kLogBinsPerKib);
    const int few_blocks = launch.blocks <= (std::uint64_t{1} << kLogFewBlocks) ? 1 : 0;
    const double faster =
        few_blocks ? 1.0 : std::max(1.0, device.multiprocessor_bytes_per_us / kH100MultiprocessorBytesPerUs);
    return log_meeting <= num_qubits - kLogAtomicShare + few_blocks - std::log2(faster);
}

// Whether BinStationaryAtomic's blocks add into copies of the output, which
// a last kernel adds up, rather than into the output itself: on the plan of
// few parts (one wave of blocks, n <= kFewPartsMaxQubits) whose one segment
// is split into parts that meet on the same bins at least 2^kLogCopiesMeeting
// times per KiB of the output. There the parts finish together and the L2
// serialises their atomics on those lines at the end of the call; with
// 2^kLogCopies copies a KiB or more apart they go to other lines, for the
// price of one more kernel (about 2 to 4 us). Measured on an H100 (n = 20..26,
// k = 3..8, five layouts, both precisions, two runs each, alternating with the
// rule before, which ran these cells with atomics into the output or with
// partial rows): float n = 24, k = 8 lowest qubits 0.826 -> 0.873, k = 5
// scattered 0.84 -> 0.87, k = 6 lowest 0.86 -> 0.88, k = 5 random 0.88 ->
// 0.86 (the one loss); n = 22, k = 5, 6, 8 0.66-0.67 -> 0.70-0.73 (double
// 0.77-0.80 -> 0.81-0.84); n = 20, k = 6, 8 lowest +0.04 to +0.07; float
// n = 26, k = 8 lowest 0.92 -> 0.94; double n = 24 level. Forced where the
// parts meet less often or split several segments, the copies lost 0.03 to
// 0.1 (float n = 22, k = 3 lowest 0.80 -> 0.72; n = 24, k = 4 lowest 0.91
// -> 0.88). With at most 2^8 few parts (kLogFewPartsMaxBlocks), k = 5 on the
// lowest, random or scattered qubits meets 2^13 times a KiB and no longer
// takes copies. The merges the rules below choose there instead measured
// ahead (H100, two runs): double n = 24, k = 5 random and scattered, many
// parts into the output 0.936-0.938 against 0.896-0.901 with few parts into
// copies; float n = 24, few parts into the output 0.930 against 0.908-0.910
// with many parts into copies; k = 5 lowest, few parts into the output
// against many into copies, double 0.932 against 0.906, float 0.907 against
// 0.916 (the one loss).
constexpr int kLogCopies = 3;
constexpr int kLogCopiesMeeting = 14;
// So a plan that meets that often has at least as many parts as copies.
static_assert(kLogCopiesMeeting - kLogBinsPerKib >= kLogCopies, "every copy receives a part");
bool copies_of_output_pay(int num_qubits, int k, const Launch& few) {
    const int log_meeting = few.plan.log_parts + std::min(k, kLogBinsPerKib);
    return num_qubits <= kFewPartsMaxQubits && few.plan.outer_bits == 0 && log_meeting >= kLogCopiesMeeting;
}

// On states of up to 2^kFewPartsMaxQubits amplitudes, where atomic_merge_pays
// refuses the plan of many parts (it counts the additions that meet in a
// KiB of the output), whether its atomics pay all the same: the L2 serialises
// requests, an instruction's sectors of a line, so what decides is the
// plan's atomic_sectors_per_kib, which has to stay under 2^(n -
// kLogSectorShare) for either precision. Under that bound many parts add
// into the output itself, unless copies_of_output_pay on few parts; beyond
// it few parts run, adding into the output itself where they would take
// copies (below: many parts into copies, before gathering, measured slower)
// and as before otherwise. Measured on an
// H100 (BinStationaryAtomic, n = 22..26, k = 1..12, five layouts, both
// precisions, two runs alternating of the rule before, of many parts into
// the output and of many parts into 8 copies, wherever many parts are more
// than 2^10 blocks). Into the output gained where at most 2^14 sectors a
// KiB meet (float n = 24): k = 3..6 on high, descending, random or
// scattered qubits 0.89-0.915 -> 0.94-0.955 of the read roofline, double
// n = 24 +0.01 to +0.03; and lost where more meet: float n = 24, k = 5 on
// the lowest qubits (2^16) 0.88 -> 0.54, k = 4 lowest (2^15) 0.91 -> 0.81,
// k = 5, 6 random and scattered (2^15) 0.86-0.89 -> 0.81-0.87; double
// n = 24, k = 5 lowest (2^16) 0.92 -> 0.81; double n = 26, k = 8 lowest
// (2^17) 0.98 -> 0.94. Into copies, the last kernel cost 0.02 to 0.08 where
// the output itself did well, and gained where few parts add into copies:
// float n = 24, k = 5 lowest, random, scattered 0.86-0.88 -> 0.90-0.91,
// n = 26, k = 6 and 8 lowest +0.01 to +0.02; where few parts add into the
// output gathered it lost (float n = 24, k = 6 random 0.905 -> 0.88).
// That fit allowed up to 2^(n - 10) sectors for a float state and twice that
// for a double one. Once few parts were interleaved and at most 2^8
// (kLogFewPartsMaxBlocks), they ran ahead of many parts into the output at
// and above 2^(n - 10) in both precisions (H100, every cell of n = 24, 26,
// k = 1..16 where this rule decides, three runs each of the rule and of few
// parts in its place): float n = 26, k = 5 lowest (2^16) 0.916 -> 0.961,
// double 0.967 -> 0.991; double n = 24, k = 8 random (2^14) 0.918 -> 0.934,
// k = 4 lowest and k = 5 random, scattered (2^15) +0.003 to +0.005; at
// exactly 2^14 in float n = 24 the cells split, k = 3 lowest and k = 8
// random, scattered +0.011 to +0.031, k = 3 random and k = 4 random,
// scattered -0.016 to -0.026. Under the bound many parts stayed ahead
// (float n = 24, k = 3..6 on high or descending qubits, 2^13: 0.95 against
// 0.90-0.93).
// Beyond the bound where few parts would take copies, many parts added into
// copies of the output, which the lowest 6 qubits (in any order) of a float
// state of 2^24 to 2^26 amplitudes alone reached. Once few parts into the
// output gathered their atomics there (gather_halves_sectors, n <= 24),
// they ran ahead (H100, Auto, four runs each, alternating): float n = 24,
// the lowest 6 0.873-0.889 -> 0.923-0.925, n = 25 0.896-0.916 ->
// 0.915-0.927, n = 26 (not gathered) 0.951-0.956 -> 0.959-0.966; in
// descending order level (-0.005 to +0.002). Few parts into copies measured
// no faster than many parts into copies (0.888-0.894 at n = 24).
constexpr int kLogSectorShare = 10;
enum class SmallStateMerge { ManyPartsIntoOutput, FewPartsIntoOutput, FewParts };
SmallStateMerge small_state_many_parts_merge(int num_qubits, const Launch& many, bool copies_pay_on_few) {
    if (num_qubits > kFewPartsMaxQubits || many.plan.log_parts < kLogCopies) return SmallStateMerge::FewParts;
    const bool few_requests = many.atomic_sectors_per_kib < (std::uint64_t{1} << (num_qubits - kLogSectorShare));
    if (copies_pay_on_few) return few_requests ? SmallStateMerge::FewParts : SmallStateMerge::FewPartsIntoOutput;
    return few_requests ? SmallStateMerge::ManyPartsIntoOutput : SmallStateMerge::FewParts;
}

// Whether the plan of few parts runs in place of many parts with atomics:
// where it splits no segment (nothing to merge) and each of its blocks reads
// at least 2^kLogWholeSegmentBytes bytes of the state. Measured on an H100
// (Auto, n = 24 and 26, k = 1..20, five layouts, both precisions, three runs
// alternating with the rule before, ratio to the read roofline), in the 15
// cells this changes: double n = 24, k = 12 highest 0.935 -> 0.959, k = 12
// descending 0.931 -> 0.965, k = 14 random 0.924 -> 0.953; float n = 24,
// k = 14 random 0.923 -> 0.940; n = 26, k = 15 scattered double 0.972 ->
// 0.996, float 0.960 -> 0.975; double n = 26, k = 12..16 highest,
// descending, random +0.003 to +0.011; the one loss float n = 26, k = 16
// scattered 0.962 -> 0.955. Few parts wherever they split no segment, also
// with shorter blocks, lost in float: n = 24, k = 12 highest (512 blocks of
// 256 KiB) 0.957 -> 0.903, k = 14 highest and descending (2048 of 64 KiB)
// -0.01 to -0.024. Few parts wherever atomics pay on many, in double only
// (split segments included, with their own merge): n = 24, k = 10 highest
// and descending 0.94 -> 0.915, k = 10 scattered 0.919 -> 0.936, other
// cells level or up to 0.01 behind. So what decided here was how long the
// blocks are, not the precision. On double states of 2^24 to 2^26
// amplitudes partial_rows_pay (below) now makes the same choice wherever
// many parts would add with atomics, so this rule is what decides for
// float states.
constexpr int kLogWholeSegmentBytes = 19;
bool whole_segments_pay(int num_qubits, bool single_precision, const Launch& few) {
    const std::uint64_t state_bytes = (std::uint64_t{1} << num_qubits) * (single_precision ? 8 : 16);
    return few.plan.log_parts == 0 && state_bytes / few.blocks >= (std::uint64_t{1} << kLogWholeSegmentBytes);
}

// Whether, on double states of 2^kPartialRowsMinQubits to
// 2^kFewPartsMaxQubits amplitudes, the few parts' partial rows (what
// BinStationary runs) take the place of many parts with atomics, into the
// output or into copies of it, and of few parts into copies. Few parts that
// add into the output itself keep their atomics. Measured on an H100 (Auto,
// n = 24 and 26, k = 1..20, five layouts, both precisions, three runs
// alternating with the rule before, ratio to the read roofline): in the 74
// double cells this changes, 47 gained 0.01 or more and one lost more than
// 0.005 (n = 24, k = 10 highest, 0.938 -> 0.929); the mean of double n = 24
// 0.933 -> 0.940, n = 26 0.977 -> 0.986; copies of the output the most (n =
// 24, k = 6 lowest 0.893 -> 0.926, k = 8 lowest 0.894 -> 0.923; n = 26 k = 8
// lowest 0.961 -> 0.983). Float n = 26 gained as much as it lost (mean
// level: k = 8 random +0.022, k = 1..4 lowest and k = 10 highest -0.01 to
// -0.02). Smaller states keep their atomics: in the engine sweeps
// BinStationaryAtomic runs ahead of BinStationary in every cell where it
// merges with atomics at double n = 22 (+0.03 to +0.11) and float n = 22 and
// 24 (+0.004 to +0.12). Partial rows in place of few parts into the output
// as well: double n = 24 -0.008 to +0.013, n = 26 -0.003 to -0.007, so
// those keep their atomics.
constexpr int kPartialRowsMinQubits = 24;
bool partial_rows_pay(int num_qubits, bool single_precision) {
    return !single_precision && num_qubits >= kPartialRowsMinQubits && num_qubits <= kFewPartsMaxQubits;
}

// Whether the plan of many parts interleaves its segments finely: its warps
// walk unselected bits (unselected_warp_bits_pay) and the highest of them is
// bit kLogFineSegmentsWarpBit or above, so at least four selected bits lie
// between the lanes and it: 16 or more segments share every stretch of 2^12
// amplitudes, each block reading short runs spread over the stretch.
// Many parts run one segment's parts after another's, so the segments of a
// stretch read it at different times; few parts (one wave, interleaved)
// read it together. A float state runs few parts there instead (with the
// merge the rules below give them: atomics into the output in every case
// measured). Measured on an H100 (Auto, float, three runs each, alternating
// with the rule before): the lowest k = 10..16 qubits of 24 0.877 / 0.903 /
// 0.911 / 0.911 / 0.915 / 0.915 / 0.922 -> 0.928 / 0.926 / 0.927 / 0.926 /
// 0.929 / 0.927 / 0.929, of 26 (k = 10..13, 15, 16) 0.930 / 0.919 / 0.938 /
// 0.942 / 0.949 / 0.947 -> 0.958 / 0.949 / 0.956 / 0.958 / 0.958 / 0.960;
// the sweep's random qubits for seeds 1..6 at n = 23..26, k = 7..15 (two
// runs each): in the 21 cells this changes a mean of +0.006, from -0.015
// (n = 25, k = 13, 0.937 -> 0.921) to +0.023 (n = 23, k = 7, 0.847 ->
// 0.870), the 195 others level (-0.0003). Keeping selected warp bits on
// these plans of many parts instead (as before unselected_warp_bits_pay)
// gave the same on the lowest qubits and nothing on the random ones (mean
// -0.0001, -0.018 to +0.022). Double states keep many parts: at 2^24 to
// 2^26 amplitudes partial_rows_pay replaces them with the few parts'
// partial rows, and few parts with atomics in their place measured slower
// (the lowest k = 10..16 of 24: 0.935-0.941 -> 0.914-0.931; of 26 level).
constexpr int kLogFineSegmentsWarpBit = 12;
bool segments_interleave_finely(const Launch& many) {
    const Plan& plan = many.plan;
    const unsigned all_warp_bits = (1u << kWarpBits) - 1;
    // Warp 1 << (kWarpBits - 1) sets only the highest warp bit, so its offset is that bit's.
    const std::uint64_t highest_warp_offset = plan.warp_offset[1u << (kWarpBits - 1)];
    return plan.nonselected_warp_mask == all_warp_bits &&
           highest_warp_offset >= (std::uint64_t{1} << kLogFineSegmentsWarpBit);
}

// Whether the blocks of many parts are long enough on `device` for their
// atomics to pay: each block's share of the state takes at least
// kMinManyPartsBlockUs to stream at one multiprocessor's share of the peak
// bandwidth. A block pays a fixed time to start, bring its first loads in
// and add its bins; many parts run about 2^12 short blocks, and where memory
// is fast against that time (float states of 2^23 and 2^24 amplitudes,
// blocks of 32 KiB, on an H200) it shows, and few parts run ahead, with the
// merges the rules below give them where many parts do not run. Measured
// on an H200 (36.5 KB/us a multiprocessor: 0.90 us for 32 KiB; `qmarg bench
// marginal`, BinStationaryAtomic, float, n = 24, 26, 28, k = 1..6, 8, 10,
// 12, 14, 16, 20, five layouts, seed 1, two runs each, alternating with
// many parts turned off in float): n = 24, in the 45 cells that ran many
// parts, 0.75-0.79 of the read roofline -> 0.81-0.88 (k = 1 highest 0.78 ->
// 0.86, k = 12 scattered 0.77 -> 0.87, k = 14 highest 0.79 -> 0.82), against
// BinStationary's 0.80-0.88; n = 26 (128 KiB, 3.6 us) many parts ahead,
// 0.92-0.94 against 0.88-0.92, but for k = 14 on the highest and descending
// qubits (0.93 -> 0.95, left to many parts); n = 28 level. With this rule
// (two runs each, alternating with the rule before): n = 23, in the 37
// cells it changes, 0.71-0.75 -> 0.78-0.81 (BinStationary 0.69-0.80), the
// others level (-0.005 to +0.005); n = 24, Auto within 0.3 % of the faster
// of BinStationary and BinStationaryAtomic in every cell. On an H100
// (25.4 KB/us: 1.29 us for 32 KiB) many parts ran ahead at float n = 24 (k =
// 1: 0.96 against 0.92 with few parts and atomics; few parts' comment
// above), so the bound lies between 0.90 and 1.29 us; a device whose memory
// clock or bus width is unknown keeps many parts.
constexpr double kMinManyPartsBlockUs = 1.0;
bool many_parts_blocks_long_enough(int num_qubits, bool single_precision, const Launch& many,
                                   const MergeDevice& device) {
    if (device.multiprocessor_bytes_per_us <= 0) return true;
    const double block_bytes = std::ldexp(single_precision ? 8.0 : 16.0, num_qubits) / static_cast<double>(many.blocks);
    return block_bytes / device.multiprocessor_bytes_per_us >= kMinManyPartsBlockUs;
}

// Whether BinStationaryAtomic builds its plan of few parts with the warps
// side by side (WarpBits::SideBySide): on unselected bits wherever a
// segment keeps at least 2^5 tasks, as on the plan of many parts, where
// BinStationary's plan keeps them on selected bits up to 2^8 tasks. Its
// blocks then read 4 or 8 KiB side by side at every step, in segments 8
// times shorter whose warps meet in shared memory. It pays on GPUs whose
// multiprocessors each stream at least kSideBySideMinSpeedup times as fast
// as the H100's, on double states of 2^24 to 2^26 amplitudes and float
// states of 2^25 and 2^26. BinStationary keeps its plan (the same on every
// GPU, so its bits are), and so does every GPU like the H100, where the
// same warps on plans of few parts with 2^5 to 2^8 tasks lost up to 0.035
// (unselected_warp_bits_pay).
// Why (H200): with the warps on selected bits above the lanes the 8 warps
// of a block stream apart, each along its own run (for the highest 12 of
// 26 qubits 128 KiB each, 128 KiB apart, in one wave of 512 blocks). A
// probe (a plain read of 512 MiB by 512 blocks of 1 MiB, 8 16-byte loads in
// flight a thread, L2 flushed, medians of 200 runs) read at 0.929 of the
// read roofline with the warps apart and 0.996 with the block's warps side
// by side; at 128 MiB (blocks of 256 KiB) 0.975 against 0.979.
// Measured on an H200 (`qmarg bench marginal`, n = 24, 26, k = 8..16, five
// layouts, BinStationary and Auto, two runs each alternating with the plan
// before, both with side-by-side warps; ratio to the read roofline):
// double n = 26, k = 12 highest and descending 0.923 -> 0.99-1.00, k = 10
// 0.965 -> 0.993; double n = 24, k = 10 highest and descending 0.90 ->
// 0.955, k = 14 lowest 0.92 -> 0.955, every double cell it changes level
// or ahead (the least -0.006); float n = 26, k = 12 highest and descending
// 0.855 -> 0.95, k = 15 and 16 lowest +0.03 to +0.044, all others level
// or ahead but k = 16 and 15 scattered (-0.019, -0.008). On float states
// of 2^24 amplitudes BinStationary gained (+0.005 to +0.077) but Auto lost
// up to 0.038, where atomics on the few parts of selected warps had run
// faster than the unsplit segments of side-by-side ones: float n = 24
// keeps its plan.
constexpr double kSideBySideMinSpeedup = 1.25;
constexpr int kSideBySideMinDoubleQubits = 24;
constexpr int kSideBySideMinFloatQubits = 25;
bool side_by_side_warps_pay(int num_qubits, bool single_precision, const MergeDevice& device) {
    if (device.multiprocessor_bytes_per_us < kSideBySideMinSpeedup * kH100MultiprocessorBytesPerUs) return false;
    const int lowest = single_precision ? kSideBySideMinFloatQubits : kSideBySideMinDoubleQubits;
    return num_qubits >= lowest && num_qubits <= kFewPartsMaxQubits;
}

// The plan a call runs and how it merges split segments. BinStationary runs
// the plan of few parts with partial rows. BinStationaryAtomic runs the plan
// of many parts where it has more than 2^kLogFewBlocks blocks, they are long
// enough for the device (many_parts_blocks_long_enough) and atomics pay on
// it (atomic_merge_pays, unless whole_segments_pay, or on small states
// small_state_many_parts_merge, which can also choose few parts into the
// output), and otherwise the plan of few parts, with atomics into copies of
// the output where copies_of_output_pay, into the output itself where
// atomic_merge_pays (else exactly BinStationary). A float state skips many
// parts where segments_interleave_finely. Where partial_rows_pay,
// BinStationary's merge replaces many parts, copies of the output and the
// few parts into the output that small_state_many_parts_merge chooses.
// Many parts pay for their atomics only where their blocks come in several
// waves: measured on an H100 (n = 22..26, both precisions, the cells where
// atomics pay on many parts), few parts were level or ahead wherever many
// parts meant at most 2^10 blocks (up to 0.06 ahead, at most 0.025 behind,
// in 96 cells) and behind in 40 of the 136 cells with more (up to 0.08).
Launch with_copies_of_output(Launch launch) {
    launch.plan.copy_mask = (std::uint64_t{1} << kLogCopies) - 1;
    launch.plan.copy_stride = std::max(launch.plan.bins, kBinsPerKib);
    return launch;
}
MergePlan choose_plan_and_merge(int num_qubits, const Qubits& qubits, bool single_precision, bool atomics_allowed,
                                const MergeDevice& device) {
    const int k = static_cast<int>(qubits.size());
    const Parts few_parts = few_parts_for(num_qubits, single_precision);
    const WarpBits few_warps = atomics_allowed && side_by_side_warps_pay(num_qubits, single_precision, device)
                                   ? WarpBits::SideBySide
                                   : WarpBits::SelectedFirst;
    const Launch few = cached_plan(num_qubits, qubits, few_parts, single_precision, few_warps);
    // BinStationary's merge, and what a merge of many parts or into copies of
    // the output gives way to where partial_rows_pay.
    const MergePlan partial_rows{few, few_parts, false};
    const auto unless_partial_rows_pay = [&](const MergePlan& chosen) {
        return partial_rows_pay(num_qubits, single_precision) ? partial_rows : chosen;
    };
    const bool copies_pay_on_few = atomics_allowed && copies_of_output_pay(num_qubits, k, few);
    if (atomics_allowed) {
        const Launch many = cached_plan(num_qubits, qubits, Parts::Many, single_precision);
        const bool many_pay = !(single_precision && segments_interleave_finely(many));
        if (many_pay && many.blocks > (std::uint64_t{1} << kLogFewBlocks)) {
            // Where many parts would run but their blocks are too short for
            // the device, the rules below the branch choose few parts' merge.
            const bool long_enough = many_parts_blocks_long_enough(num_qubits, single_precision, many, device);
            if (atomic_merge_pays(num_qubits, k, many, device)) {
                if (whole_segments_pay(num_qubits, single_precision, few)) return partial_rows;
                if (long_enough) return unless_partial_rows_pay({many, Parts::Many, true});
            } else {
                switch (small_state_many_parts_merge(num_qubits, many, copies_pay_on_few)) {
                    case SmallStateMerge::ManyPartsIntoOutput:
                        if (long_enough) return unless_partial_rows_pay({many, Parts::Many, true});
                        break;
                    case SmallStateMerge::FewPartsIntoOutput:
                        return unless_partial_rows_pay({few, few_parts, true});
                    case SmallStateMerge::FewParts: break;
                }
            }
        }
    }
    if (copies_pay_on_few) {
        return unless_partial_rows_pay({with_copies_of_output(few), few_parts, true});
    }
    return {few, few_parts, atomics_allowed && atomic_merge_pays(num_qubits, k, few, device)};
}

}  // namespace

// The levels that add 2^log_parts rows of `bins` partial sums into one. Up to 8
// rows take one level of sum_rows_kernel (each thread adds its bin's rows:
// a short chain, every thread busy). More take levels of sum_rows_tree_kernel,
// as few as its 8 S rows per level allow, with the rows split evenly between
// them so that no level is left with a handful. Measured on an H100 (double,
// n = 24, ratio of the call to the read roofline) against levels of 32 rows
// with sum_rows_kernel: k = 1, 2 (4096 rows) 0.86-0.89 -> 0.89-0.91; k = 10 on
// 32 rows 0.89-0.90 -> 0.93-0.94; with 2 to 8 rows the tree lost up to 0.05
// to sum_rows_kernel. Adding rows in thread-block clusters (distributed shared
// memory, 8 or 16 blocks) lost 0.04-0.08 in every cell; on the plan of few
// parts (8 parts a cluster, one level fewer) 0.02 to 0.25 in every cell that ran it
// (docs/marginal_engine.md).
std::vector<Level> second_pass_levels(int log_parts, std::uint64_t bins) {
    constexpr int kLogShortRows = 3;
    std::vector<Level> levels;
    if (log_parts == 0) return levels;
    if (log_parts <= kLogShortRows) return {Level{1, false}};
    const std::uint64_t tree_rows = tree_level_rows(bins);
    int log_tree_rows = 0;
    while ((tree_rows >> log_tree_rows) > 1) ++log_tree_rows;
    const int count = (log_parts + log_tree_rows - 1) / log_tree_rows;
    int left = log_parts;
    for (int j = 0; j < count; ++j) {
        const int log_group = (left + (count - j) - 1) / (count - j);  // even split, larger groups first
        left -= log_group;
        levels.push_back(Level{std::uint64_t{1} << left, true});
    }
    return levels;
}

// Whether a plan runs bin_stationary_kernel's grouped form (kSegmentTasks =
// 2^log_segment_tasks): segments of one or two tasks (unselected qubits only
// among 0..5 and at most one more, so k >= n - 7), no unselected warp bit, none
// split, and a multiple of kUnroll steps a block. Segments of one task are
// k = n - 6 on the highest qubits in either order, for instance, where the
// general loop ended a segment after every load, one chain of shuffles after
// another: float n = 26, k = 20 read at 0.886 (high) and 0.855 (descending)
// of the roofline there, against 0.94 to 0.95 where segments are long (low,
// scattered); with this form 0.925 and 0.885 (measured above step_group in
// cuda/marginal_bin_stationary.cu). Segments of two tasks (k = n - 7 there) ended
// every second load; grouped, measured on an H100 (`qmarg bench marginal`,
// Auto, n = 22, 24, 26, k = 14..19, five layouts, both precisions, two runs
// each, alternating with the general loop; the cells that change are k =
// n - 7 on the highest and descending qubits): float n = 22, k = 15 0.740 /
// 0.745 -> 0.787 / 0.793 (high / descending), n = 24, k = 17 0.858 / 0.856
// -> 0.897 / 0.900, n = 26, k = 19 0.931 / 0.918 -> 0.936 / 0.932; double
// n = 22 +0.006 / +0.012, n = 24 and 26 -0.005 to +0.002 (the cells that
// do not change -0.004). Segments of 4 tasks keep the general loop (not
// measured grouped).
// (A segment of one or two tasks is never split: make_plan splits only
// segments of at least 2^kLogMinTasks tasks, and leaves at least that many a
// part.)
bool step_segments_apply(const Plan& plan, int unroll) {
    const std::uint64_t steps = std::uint64_t{1} << (plan.log_segment_tasks + plan.log_segments_per_block);
    return plan.log_segment_tasks <= 1 && plan.nonselected_warp_mask == 0 &&
           steps % static_cast<std::uint64_t>(unroll) == 0;
}

// choose_plan_and_merge, and whether its atomics are gathered per block.
MergePlan choose_merge(int num_qubits, const Qubits& qubits, bool single_precision, bool atomics_allowed,
                       const MergeDevice& device) {
    MergePlan chosen = choose_plan_and_merge(num_qubits, qubits, single_precision, atomics_allowed, device);
    chosen.launch.plan.gather_atomics = chosen.atomic && (gather_atomics_pay(chosen.launch.plan) ||
                                                          gather_halves_sectors(num_qubits, chosen.launch));
    return chosen;
}

// The plan of a compact state (marginal_fixed_bits.hpp) on the full index:
// every index image the kernel ORs or XORs into an address, spread.
Launch spread_onto_full_index(Launch launch, const FixedBits& fixed) {
    Plan& plan = launch.plan;
    for (std::uint64_t& offset : plan.lane_offset) offset = fixed.spread(offset);
    for (std::uint64_t& offset : plan.warp_offset) offset = fixed.spread(offset);
    for (std::uint64_t& flip : plan.flip_index) flip = fixed.spread(flip);
    plan.part_mask = fixed.spread(plan.part_mask);
    plan.task_mask = fixed.spread(plan.task_mask);
    return launch;
}

bool has_merge(int num_qubits, const Qubits& qubits, bool single_precision) {
    return num_qubits >= kMinQubits && !takes_transposed_path(num_qubits, qubits, single_precision);
}

}  // namespace bin_stationary

using bin_stationary::choose_merge;
using bin_stationary::has_merge;
using bin_stationary::kMinQubits;
using bin_stationary::loads_in_flight;
using bin_stationary::MergePlan;
using bin_stationary::Parts;
using bin_stationary::Plan;
using bin_stationary::step_segments_apply;

AtomicMerge bin_stationary_atomic_merge(int num_qubits, const Qubits& qubits, bool single_precision,
                                        const MergeDevice& device) {
    if (!has_merge(num_qubits, qubits, single_precision)) return AtomicMerge::None;
    const MergePlan chosen = choose_merge(num_qubits, qubits, single_precision, true, device);
    if (!chosen.atomic) return AtomicMerge::None;
    if (chosen.parts == Parts::Many) return AtomicMerge::ManyParts;  // never into copies
    return chosen.launch.plan.copy_mask != 0 ? AtomicMerge::FewPartsIntoCopies : AtomicMerge::FewParts;
}

bool bin_stationary_atomic_plan_differs(int num_qubits, const Qubits& qubits, bool single_precision,
                                        const MergeDevice& device) {
    if (!has_merge(num_qubits, qubits, single_precision)) return false;
    const MergePlan atomic = choose_merge(num_qubits, qubits, single_precision, true, device);
    if (atomic.parts == Parts::Many) return false;  // never BinStationary's plan
    // Plans of few parts differ only in the warps' rule, and then in the warps' bits.
    return atomic.launch.plan.nonselected_warp_mask !=
           choose_merge(num_qubits, qubits, single_precision, false, device).launch.plan.nonselected_warp_mask;
}

bool bin_stationary_atomics_gathered(int num_qubits, const Qubits& qubits, bool single_precision,
                                     const MergeDevice& device) {
    // choose_merge gathers only where it merges with atomics.
    if (!has_merge(num_qubits, qubits, single_precision)) return false;
    return choose_merge(num_qubits, qubits, single_precision, true, device).launch.plan.gather_atomics != 0;
}

bool streaming_stores_whole_sectors(int num_qubits, const Qubits& qubits, bool single_precision) {
    if (num_qubits < kMinQubits) return false;
    // As run_streaming_path and run_plan choose, with BinStationary's merge
    // (sector_stores holds only where no segment is split).
    const Plan plan = choose_merge(num_qubits, qubits, single_precision, false, MergeDevice{}).launch.plan;
    if (step_segments_apply(plan, loads_in_flight(num_qubits, single_precision))) return plan.step_sector_stores;
    return plan.sector_stores;
}

bool streaming_scatters_segments(int num_qubits, const Qubits& qubits, bool single_precision) {
    if (num_qubits < kMinQubits) return false;
    // run_plan takes the flag as it stands (it holds only for unsplit
    // segments of the step form with 8 loads in flight).
    return choose_merge(num_qubits, qubits, single_precision, false, MergeDevice{}).launch.plan.step_scatter != 0;
}

}  // namespace gpu
}  // namespace qmarg
