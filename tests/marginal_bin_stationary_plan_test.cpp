// BinStationary's plan (src/marginal_bin_stationary_plan.hpp) on the host, so
// that a planning mistake shows without a GPU. For random qubit lists in
// random order, both precisions and both merges (BinStationary's and
// BinStationaryAtomic's), checks that:
//  - the roles the plan gives the index bits (bit 0, the lane bits 1..5, the
//    three warp bits, the part bits, the task bits, the outer bits) are
//    disjoint and cover the index, and the counts agree with the grid;
//  - every bin image the kernel ORs into a bin (lane_bin, warp_bin,
//    bit0_bin, flip_bin) is the bin the CPU backend gives those index bits
//    (gather_bits), and the unselected masks name the unselected bits;
//  - the whole-sector and reduce-scatter flags hold only where their forms'
//    conditions do;
//  - on states of up to 2^16 amplitudes, every index, enumerated as the
//    kernel's cursors reach it (block, segment, task, lane, warp, bit 0), is
//    read exactly once and counted into its own bin.
// Failures name the seed, n, the qubit list, the precision and the merge.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "marginal_bin_stationary_plan.hpp"
#include "qmarg/bits.hpp"
#include "test_support.hpp"

namespace {

using qmarg::Qubits;
using qmarg_test::highest_qubits;
namespace bs = qmarg::gpu::bin_stationary;

// The bin of a set of index bits (gather_bits of the CPU backend).
std::uint64_t bin_of(std::uint64_t index, const Qubits& qubits) {
    return qmarg::gather_bits(index, qubits.data(), static_cast<int>(qubits.size()));
}

int popcount(std::uint64_t bits) { return __builtin_popcountll(bits); }

// The plan's structure, as the kernel reads it.
void expect_plan_is_consistent(int n, const Qubits& qubits, const bs::Launch& launch, bool single_precision) {
    const bs::Plan& plan = launch.plan;
    const int k = static_cast<int>(qubits.size());
    std::uint64_t selected = 0;
    for (int q : qubits) selected |= std::uint64_t{1} << q;
    const std::uint64_t all = n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;

    EXPECT_EQ(plan.bins, std::uint64_t{1} << k);
    // Roles.
    std::uint64_t lanes = 0, warps = 0;
    for (int lane = 0; lane < 32; ++lane) lanes |= plan.lane_offset[lane];
    for (int w = 0; w < bs::kWarps; ++w) warps |= plan.warp_offset[w];
    const std::uint64_t outer = plan.outer_bits == 0 ? 0 : plan.flip_index[plan.outer_bits - 1];
    const std::uint64_t roles[] = {1, lanes, warps, plan.part_mask, plan.task_mask, outer};
    std::uint64_t covered = 0;
    for (std::uint64_t role : roles) {
        EXPECT_EQ(covered & role, 0u) << "index bits in two roles: " << (covered & role);
        covered |= role;
    }
    EXPECT_EQ(covered, all);
    EXPECT_EQ(lanes, std::uint64_t{0x3e});
    EXPECT_EQ(popcount(warps), bs::kWarpBits);
    EXPECT_EQ(popcount(plan.part_mask), plan.log_parts);
    EXPECT_EQ(popcount(plan.task_mask), plan.log_segment_tasks);
    EXPECT_EQ(popcount(outer), plan.outer_bits);
    EXPECT_TRUE(plan.log_parts == 0 || plan.log_segments_per_block == 0) << "a split segment is a block's only one";
    EXPECT_LE(plan.log_segments_per_block, plan.outer_bits);
    EXPECT_EQ(launch.blocks, std::uint64_t{1} << (plan.outer_bits - plan.log_segments_per_block + plan.log_parts));
    // Each outer bit once, flip_*[t] cumulative, and the bins it selects.
    for (int t = 0; t < plan.outer_bits; ++t) {
        const std::uint64_t bit = plan.flip_index[t] ^ (t ? plan.flip_index[t - 1] : 0);
        EXPECT_EQ(popcount(bit), 1) << "outer bit " << t;
        EXPECT_NE(bit & selected, 0u) << "outer bit " << t << " is not selected";
        EXPECT_EQ(plan.flip_bin[t], bin_of(plan.flip_index[t], qubits)) << "outer bit " << t;
    }
    // Bin images and unselected masks.
    EXPECT_EQ(plan.part_mask & selected, 0u);
    EXPECT_EQ(plan.task_mask & selected, 0u);
    EXPECT_EQ(plan.bit0_selected != 0, (selected & 1) != 0);
    EXPECT_EQ(plan.bit0_bin, bin_of(1, qubits));
    for (int lane = 0; lane < 32; ++lane) EXPECT_EQ(plan.lane_bin[lane], bin_of(plan.lane_offset[lane], qubits));
    for (int w = 0; w < bs::kWarps; ++w) EXPECT_EQ(plan.warp_bin[w], bin_of(plan.warp_offset[w], qubits));
    for (int b = 0; b < bs::kLaneBits; ++b) {
        EXPECT_EQ((plan.nonselected_lane_mask >> b) & 1u, (selected >> (b + 1)) & 1u ? 0u : 1u) << "lane bit " << b;
    }
    for (int b = 0; b < bs::kWarpBits; ++b) {
        const std::uint64_t bit = plan.warp_offset[1 << b];
        EXPECT_EQ((plan.nonselected_warp_mask >> b) & 1u, (bit & selected) ? 0u : 1u) << "warp bit " << b;
    }
    // The whole-sector forms' conditions (bin_stationary_kernel).
    if (plan.sector_stores) {
        EXPECT_EQ(plan.log_parts, 0);
        EXPECT_EQ(plan.nonselected_lane_mask, 0u);
        EXPECT_EQ(plan.nonselected_warp_mask, 0u);
        EXPECT_EQ(plan.warp_bin[1], 1u);
        EXPECT_EQ(plan.warp_bin[2], 2u);
    }
    if (plan.step_sector_stores) {
        EXPECT_FALSE(single_precision);
        EXPECT_EQ(plan.log_segment_tasks, 0);
        EXPECT_EQ(plan.log_parts, 0);
        EXPECT_EQ(plan.nonselected_warp_mask, 0u);
        EXPECT_EQ(plan.nonselected_lane_mask & 3u, 3u);
        EXPECT_GE(plan.outer_bits, 2);
        EXPECT_EQ(plan.flip_bin[0], 1u);
        EXPECT_EQ(plan.flip_bin[1], 3u);
    }
    // The reduce-scatter's (step_scatter_kernel).
    if (plan.step_scatter) {
        EXPECT_TRUE(single_precision);
        EXPECT_GE(n, 24);
        EXPECT_EQ(bs::loads_in_flight(n, true), bs::kFloatLoadsInFlight);
        EXPECT_TRUE(bs::step_segments_apply(plan, bs::kFloatLoadsInFlight));
        EXPECT_EQ(plan.log_parts, 0);
        EXPECT_GE(popcount(plan.nonselected_lane_mask), bs::kLogScatterSegments);
        EXPECT_EQ((bs::kFloatLoadsInFlight >> plan.log_segment_tasks) % bs::kScatterSegments, 0);
    }
}

// Every index as the kernel's cursors reach it: block (segment group, part),
// segment, task (subsets of task_mask), lane, warp and bit 0; each once, into
// its own bin.
void expect_every_index_once(int n, const Qubits& qubits, const bs::Plan& plan, std::uint64_t blocks) {
    std::vector<int> reads(std::size_t{1} << n, 0);
    // Segment s sets outer bit t where bit t of s is set: flip_index[t] ^ flip_index[t - 1].
    std::vector<std::uint64_t> segment_bit(plan.outer_bits), segment_bin(plan.outer_bits);
    for (int t = 0; t < plan.outer_bits; ++t) {
        segment_bit[t] = plan.flip_index[t] ^ (t ? plan.flip_index[t - 1] : 0);
        segment_bin[t] = plan.flip_bin[t] ^ (t ? plan.flip_bin[t - 1] : 0);
    }
    const std::uint64_t parts = std::uint64_t{1} << plan.log_parts;
    const std::uint64_t segments_per_block = std::uint64_t{1} << plan.log_segments_per_block;
    const std::uint64_t tasks = std::uint64_t{1} << plan.log_segment_tasks;
    int wrong_bins = 0;
    for (std::uint64_t block = 0; block < blocks; ++block) {
        const std::uint64_t part = block % parts;
        const std::uint64_t first_segment = (block / parts) * segments_per_block;
        for (std::uint64_t segment = first_segment; segment < first_segment + segments_per_block; ++segment) {
            std::uint64_t segment_index = 0, bin_offset = 0;
            for (int t = 0; t < plan.outer_bits; ++t) {
                if ((segment >> t) & 1u) {
                    segment_index |= segment_bit[t];
                    bin_offset |= segment_bin[t];
                }
            }
            for (std::uint64_t task = 0; task < tasks; ++task) {
                const std::uint64_t base = segment_index | qmarg::deposit_bits(part, plan.part_mask) |
                                           qmarg::deposit_bits(task, plan.task_mask);
                for (int lane = 0; lane < 32; ++lane) {
                    for (int w = 0; w < bs::kWarps; ++w) {
                        const std::uint64_t index = base | plan.lane_offset[lane] | plan.warp_offset[w];
                        const std::uint64_t bin = plan.lane_bin[lane] | plan.warp_bin[w] | bin_offset;
                        for (std::uint64_t bit0 = 0; bit0 < 2; ++bit0) {
                            ++reads[index | bit0];
                            if ((bin | (bit0 ? plan.bit0_bin : 0)) != bin_of(index | bit0, qubits)) ++wrong_bins;
                        }
                    }
                }
            }
        }
    }
    EXPECT_EQ(wrong_bins, 0) << "amplitudes counted into another bin";
    const auto not_once = std::count_if(reads.begin(), reads.end(), [](int r) { return r != 1; });
    EXPECT_EQ(not_once, 0) << "indices not read exactly once";
}

TEST(BinStationaryPlan, RolesCoverTheIndexAndBinsMatchTheCpuBackend) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    for (int n = bs::kMinQubits; n <= 30; ++n) {
        for (int trial = 0; trial < 12; ++trial) {
            const int k = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(n));
            std::vector<int> all(static_cast<std::size_t>(n));
            std::iota(all.begin(), all.end(), 0);
            std::shuffle(all.begin(), all.end(), rng);
            const Qubits qubits(all.begin(), all.begin() + k);
            for (bool single : {false, true}) {
                // BinStationary; BinStationaryAtomic as on an H100 (a device
                // of unknown bandwidth) and on an H200, whose many parts' blocks
                // can be too short (many_parts_blocks_long_enough).
                const std::pair<bool, qmarg::gpu::MergeDevice> merges[] = {
                    {false, {}}, {true, {}}, {true, qmarg::gpu::merge_device_of(3201.0, 6016, 132)}};
                for (const auto& [atomics, device] : merges) {
                    SCOPED_TRACE("random seed " + std::to_string(seed) + ", n = " + std::to_string(n) + ", " +
                                 qmarg_test::describe(qubits) + (single ? ", float" : ", double") +
                                 (atomics ? ", BinStationaryAtomic at " +
                                                std::to_string(device.multiprocessor_bytes_per_us) + " B/us"
                                          : ", BinStationary"));
                    const bs::MergePlan chosen = bs::choose_merge(n, qubits, single, atomics, device);
                    expect_plan_is_consistent(n, qubits, chosen.launch, single);
                    if (!atomics) EXPECT_FALSE(chosen.atomic) << "BinStationary merges without atomics";
                    if (n <= 16) expect_every_index_once(n, qubits, chosen.launch.plan, chosen.launch.blocks);
                    if (HasFailure()) return;
                }
            }
        }
    }
}

