// BinStationaryAtomic: its rule (where it merges split segments with atomics),
// and on the GPU its results against the CPU reference where it does, and
// bitwise equal to BinStationary's where it does not (the same kernels run).
// States of n = 12..25 qubits, fresh and random; the qubit lists are the
// benchmark's layouts plus random ones, so that every outcome of the rule
// (no atomics, atomics on many parts, on few parts, into copies of the
// output on few parts) occurs. Failures name the seed, n and the qubit
// list.
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "marginal_support.hpp"
#include "qmarg/marginal.hpp"
#include "qmarg/state_vector.hpp"
#include "test_support.hpp"

#if defined(QMARG_TESTS_WITH_CUDA)
#include "marginal_atomic_merge.hpp"
#endif

namespace {

using qmarg::Device;
using qmarg::MarginalOptions;
using qmarg::MarginalStrategy;
using qmarg::Qubits;
using qmarg::StateVector;

Qubits lowest(int k) {
    Qubits qubits(k);
    for (int j = 0; j < k; ++j) qubits[j] = j;
    return qubits;
}

Qubits highest(int n, int k) { return qmarg_test::highest_qubits(n, k, false); }

#if defined(QMARG_TESTS_WITH_CUDA)

using qmarg::gpu::AtomicMerge;
using qmarg::gpu::bin_stationary_atomic_merge;
using qmarg::gpu::MergeDevice;

// The GPUs the rule was measured on, as their drivers report them (memory
// clock in MHz, bus width, multiprocessors).
constexpr MergeDevice kH100 = qmarg::gpu::merge_device_of(2619.0, 5120, 132);  // 80GB HBM3
constexpr MergeDevice kH200 = qmarg::gpu::merge_device_of(3201.0, 6016, 132);

// The rule where it was measured (n = 22..26, src/marginal_bin_stationary_plan.cpp),
// as (double, float): atomics on many parts for one or two bins, for many
// bins on high qubits and for 4 spread ones (whose warps hold unselected
// bits, unselected_warp_bits_pay), where many parts are 4096 blocks, and on
// small states wherever the requests that meet on a KiB of the output stay
// under 2^(n - 10) in either precision (3 bins on the highest qubits); on
// few parts into the output where they would not and few parts would meet
// often enough to take copies (the lowest 6 qubits, in any order); on few
// parts where many parts are only 1024 blocks (n = 22) or would meet too
// often (the lowest 3 to 5 qubits, or 5 of them and one more), where
// unselected warp bits leave few parts of several short segments (the
// lowest 8 or 10 qubits), and in
// float where many parts would interleave their segments finely (4 or more
// selected bits below their warps' highest: the lowest 10 of 24 and 12 of 26,
// qubits 6..9 and 23 of 24; qubits 6..8 and 23 stay on many parts);
// into copies of the output on few parts where many parts are too few and
// the few parts of one segment meet on 64 bins or more (the lowest 6 qubits
// of 22); partial rows where few parts of two segments meet on 128 bins (the
// lowest 7 qubits of 22); nothing to merge where no segment is split, on the
// transposed path and on the small-state kernel. On double states of 2^24 to
// 2^26 amplitudes BinStationary's partial rows replace many parts, copies
// of the output and the few parts that stand in for them (few parts into
// the output otherwise stay), and on larger states many
// parts run as everywhere. Where atomics pay on many parts but few parts
// split no segment, the length of those few parts' blocks decides: the
// highest 12 of 26 qubits run few parts, nothing merged, in float too (at
// least 512 KiB a block), and of 24 qubits many parts with atomics in float
// (256 KiB).
TEST(MarginalAtomicMergeRule, MergesWithAtomicsWhereThatWasMeasuredFaster) {
    const auto expect = [](AtomicMerge in_double, AtomicMerge in_float, int n, const Qubits& qubits) {
        SCOPED_TRACE("n = " + std::to_string(n) + ", " + qmarg_test::describe(qubits));
        EXPECT_EQ(in_double, bin_stationary_atomic_merge(n, qubits, false, kH100)) << "double";
        EXPECT_EQ(in_float, bin_stationary_atomic_merge(n, qubits, true, kH100)) << "float";
    };
    using M = AtomicMerge;
    expect(M::None, M::ManyParts, 24, {0});
    expect(M::None, M::ManyParts, 24, {23});
    expect(M::None, M::ManyParts, 24, {12, 3});
    expect(M::None, M::ManyParts, 24, highest(24, 10));
    expect(M::None, M::ManyParts, 24, highest(24, 3));
    expect(M::None, M::ManyParts, 24, highest(24, 12));
    expect(M::None, M::ManyParts, 26, {0});
    expect(M::ManyParts, M::ManyParts, 23, {0});
    expect(M::ManyParts, M::ManyParts, 28, {0});
    expect(M::ManyParts, M::ManyParts, 30, {0});
    expect(M::ManyParts, M::ManyParts, 28, lowest(6));
    expect(M::None, M::FewParts, 24, lowest(6));
    expect(M::FewParts, M::FewParts, 24, {0, 1, 2, 3, 4, 23});
    expect(M::None, M::FewParts, 26, lowest(6));
    expect(M::None, M::FewParts, 25, {5, 4, 3, 2, 1, 0});
    expect(M::FewParts, M::FewParts, 24, lowest(3));
    expect(M::FewParts, M::FewParts, 24, lowest(4));
    expect(M::FewParts, M::FewParts, 24, lowest(5));
    expect(M::FewParts, M::FewParts, 26, lowest(5));
    expect(M::None, M::ManyParts, 24, {0, 7, 15, 23});
    expect(M::FewParts, M::FewParts, 22, {0});
    expect(M::FewParts, M::FewParts, 22, highest(22, 3));
    expect(M::FewParts, M::FewParts, 24, lowest(8));
    expect(M::FewParts, M::FewParts, 22, lowest(10));
    expect(M::None, M::FewParts, 24, lowest(10));  // many parts would interleave their segments finely
    expect(M::None, M::FewParts, 26, lowest(12));
    expect(M::None, M::FewParts, 24, {6, 7, 8, 9, 23});
    expect(M::None, M::ManyParts, 24, {6, 7, 8, 23});  // 3 selected bits below the warps' highest
    expect(M::FewPartsIntoCopies, M::FewPartsIntoCopies, 22, lowest(6));
    expect(M::None, M::None, 22, lowest(7));
    expect(M::None, M::None, 24, highest(24, 16));  // no segment split
    expect(M::None, M::None, 26, highest(26, 12));  // few parts split no segment
    expect(M::None, M::None, 24, lowest(24));       // the transposed path
    expect(M::None, M::None, 8, {0});               // the small-state kernel
}

// Many parts' blocks must stream for at least a microsecond at one
// multiprocessor's share of the device's bandwidth
// (many_parts_blocks_long_enough): on an H200 their blocks of 32 KiB (float
// states of 2^23 and 2^24 amplitudes) are too short, and few parts take
// their place with atomics into the output; from 2^25 amplitudes (64 KiB)
// and in double (64 KiB at 2^23) many parts stay. The merges that were not
// many parts stay as they were, and a device that reports no bandwidth
// keeps the rule measured on an H100.
TEST(MarginalAtomicMergeRule, ManyPartsNeedBlocksLongEnoughForTheDevice) {
    using M = AtomicMerge;
    for (const Qubits& qubits : {Qubits{0}, Qubits{23}, Qubits{12, 3}, highest(24, 10), Qubits{0, 7, 15, 23}}) {
        SCOPED_TRACE(qmarg_test::describe(qubits));
        EXPECT_EQ(M::ManyParts, bin_stationary_atomic_merge(24, qubits, true, kH100));
        EXPECT_EQ(M::ManyParts, bin_stationary_atomic_merge(24, qubits, true, MergeDevice{}));
        EXPECT_EQ(M::FewParts, bin_stationary_atomic_merge(24, qubits, true, kH200));
    }
    EXPECT_EQ(M::ManyParts, bin_stationary_atomic_merge(23, {0}, true, kH100));
    EXPECT_EQ(M::FewParts, bin_stationary_atomic_merge(23, {0}, true, kH200));
    EXPECT_EQ(M::ManyParts, bin_stationary_atomic_merge(23, {0}, false, kH200));
    EXPECT_EQ(M::ManyParts, bin_stationary_atomic_merge(25, {0}, true, kH200));
    EXPECT_EQ(M::ManyParts, bin_stationary_atomic_merge(26, {12, 3}, true, kH200));
    // (The highest 10 of 26, many parts on the H100, split no segment on the
    // H200's plan of few parts with side-by-side warps: no atomics.)
    EXPECT_EQ(M::ManyParts, bin_stationary_atomic_merge(26, highest(26, 10), true, kH100));
    EXPECT_EQ(M::None, bin_stationary_atomic_merge(26, highest(26, 10), true, kH200));
    EXPECT_EQ(M::FewParts, bin_stationary_atomic_merge(24, lowest(6), true, kH200));
    EXPECT_TRUE(qmarg::gpu::bin_stationary_atomics_gathered(24, lowest(6), true, kH200));
    EXPECT_EQ(M::FewParts, bin_stationary_atomic_merge(24, lowest(4), true, kH200));
    EXPECT_EQ(M::None, bin_stationary_atomic_merge(24, {0}, false, kH200));  // partial rows in double
}

// Many parts' atomics arrive over the whole call, so on a GPU whose memory
// is faster than the H100's the bound on how many meet in a KiB of the
// output shrinks with the call (atomic_merge_pays): on an H200 the lowest 6
// and 10 of 28 qubits (2^18 a KiB, at the H100's bound) take partial rows;
// the lowest 5 (2^17) and 12 (2^16) of 28 and the lowest 10 of 30 keep
// many parts, and so does every plan of one wave (the highest 3 of 20).
TEST(MarginalAtomicMergeRule, ManyPartsMeetLessOftenOnFasterMemory) {
    using M = AtomicMerge;
    for (bool single : {false, true}) {
        SCOPED_TRACE(single ? "float" : "double");
        for (int k : {6, 10}) {
            EXPECT_EQ(M::ManyParts, bin_stationary_atomic_merge(28, lowest(k), single, kH100)) << k;
            EXPECT_EQ(M::None, bin_stationary_atomic_merge(28, lowest(k), single, kH200)) << k;
        }
        EXPECT_EQ(M::ManyParts, bin_stationary_atomic_merge(28, lowest(5), single, kH200));
        EXPECT_EQ(M::ManyParts, bin_stationary_atomic_merge(28, lowest(12), single, kH200));
        EXPECT_EQ(M::ManyParts, bin_stationary_atomic_merge(30, lowest(10), single, kH200));
        EXPECT_EQ(M::FewParts, bin_stationary_atomic_merge(20, highest(20, 3), single, kH200));
    }
}

// On a GPU whose memory is faster than the H100's the plan of few parts
// takes side-by-side warps from 2^5 tasks a segment for BinStationaryAtomic
// (side_by_side_warps_pay): double states of 2^24 to 2^26 amplitudes, float
// ones of 2^25 and 2^26; BinStationary's plan, the H100's and those of other
// sizes keep the warps on selected bits.
TEST(MarginalAtomicMergeRule, FewPartsWarpsSideBySideOnFasterMemory) {
    using qmarg::gpu::bin_stationary_atomic_plan_differs;
    for (const MergeDevice& device : {kH100, MergeDevice{}}) {
        EXPECT_FALSE(bin_stationary_atomic_plan_differs(26, highest(26, 12), false, device));
        EXPECT_FALSE(bin_stationary_atomic_plan_differs(26, highest(26, 12), true, device));
        EXPECT_FALSE(bin_stationary_atomic_plan_differs(24, highest(24, 10), false, device));
    }
    EXPECT_TRUE(bin_stationary_atomic_plan_differs(26, highest(26, 12), false, kH200));
    EXPECT_TRUE(bin_stationary_atomic_plan_differs(26, highest(26, 12), true, kH200));
    EXPECT_TRUE(bin_stationary_atomic_plan_differs(26, highest(26, 10), true, kH200));
    EXPECT_TRUE(bin_stationary_atomic_plan_differs(25, highest(25, 10), false, kH200));
    EXPECT_TRUE(bin_stationary_atomic_plan_differs(24, highest(24, 10), false, kH200));
    EXPECT_EQ(AtomicMerge::None, bin_stationary_atomic_merge(26, highest(26, 12), true, kH200));
    // Float states of 2^24 amplitudes keep BinStationary's plan (atomics on
    // its few parts), as do states of 2^23 and beyond 2^26 amplitudes.
    EXPECT_FALSE(bin_stationary_atomic_plan_differs(24, highest(24, 10), true, kH200));
    EXPECT_EQ(AtomicMerge::FewParts, bin_stationary_atomic_merge(24, highest(24, 10), true, kH200));
    EXPECT_FALSE(bin_stationary_atomic_plan_differs(23, highest(23, 10), false, kH200));
    EXPECT_FALSE(bin_stationary_atomic_plan_differs(28, highest(28, 14), false, kH200));
    EXPECT_FALSE(bin_stationary_atomic_plan_differs(28, highest(28, 14), true, kH200));
}

// Gathered atomics where every warp of a block writes and at least 2^8
// blocks add into one line (one bin a warp, qubit 0 or not), and on states
// of up to 2^24 amplitudes where gathering halves a block's sector requests
// from 8 or more (the lowest 4 and 5 qubits, whose lanes' two bins share
// sectors); not where a block's atomics take one or two instructions in one
// or two sectors (one qubit; the lowest 3), where fewer blocks meet on a
// line (the highest 6 qubits of 22; the copies of the output), where the
// warps hold unselected bits (4 spread qubits of 22 and 24 on states of up
// to 2^26 amplitudes, unselected_warp_bits_pay), on the lowest 5 of 26
// qubits, nor where nothing is merged with atomics.
TEST(MarginalAtomicMergeRule, GathersAtomicsWhereManyInstructionsOrSectorsMeetOnALine) {
    using qmarg::gpu::bin_stationary_atomics_gathered;
    for (bool single : {false, true}) {
        SCOPED_TRACE(single ? "float" : "double");
        EXPECT_TRUE(bin_stationary_atomics_gathered(20, highest(20, 3), single, kH100));
        EXPECT_TRUE(bin_stationary_atomics_gathered(20, {19, 18, 17, 16}, single, kH100));
        EXPECT_TRUE(bin_stationary_atomics_gathered(21, highest(21, 4), single, kH100));
        EXPECT_TRUE(bin_stationary_atomics_gathered(27, {26, 25, 24, 23}, single, kH100));
        EXPECT_TRUE(bin_stationary_atomics_gathered(28, {0, 9, 18, 27}, single, kH100));
        EXPECT_TRUE(bin_stationary_atomics_gathered(28, highest(28, 3), single, kH100));
        EXPECT_TRUE(bin_stationary_atomics_gathered(22, lowest(4), single, kH100));  // 8 sectors -> 4
        EXPECT_TRUE(bin_stationary_atomics_gathered(22, lowest(5), single, kH100));  // 16 -> 8
        EXPECT_TRUE(bin_stationary_atomics_gathered(24, lowest(5), single, kH100));
        // Few parts into the output in float (32 sectors -> 16); partial rows in double.
        EXPECT_EQ(single, bin_stationary_atomics_gathered(24, lowest(6), single, kH100));
        EXPECT_FALSE(bin_stationary_atomics_gathered(22, {0}, single, kH100));
        EXPECT_FALSE(bin_stationary_atomics_gathered(22, lowest(3), single, kH100));  // 4 sectors -> 2
        EXPECT_FALSE(bin_stationary_atomics_gathered(26, lowest(5), single, kH100));
        EXPECT_FALSE(bin_stationary_atomics_gathered(22, highest(22, 6), single, kH100));
        EXPECT_FALSE(bin_stationary_atomics_gathered(22, {0, 7, 14, 21}, single, kH100));  // unselected warp bits
        EXPECT_FALSE(bin_stationary_atomics_gathered(24, {0, 7, 15, 23}, single, kH100));
        EXPECT_FALSE(bin_stationary_atomics_gathered(22, lowest(6), single, kH100));  // copies of the output
        EXPECT_FALSE(bin_stationary_atomics_gathered(22, lowest(7), single, kH100));  // partial rows
    }
}

template <class Real>
using MarginalAtomicMergeTest = qmarg_test::GpuTest<Real>;

TYPED_TEST_SUITE(MarginalAtomicMergeTest, qmarg_test::Reals, qmarg_test::RealName);

TYPED_TEST(MarginalAtomicMergeTest, MatchesTheCpuReferenceAndBinStationaryElsewhere) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    const bool single = std::is_same<TypeParam, float>::value;
    const MarginalOptions atomic{MarginalStrategy::BinStationaryAtomic};
    const MarginalOptions engine{MarginalStrategy::BinStationary};
    int outcomes[4] = {0, 0, 0, 0};  // indexed by AtomicMerge
    int gathered = 0;                    // of those with atomics, how many gather them per block
    int own_plans = 0;                   // cases whose plan of few parts is not BinStationary's
    const MergeDevice device = qmarg::gpu::merge_device();
    // n = 25: many parts on every GPU measured (on an H200 float states of
    // 2^23 and 2^24 amplitudes run few parts in their place).
    for (int n : {12, 14, 16, 18, 20, 21, 22, 23, 24, 25}) {
        StateVector<TypeParam> gpu(n, Device::Gpu);
        gpu.set_random_state(rng());
        const StateVector<TypeParam> cpu = gpu.to(Device::Cpu);
        std::vector<Qubits> lists = {{0},
                                     {n - 1},
                                     {n / 2, 0},
                                     lowest(3),
                                     lowest(4),
                                     lowest(5),
                                     highest(n, 3),
                                     lowest(6),
                                     lowest(7),
                                     lowest(8),
                                     lowest(10),
                                     highest(n, 10),
                                     highest(n, 12),
                                     {0, n / 3, 2 * n / 3, n - 1},
                                     {0, 1, 2, 3, 4, n - 1},
                                     {n - 1, n - 2, n - 3, n - 4}};
        for (int k : {1, 2, 4, 8}) lists.push_back(qmarg_test::random_qubits(n, k, rng));
        // Segments of 4 tasks, several a block: in float from n = 22 blocks
        // of twice as many (log_whole_segment_tau), also in descending order.
        Qubits short_segments = highest(n, n - 8);
        lists.push_back(short_segments);
        std::reverse(short_segments.begin(), short_segments.end());
        lists.push_back(short_segments);
        for (const Qubits& qubits : lists) {
            SCOPED_TRACE("random seed " + std::to_string(seed) + ", n = " + std::to_string(n) + ", " +
                         qmarg_test::describe(qubits));
            const std::vector<double> got = qmarg::marginal_probabilities(gpu, qubits, atomic);
            qmarg_test::expect_bins_near<TypeParam>(got, qmarg::marginal_probabilities(cpu, qubits));
            const std::vector<double> fixed = qmarg::marginal_probabilities(gpu, qubits, engine);
            const AtomicMerge merge = bin_stationary_atomic_merge(n, qubits, single, device);
            ++outcomes[static_cast<int>(merge)];
            if (qmarg::gpu::bin_stationary_atomics_gathered(n, qubits, single, device)) ++gathered;
            const bool own_plan = qmarg::gpu::bin_stationary_atomic_plan_differs(n, qubits, single, device);
            if (own_plan) ++own_plans;
            if (merge != AtomicMerge::None) {
                qmarg_test::expect_bins_near<TypeParam>(got, fixed);
            } else if (own_plan) {
                // No atomics on a plan of its own: not BinStationary's bits,
                // but the same ones on every run.
                qmarg_test::expect_bins_near<TypeParam>(got, fixed);
                const std::vector<double> again = qmarg::marginal_probabilities(gpu, qubits, atomic);
                ASSERT_EQ(got.size(), again.size());
                EXPECT_EQ(0, std::memcmp(got.data(), again.data(), got.size() * sizeof(double)))
                    << "not bitwise equal from run to run without atomics";
            } else {
                ASSERT_EQ(got.size(), fixed.size());
                EXPECT_EQ(0, std::memcmp(got.data(), fixed.data(), got.size() * sizeof(double)))
                    << "not bitwise equal to BinStationary, whose kernels it runs here";
            }
        }
    }
    // Every outcome of the rule was exercised.
    EXPECT_GE(outcomes[static_cast<int>(AtomicMerge::None)], 10);
    EXPECT_GE(outcomes[static_cast<int>(AtomicMerge::ManyParts)], 3);
    EXPECT_GE(outcomes[static_cast<int>(AtomicMerge::FewParts)], 20);
    EXPECT_GE(outcomes[static_cast<int>(AtomicMerge::FewPartsIntoCopies)], 4);  // lowest 6 of 20..23
    // The highest 3 of 20 and the highest 4, descending, of 20 and 21: from n = 22 on the warps
    // of these plans hold unselected bits, and no warp writes bins of its own.
    EXPECT_GE(gathered, 3);
    // On GPUs whose memory is faster than the H100's (side_by_side_warps_pay)
    // the highest 10 of 24 and 25 qubits of a double state run side-by-side
    // warps where BinStationary's hold selected bits.
    if (!single && qmarg::gpu::bin_stationary_atomic_plan_differs(24, highest(24, 10), false, device)) {
        EXPECT_GE(own_plans, 2);
    }
}

