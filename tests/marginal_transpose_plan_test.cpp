// The index math of BinStationary's transposed path (cuda/marginal_transpose.cu),
// emulated on the host with the same helpers the kernel calls
// (src/marginal_transpose_plan.hpp), so that a mapping mistake shows without a
// GPU. For every block, thread and step the emulation follows the kernel's
// loops and checks:
//  - every amplitude is loaded exactly once, by the vector that holds it;
//  - every shared-memory slot of a tile is written exactly once;
//  - every position's 2^u slots hold amplitudes of the bin it writes
//    (gather_bits, the CPU backend's own bin), in the documented order
//    (unselected bits counting up), and every bin is written exactly once;
//  - each half-warp's shared-memory stores and reads hit 16 distinct banks;
//  - reads come in runs of >= 16 amplitudes and writes in runs of >= 16 bins.
// Failures name the seed, n and the qubit list.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "marginal_transpose_plan.hpp"
#include "test_support.hpp"

namespace {

using qmarg::Qubits;
using namespace qmarg::gpu;

Qubits ascending(int first, int count) {
    Qubits qubits(count);
    for (int j = 0; j < count; ++j) qubits[j] = first + j;
    return qubits;
}

Qubits descending(int n, int k) { return qmarg_test::highest_qubits(n, k, true); }

// k qubits spread evenly over 0..n-1, ascending (the benchmark's "scattered").
Qubits scattered(int n, int k) {
    Qubits qubits(k);
    for (int j = 0; j < k; ++j) qubits[j] = k == 1 ? n / 2 : static_cast<int>(static_cast<long>(j) * (n - 1) / (k - 1));
    return qubits;
}

// The lists the tests run for one (n, k): low, high, scattered, descending and random orders.
std::vector<Qubits> orders(int n, int k, std::mt19937_64& rng) {
    std::vector<Qubits> lists = {ascending(0, k), ascending(n - k, k), scattered(n, k), descending(n, k)};
    Qubits reversed_low = ascending(0, k);
    std::reverse(reversed_low.begin(), reversed_low.end());
    lists.push_back(reversed_low);
    for (int i = 0; i < 3; ++i) lists.push_back(qmarg_test::random_qubits(n, k, rng));
    return lists;
}

std::string case_text(std::uint64_t seed, int n, const Qubits& qubits) {
    return "random seed " + std::to_string(seed) + ", n = " + std::to_string(n) + ", " + qmarg_test::describe(qubits);
}

// The unselected qubits, ascending (those `fixed` holds left out).
Qubits unselected_qubits(int n, const Qubits& qubits, const FixedBits& fixed = {}) {
    Qubits rest;
    for (int bit = 0; bit < n; ++bit) {
        if (std::find(qubits.begin(), qubits.end(), bit) == qubits.end() && !((fixed.mask >> bit) & 1u))
            rest.push_back(bit);
    }
    return rest;
}

// True when the 16 slots of each half-warp hit distinct bank pairs.
bool conflict_free(const std::vector<std::uint32_t>& warp_slots) {
    for (int half = 0; half < 2; ++half) {
        std::set<std::uint32_t> banks;
        for (int lane = 16 * half; lane < 16 * half + 16; ++lane) banks.insert(warp_slots[lane] % 16);
        if (banks.size() != 16) return false;
    }
    return true;
}

// The kernel's work for `block`, step by step. `loaded` counts loads per
// amplitude and `written` writes per bin (both null to skip global coverage).
void emulate_block(const TransposePlan& plan, int n, const Qubits& qubits, std::uint64_t block,
                   std::vector<int>* loaded, std::vector<int>* written, const FixedBits& fixed = {}) {
    const int k = static_cast<int>(qubits.size());
    constexpr std::uint32_t kSlots = 1u << kTransposeTileBits;
    constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
    std::vector<std::uint64_t> slot_holds(kSlots, kEmpty);

    // Loads (the kernel's first loop, batches flattened: they change no index).
    for (int step = 0; step < kTransposeLoadSteps; ++step) {
        for (unsigned warp = 0; warp < kTransposeThreads / 32; ++warp) {
            std::vector<std::uint32_t> warp_slots;
            for (unsigned lane = 0; lane < 32; ++lane) {
                const unsigned thread = 32 * warp + lane;
                const std::uint64_t thread_index =
                    transpose_block_index(plan, block) | transpose_load_thread_index(plan, thread);
                // fixed.values: the kernel's pointer offset.
                const std::uint64_t index = fixed.values | thread_index | transpose_load_step_index(plan, step);
                ASSERT_EQ(index & 1u, 0u) << "a load must start at an even amplitude";
                ASSERT_EQ(index & fixed.mask, fixed.values) << "amplitude " << index << " fails the fixed bits";
                ASSERT_LT(index, std::uint64_t{1} << n);
                const std::uint32_t slot =
                    transpose_load_thread_slot(plan, thread) ^ transpose_load_step_slot(plan, step);
                const std::uint32_t pair_slot = slot ^ plan.load_slot[0];
                ASSERT_LT(slot, kSlots);
                ASSERT_LT(pair_slot, kSlots);
                ASSERT_EQ(slot_holds[slot], kEmpty) << "slot " << slot << " written twice, block " << block;
                slot_holds[slot] = index;
                ASSERT_EQ(slot_holds[pair_slot], kEmpty) << "slot " << pair_slot << " written twice, block " << block;
                slot_holds[pair_slot] = index | 1u;
                if (loaded) {
                    ++(*loaded)[index];
                    ++(*loaded)[index | 1u];
                }
                warp_slots.push_back(slot);
            }
            EXPECT_TRUE(conflict_free(warp_slots)) << "bank conflicts in the stores of step " << step << ", warp "
                                                   << warp;
        }
    }

    // Sums (the kernel's second loop).
    const Qubits unselected = unselected_qubits(n, qubits, fixed);
    std::vector<int> slot_reads(kSlots, 0);
    const unsigned steps = 1u << (plan.output_bits - kTransposeThreadBits);
    const unsigned values = 1u << plan.unselected_bits;
    for (unsigned step = 0; step < steps; ++step) {
        for (unsigned warp = 0; warp < kTransposeThreads / 32; ++warp) {
            std::vector<std::vector<std::uint32_t>> warp_slots(values);
            for (unsigned lane = 0; lane < 32; ++lane) {
                const unsigned thread = 32 * warp + lane;
                const std::uint64_t thread_bin =
                    transpose_block_bin(plan, block) | transpose_out_thread_bin(plan, thread);
                const std::uint32_t slot =
                    transpose_sum_thread_slot(plan, thread) ^ transpose_sum_step_slot(plan, step, plan.output_bits);
                const std::uint64_t bin = thread_bin | transpose_out_step_bin(plan, step, plan.output_bits);
                ASSERT_LT(bin, std::uint64_t{1} << k);
                for (unsigned value = 0; value < values; ++value) {
                    const std::uint32_t s = slot ^ transpose_unselected_slot(plan, value, plan.output_bits, plan.unselected_bits);
                    ASSERT_LT(s, kSlots);
                    ++slot_reads[s];
                    warp_slots[value].push_back(s);
                    const std::uint64_t index = slot_holds[s];
                    ASSERT_NE(index, kEmpty) << "slot " << s << " summed but never written";
                    ASSERT_EQ(qmarg::gather_bits(index, qubits.data(), k), bin)
                        << "amplitude " << index << " summed into bin " << bin << " (block " << block << ", thread "
                        << thread << ", step " << step << ", value " << value << ")";
                    ASSERT_EQ(qmarg::gather_bits(index, unselected.data(), static_cast<int>(unselected.size())), value)
                        << "summation order, amplitude " << index;
                }
                if (written) ++(*written)[bin];
            }
            for (unsigned value = 0; value < values; ++value) {
                EXPECT_TRUE(conflict_free(warp_slots[value]))
                    << "bank conflicts in the reads of step " << step << ", warp " << warp << ", value " << value;
            }
        }
    }
    for (std::uint32_t s = 0; s < kSlots; ++s) ASSERT_EQ(slot_reads[s], 1) << "slot " << s << " read count";
}

// Runs of contiguous amplitudes per read and of contiguous bins per write,
// from the plan's images: compact bit i < a is index bit i, staged bit j < b is bin bit j.
// With u <= 4 at least 7 tile bits alternate, lowest index bit first: runs of
// at least 16 amplitudes and 8 bins (64 bytes, whole sectors).
void expect_runs(const TransposePlan& plan) {
    constexpr int kAlternating = kTransposeTileBits - kTransposeMaxUnselected;
    EXPECT_GE(plan.read_run_bits, (kAlternating + 1) / 2);
    EXPECT_GE(plan.write_run_bits, kAlternating / 2);
    for (int i = 0; i < std::min(plan.read_run_bits, kTransposeTileBits); ++i)
        EXPECT_EQ(plan.load_index[i], std::uint64_t{1} << i) << "compact bit " << i;
    for (int j = 0; j < std::min(plan.write_run_bits, plan.output_bits); ++j)
        EXPECT_EQ(plan.out_bin[j], std::uint64_t{1} << j) << "staged bit " << j;
}

void check_whole_state(int n, const Qubits& qubits) {
    const TransposePlan plan = make_transpose_plan(n, qubits);
    ASSERT_EQ(plan.block_bits, n - kTransposeTileBits);
    ASSERT_EQ(plan.unselected_bits, n - static_cast<int>(qubits.size()));
    expect_runs(plan);
    std::vector<int> loaded(std::size_t{1} << n, 0), written(std::size_t{1} << qubits.size(), 0);
    for (std::uint64_t block = 0; block < (std::uint64_t{1} << plan.block_bits); ++block) {
        emulate_block(plan, n, qubits, block, &loaded, &written);
        if (::testing::Test::HasFatalFailure()) return;
    }
    for (std::size_t i = 0; i < loaded.size(); ++i) ASSERT_EQ(loaded[i], 1) << "amplitude " << i << " load count";
    for (std::size_t b = 0; b < written.size(); ++b) ASSERT_EQ(written[b], 1) << "bin " << b << " write count";
}

TEST(MarginalTransposePlan, AppliesToKAtLeastNMinus4FromElevenQubits) {
    EXPECT_FALSE(transpose_applies(10, 10));
    EXPECT_TRUE(transpose_applies(11, 11));
    EXPECT_TRUE(transpose_applies(11, 7));
    EXPECT_FALSE(transpose_applies(11, 6));
    EXPECT_TRUE(transpose_applies(30, 26));
    EXPECT_FALSE(transpose_applies(30, 25));
    EXPECT_THROW(make_transpose_plan(30, ascending(0, 25)), qmarg::Error);
    EXPECT_THROW(make_transpose_plan(10, ascending(0, 10)), qmarg::Error);
}

// BinStationary's rule: from n = 26 on the transposed path takes its whole
// range; below, k = n in every order, and where the streaming stores scatter
// up to u = 4 (float) or u = 3 (double) from n = 22, and u = 2 below.
TEST(MarginalTransposePlan, TakesTheTransposedPathWhereItWasMeasuredFaster) {
    EXPECT_FALSE(streaming_stores_coalesce(descending(24, 24)));
    EXPECT_TRUE(streaming_stores_coalesce(ascending(0, 20)));
    EXPECT_TRUE(streaming_stores_coalesce(ascending(0, 3)));
    EXPECT_FALSE(streaming_stores_coalesce(Qubits{0, 1, 2, 3, 4, 6, 5}));
    for (int n : {11, 16, 20, 21, 22, 23, 24, 25, 26, 30}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        for (bool single : {false, true}) {
            const int scattered_max = n >= 26 ? 4 : n >= 22 ? (single ? 4 : 3) : 2;
            const int coalesced_max = n >= 26 ? 4 : 0;
            for (int u = 0; u <= kTransposeMaxUnselected + 1; ++u) {
                EXPECT_EQ(takes_transposed_path(n, descending(n, n - u), single), u <= scattered_max)
                    << "u = " << u << (single ? ", float" : ", double");
                EXPECT_EQ(takes_transposed_path(n, ascending(0, n - u), single), u <= coalesced_max)
                    << "u = " << u << (single ? ", float" : ", double");
            }
        }
    }
    EXPECT_FALSE(takes_transposed_path(10, descending(10, 10), false));
}

// Every block of states of 11 to 18 qubits, k = n - 4 .. n, every order kind.
TEST(MarginalTransposePlan, EmulatedKernelCoversEveryAmplitudeAndBinOnce) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    for (int n : {11, 12, 13, 14, 15, 16, 18}) {
        for (int k = n; k >= n - kTransposeMaxUnselected; --k) {
            for (const Qubits& qubits : orders(n, k, rng)) {
                SCOPED_TRACE(case_text(seed, n, qubits));
                check_whole_state(n, qubits);
                if (HasFatalFailure()) return;
            }
        }
    }
}