// check(n, qubits, single_precision) on the highest n - most_left .. n -
// fewest_left of n qubits in either order, n = n_min .. n_max, both
// precisions, each call traced with its case.
template <class Check>
void for_each_highest_list(int n_min, int n_max, int most_left, int fewest_left, Check check) {
    for (int n = n_min; n <= n_max; ++n) {
        for (int k = std::max(1, n - most_left); k <= n - fewest_left; ++k) {
            for (bool descending : {false, true}) {
                const Qubits qubits = highest_qubits(n, k, descending);
                for (bool single : {false, true}) {
                    SCOPED_TRACE("n = " + std::to_string(n) + ", " + qmarg_test::describe(qubits) +
                                 (single ? ", float" : ", double"));
                    check(n, qubits, single);
                }
            }
        }
    }
}

// The same, on the lists the step form's whole-sector stores were written
// for (the highest qubits, ascending and descending, k = n - 4 .. n - 7), and
// a second call gets the same plan (from the cache).
TEST(BinStationaryPlan, HighestQubitsInEitherOrder) {
    for_each_highest_list(bs::kMinQubits, 16, 7, 4, [](int n, const Qubits& qubits, bool single) {
        const bs::MergePlan chosen = bs::choose_merge(n, qubits, single, false, {});
        expect_plan_is_consistent(n, qubits, chosen.launch, single);
        expect_every_index_once(n, qubits, chosen.launch.plan, chosen.launch.blocks);
        const bs::MergePlan again = bs::choose_merge(n, qubits, single, false, {});
        const bs::Plan &a = chosen.launch.plan, &b = again.launch.plan;
        EXPECT_EQ(chosen.launch.blocks, again.launch.blocks);
        EXPECT_TRUE(std::equal(a.lane_offset, a.lane_offset + 32, b.lane_offset));
        EXPECT_TRUE(std::equal(a.warp_offset, a.warp_offset + bs::kWarps, b.warp_offset));
        EXPECT_TRUE(std::equal(a.flip_index, a.flip_index + bs::kMaxOuterBits, b.flip_index));
        EXPECT_EQ(a.task_mask, b.task_mask);
        EXPECT_EQ(a.part_mask, b.part_mask);
        EXPECT_EQ(a.step_sector_stores, b.step_sector_stores);
        EXPECT_EQ(a.step_scatter, b.step_scatter);
    });
}