// BinStationaryAtomic called from several host threads at once: the plan
// cache is shared, and every call's zeroing kernel, streaming kernel and
// sum of copies must stay in order on the default stream while the other
// threads queue theirs. Four threads, each calling every case three times in
// its own order, on merges into the output and into copies of it, small and
// large outputs (the lowest 14 of 22 qubits: 2^14 bins); every result
// against the CPU reference.
TYPED_TEST(MarginalAtomicMergeTest, ThreadsCallingAtOnceMatchTheCpuReference) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    SCOPED_TRACE("random seed " + std::to_string(seed));
    const bool single = std::is_same<TypeParam, float>::value;
    struct Case {
        int state;  // index into states
        Qubits qubits;
        std::vector<double> cpu;
    };
    std::vector<StateVector<TypeParam>> states;
    for (int n : {20, 22, 23}) {
        states.emplace_back(n, Device::Gpu);
        states.back().set_random_state(seed + static_cast<std::uint64_t>(n));
    }
    // In both precisions: few parts into the output, into copies of it (the
    // lowest 6 of 22), many parts (n = 23; in float few parts into the output
    // on an H200, whose many parts' blocks of 32 KiB are too short).
    std::vector<Case> cases = {{0, highest(20, 10), {}}, {1, {0}, {}},
                               {1, lowest(4), {}},       {1, lowest(6), {}},
                               {1, lowest(14), {}},      {1, highest(22, 10), {}},
                               {2, highest(23, 10), {}}, {2, {0, 5, 10, 15, 20}, {}}};
    for (Case& c : cases) {
        const int n = states[c.state].num_qubits();
        SCOPED_TRACE("n = " + std::to_string(n) + ", " + qmarg_test::describe(c.qubits));
        ASSERT_NE(AtomicMerge::None, bin_stationary_atomic_merge(n, c.qubits, single, qmarg::gpu::merge_device()))
            << "a case of the atomic merge";
        c.cpu = qmarg::marginal_probabilities(states[c.state].to(Device::Cpu), c.qubits);
    }
    const MarginalOptions atomic{MarginalStrategy::BinStationaryAtomic};
    constexpr int kThreads = 4;
    constexpr int kRounds = 3;
    // results[t]: thread t's calls in order, each with the index of its case.
    std::vector<std::vector<std::pair<std::size_t, std::vector<double>>>> results(kThreads);
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            try {
                for (int r = 0; r < kRounds; ++r) {
                    for (std::size_t j = 0; j < cases.size(); ++j) {
                        const std::size_t index = (j + static_cast<std::size_t>(t)) % cases.size();
                        const Case& c = cases[index];
                        results[t].emplace_back(index,
                                                qmarg::marginal_probabilities(states[c.state], c.qubits, atomic));
                    }
                }
            } catch (const std::exception& e) {
                errors[t] = e.what();
            }
        });
    }
    for (std::thread& thread : threads) thread.join();
    for (int t = 0; t < kThreads; ++t) {
        ASSERT_EQ(errors[t], "") << "thread " << t;
        ASSERT_EQ(results[t].size(), kRounds * cases.size());
        for (std::size_t i = 0; i < results[t].size(); ++i) {
            const Case& c = cases[results[t][i].first];
            SCOPED_TRACE("thread " + std::to_string(t) + ", call " + std::to_string(i) + ", " +
                         qmarg_test::describe(c.qubits));
            qmarg_test::expect_bins_near<TypeParam>(results[t][i].second, c.cpu);
        }
    }
}