// Large states: the plan's runs and a few whole blocks (first, last, random).
TEST(MarginalTransposePlan, EmulatedBlocksOfLargeStates) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    for (int n : {24, 26, 28, 30, 34}) {
        for (int k = n; k >= n - kTransposeMaxUnselected; --k) {
            for (const Qubits& qubits : orders(n, k, rng)) {
                SCOPED_TRACE(case_text(seed, n, qubits));
                const TransposePlan plan = make_transpose_plan(n, qubits);
                expect_runs(plan);
                const std::uint64_t blocks = std::uint64_t{1} << plan.block_bits;
                for (std::uint64_t block : {std::uint64_t{0}, blocks - 1, rng() % blocks}) {
                    emulate_block(plan, n, qubits, block, nullptr, nullptr);
                    if (HasFatalFailure()) return;
                }
            }
        }
    }
}

// A conditional marginal's plan: the compact state of the amplitudes whose
// fixed bits hold their values, spread onto the full index. The emulated
// kernel loads each matching amplitude once and no other, sums it into its
// own bin in counting order of the free unselected bits, and writes every
// bin once. Fixed bits anywhere but bit 0, the listed qubits in every order.
TEST(MarginalTransposePlan, EmulatedKernelOnFixedBitsReadsOnlyTheMatchingAmplitudes) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    for (int n : {12, 13, 14, 16}) {
        for (int trial = 0; trial < 6; ++trial) {
            const int m = std::uniform_int_distribution<int>(1, n - kTransposeTileBits)(rng);
            Qubits free_bits = qmarg_test::random_qubits(n - 1, n - 1, rng);
            for (int& bit : free_bits) ++bit;  // 1..n-1, shuffled
            FixedBits fixed;
            for (int j = 0; j < m; ++j) {
                fixed.mask |= std::uint64_t{1} << free_bits[j];
                if (rng() & 1u) fixed.values |= std::uint64_t{1} << free_bits[j];
            }
            Qubits rest;  // every bit but the fixed ones, bit 0 included
            for (int bit = 0; bit < n; ++bit)
                if (!((fixed.mask >> bit) & 1u)) rest.push_back(bit);
            std::shuffle(rest.begin(), rest.end(), rng);
            const int u = std::uniform_int_distribution<int>(0, kTransposeMaxUnselected)(rng);
            const int k = static_cast<int>(rest.size()) - u;
            const Qubits qubits(rest.begin(), rest.begin() + k);
            SCOPED_TRACE(case_text(seed, n, qubits) + ", fixed mask " + std::to_string(fixed.mask) + " values " +
                         std::to_string(fixed.values));
            const TransposePlan plan = make_transpose_plan(n, qubits, fixed);
            ASSERT_EQ(plan.block_bits, n - m - kTransposeTileBits);
            std::vector<int> loaded(std::size_t{1} << n, 0), written(std::size_t{1} << k, 0);
            for (std::uint64_t block = 0; block < (std::uint64_t{1} << plan.block_bits); ++block) {
                emulate_block(plan, n, qubits, block, &loaded, &written, fixed);
                if (HasFatalFailure()) return;
            }
            for (std::size_t i = 0; i < loaded.size(); ++i) {
                ASSERT_EQ(loaded[i], (i & fixed.mask) == fixed.values ? 1 : 0) << "amplitude " << i << " load count";
            }
            for (std::size_t b = 0; b < written.size(); ++b) ASSERT_EQ(written[b], 1) << "bin " << b << " write count";
        }
    }
}