// Blocks of whole segments: a double plan (n >= 22) whose segments are at
// most a batch long (kLoadsInFlight tasks) gives each block one batch, and
// runs the step form where its segments are one or two tasks; float blocks,
// and double ones below n = 22, stay longer.
// n = 24, k = 20 on the highest qubits: segments of one task, 8192 blocks of
// four in double, 2^4 tasks a block in float.
TEST(BinStationaryPlan, ShortDoubleSegmentsRunOneBatchABlock) {
    for_each_highest_list(12, 30, 8, 0, [](int n, const Qubits& qubits, bool single) {
        const bs::Plan plan = bs::choose_merge(n, qubits, single, false, {}).launch.plan;
        if (plan.log_parts != 0 || plan.log_segment_tasks > 2) return;  // other paths
        const int steps = plan.log_segment_tasks + plan.log_segments_per_block;
        if (single || n < 22) {
            EXPECT_GE(steps, 3) << "n = " << n << (single ? " float" : " double")
                                << ": blocks of whole segments run at least 2^3 steps";
            return;
        }
        EXPECT_EQ(1 << steps, bs::kLoadsInFlight) << "n = " << n << ": one batch a block";
        EXPECT_EQ(bs::step_segments_apply(plan, bs::kLoadsInFlight),
                  plan.log_segment_tasks <= 1 && plan.nonselected_warp_mask == 0);
    });
    const Qubits highest = highest_qubits(24, 20, false);
    const bs::MergePlan d = bs::choose_merge(24, highest, false, false, {});
    EXPECT_EQ(d.launch.blocks, std::uint64_t{1} << 13);
    EXPECT_EQ(d.launch.plan.log_segment_tasks, 0);
    EXPECT_EQ(d.launch.plan.log_segments_per_block, 2);
    // n = 20 keeps blocks of two batches: one batch a block would leave 2^9.
    const bs::Plan small = bs::choose_merge(20, highest_qubits(20, 12, false), false, false, {}).launch.plan;
    EXPECT_EQ(small.log_segment_tasks + small.log_segments_per_block, 3);
    const bs::MergePlan f = bs::choose_merge(24, highest, true, false, {});
    EXPECT_EQ(f.launch.plan.log_segment_tasks + f.launch.plan.log_segments_per_block, 4);
}

}  // namespace