#endif  // QMARG_TESTS_WITH_CUDA

// Under MarginalOptions::deterministic the default strategy gives
// BinStationary's bits, also where BinStationaryAtomic would merge with
// atomics (a single qubit of a 20-qubit state).
template <class Real>
using DeterministicAutoTest = qmarg_test::GpuTest<Real>;

TYPED_TEST_SUITE(DeterministicAutoTest, qmarg_test::Reals, qmarg_test::RealName);

TYPED_TEST(DeterministicAutoTest, GivesBinStationaryBitsWhereAutoWouldMergeWithAtomics) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    SCOPED_TRACE("random seed " + std::to_string(seed));
    StateVector<TypeParam> gpu(20, Device::Gpu);
    gpu.set_random_state(seed);
    MarginalOptions deterministic;
    deterministic.deterministic = true;
    for (const Qubits& qubits : {Qubits{0}, Qubits{19, 4}}) {
        const std::vector<double> engine =
            qmarg::marginal_probabilities(gpu, qubits, MarginalOptions{MarginalStrategy::BinStationary});
        for (int repeat = 0; repeat < 3; ++repeat) {
            const std::vector<double> got = qmarg::marginal_probabilities(gpu, qubits, deterministic);
            ASSERT_EQ(got.size(), engine.size());
            EXPECT_EQ(0, std::memcmp(got.data(), engine.data(), got.size() * sizeof(double)))
                << qmarg_test::describe(qubits) << ", repeat " << repeat;
        }
    }
}

}  // namespace