// The shapes the benchmark reports: k = n descending reads runs of 64
// amplitudes and writes runs of 32 bins (the 11 tile bits alternate from
// index bit 0: 6 low index bits, 5 top qubits); ascending holds the 11 lowest
// bits whole.
TEST(MarginalTransposePlan, RunLengthsOfTheBenchmarkLayouts) {
    const TransposePlan down = make_transpose_plan(30, descending(30, 30));
    EXPECT_EQ(down.read_run_bits, 6);
    EXPECT_EQ(down.write_run_bits, 5);
    const TransposePlan up = make_transpose_plan(30, ascending(0, 30));
    EXPECT_EQ(up.read_run_bits, 11);
    EXPECT_EQ(up.write_run_bits, 11);
    // k = n - 3 descending: qubits 0..2 are unselected and in the tile, so the
    // low run starts 3 long; then 8 bits alternate from bit 3 and qubit 29.
    const TransposePlan down3 = make_transpose_plan(30, descending(30, 27));
    EXPECT_EQ(down3.unselected_bits, 3);
    EXPECT_EQ(down3.read_run_bits, 7);
    EXPECT_EQ(down3.write_run_bits, 4);
    // k = n - 4 descending: qubits 0..3 unselected, then 7 bits alternate,
    // 4 low (bits 4..7) and 3 top qubits.
    const TransposePlan down4 = make_transpose_plan(24, descending(24, 20));
    EXPECT_EQ(down4.unselected_bits, 4);
    EXPECT_EQ(down4.read_run_bits, 8);
    EXPECT_EQ(down4.write_run_bits, 3);
    // The shortest runs: with the unselected qubits neither the lowest index
    // bits nor the first qubits of the list, the 7 alternating bits give
    // runs of 16 amplitudes read and 8 bins written.
    const TransposePlan shortest = make_transpose_plan(24, Qubits{23, 22, 21, 20, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                                   10, 11, 16, 17, 18, 19});
    EXPECT_EQ(shortest.unselected_bits, 4);
    EXPECT_EQ(shortest.read_run_bits, 4);
    EXPECT_EQ(shortest.write_run_bits, 3);
}

}  // namespace
