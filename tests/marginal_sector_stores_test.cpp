// BinStationary's streaming kernel where it stores whole sectors (its
// kSectorStores forms, cuda/marginal_bin_stationary.cu).
// The general loop's form: qubit lists whose first two qubits lie above 5
// (they become warp bits 0 and 1, the bins 0 and 1) and that hold all of
// qubits 1..5 (the lane bits), with two to five unselected qubits above 5,
// so that segments are long enough for the general loop (with four or five,
// states of up to 2^20 amplitudes split their segments and run the other
// forms). Each thread then stores the sums of another one.
// The step form's: lists whose first two qubits lie above 5 and that leave
// qubits 1 and 2 and any of 0, 3, 4, 5 unselected and hold all the others
// (segments of one load; bins 0 and 1 then go to the segments), among them
// the highest qubits in descending order. Each lane stores one of the four
// bins its group of four lanes holds. Only double states take that form;
// float ones run these lists through the step form as before.
// WhichListsStoreWholeSectors checks the rule's side. The GPU test checks
// against the CPU reference on fresh random states, float and double, with
// qubit 0 selected or not, through the library (BinStationary,
// BinStationaryAtomic, Auto) and through the streaming path alone (plain and
// evict-first state loads); BinStationary and the streaming path bitwise
// equal on repeat (where the other two split segments they merge them with
// atomics, which promise no bitwise repeat). Failures name the seed, n and
// the qubit list.
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "marginal_bin_stationary_plan.hpp"
#include "marginal_support.hpp"
#include "test_support.hpp"

namespace {

using qmarg::Device;
using qmarg::MarginalOptions;
using qmarg::MarginalStrategy;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg_test::expect_bins_near;

template <class Real>
using MarginalSectorStoresTest = qmarg_test::GpuTest<Real>;

TYPED_TEST_SUITE(MarginalSectorStoresTest, qmarg_test::Reals, qmarg_test::RealName);

// Two qubits above 5 first, then 1..5, qubit 0 where `with_bit0`, and the
// other qubits above 5 but `unselected` of them, all in random order.
Qubits sector_list(int n, int unselected, bool with_bit0, std::mt19937_64& rng) {
    std::vector<int> high;
    for (int q = 6; q < n; ++q) high.push_back(q);
    std::shuffle(high.begin(), high.end(), rng);
    high.resize(high.size() - static_cast<std::size_t>(unselected));
    Qubits rest(high.begin() + 2, high.end());
    for (int q = 1; q <= 5; ++q) rest.push_back(q);
    if (with_bit0) rest.push_back(0);
    std::shuffle(rest.begin(), rest.end(), rng);
    Qubits qubits{high[0], high[1]};
    qubits.insert(qubits.end(), rest.begin(), rest.end());
    return qubits;
}

// Two qubits above 5 first, then every other qubit but 1, 2 and those of
// 0, 3, 4, 5 that `low_unselected` (a bit mask over them) leaves out, in
// random order.
Qubits step_sector_list(int n, unsigned low_unselected, std::mt19937_64& rng) {
    std::vector<int> high;
    for (int q = 6; q < n; ++q) high.push_back(q);
    std::shuffle(high.begin(), high.end(), rng);
    Qubits rest(high.begin() + 2, high.end());
    const int low[] = {0, 3, 4, 5};
    for (int j = 0; j < 4; ++j)
        if (!((low_unselected >> j) & 1u)) rest.push_back(low[j]);
    std::shuffle(rest.begin(), rest.end(), rng);
    Qubits qubits{high[0], high[1]};
    qubits.insert(qubits.end(), rest.begin(), rest.end());
    return qubits;
}

// The highest k qubits of n, in descending order.
Qubits highest_descending(int n, int k) { return qmarg_test::highest_qubits(n, k, true); }

// The lists the GPU test runs at n: four of each form (the general loop's
// with 2..5 unselected qubits above 5, the step form's with random
// unselected qubits among 0, 3, 4, 5), qubit 0 selected or not; and the
// highest n - 4 .. n - 6 qubits in descending order.
std::vector<Qubits> sector_lists(int n, std::mt19937_64& rng) {
    std::vector<Qubits> lists;
    for (int unselected = 2; unselected <= 5; ++unselected)
        for (bool with_bit0 : {true, false}) lists.push_back(sector_list(n, unselected, with_bit0, rng));
    for (int j = 0; j < 4; ++j) {
        const unsigned low_unselected = static_cast<unsigned>(rng() % 16);
        lists.push_back(step_sector_list(n, low_unselected | (j % 2 ? 1u : 0u), rng));
    }
    for (int k = n - 4; k >= n - 6; --k) lists.push_back(highest_descending(n, k));
    return lists;
}

// The rule (host work alone, src/marginal_bin_stationary_plan.cpp, so it runs
// in every build, without a GPU too): the GPU test's lists of the general
// loop's form take it where their segments stay whole,
// and those of the step form's take it in double (not in float); so do the
// benchmark sweep's double n = 24, k = 20 list and its descending qubits;
// lists whose lowest bins lie on the lanes do not.
TEST(MarginalSectorStoresPlan, WhichListsStoreWholeSectors) {
    using qmarg::gpu::streaming_stores_whole_sectors;
    const Qubits sweep_random = {20, 12, 23, 21, 0, 17, 4, 1, 3, 6, 10, 5, 22, 15, 19, 2, 13, 16, 18, 11};
    EXPECT_TRUE(streaming_stores_whole_sectors(24, sweep_random, false));
    EXPECT_TRUE(streaming_stores_whole_sectors(24, sweep_random, true));
    Qubits lowest(20), descending(20);
    for (int j = 0; j < 20; ++j) {
        lowest[static_cast<std::size_t>(j)] = j;
        descending[static_cast<std::size_t>(j)] = 23 - j;
    }
    EXPECT_FALSE(streaming_stores_whole_sectors(24, lowest, false));
    EXPECT_TRUE(streaming_stores_whole_sectors(24, descending, false));
    EXPECT_FALSE(streaming_stores_whole_sectors(26, highest_descending(26, 20), true));
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    for (bool single : {false, true}) {
        for (int n : {14, 17, 20, 22}) {
            for (int unselected = 2; unselected <= 3; ++unselected) {
                for (bool with_bit0 : {true, false}) {
                    const Qubits qubits = sector_list(n, unselected, with_bit0, rng);
                    EXPECT_TRUE(streaming_stores_whole_sectors(n, qubits, single))
                        << "random seed " << seed << ", n = " << n << ", " << qmarg_test::describe(qubits)
                        << (single ? ", float" : ", double");
                }
            }
            for (unsigned low_unselected = 0; low_unselected < 16; ++low_unselected) {
                const Qubits qubits = step_sector_list(n, low_unselected, rng);
                EXPECT_EQ(!single, streaming_stores_whole_sectors(n, qubits, single))
                    << "random seed " << seed << ", n = " << n << ", " << qmarg_test::describe(qubits)
                    << (single ? ", float" : ", double");
            }
            for (int k = n - 4; k >= n - 6; --k)
                EXPECT_EQ(!single, streaming_stores_whole_sectors(n, highest_descending(n, k), single))
                    << "n = " << n << ", k = " << k << (single ? ", float" : ", double");
        }
    }
}

TYPED_TEST(MarginalSectorStoresTest, WholeSectorStoresMatchTheCpuReference) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    for (int n : {14, 17, 20, 22}) {
        const std::uint64_t state_seed = rng();
        StateVector<TypeParam> gpu(n, Device::Gpu);
        gpu.set_random_state(state_seed);
        const StateVector<TypeParam> cpu = gpu.to(Device::Cpu);
        for (const Qubits& qubits : sector_lists(n, rng)) {
            const std::vector<double> reference = qmarg::marginal_probabilities(cpu, qubits);
            const std::string where = "random seed " + std::to_string(seed) + ", n = " + std::to_string(n) +
                                      ", " + qmarg_test::describe(qubits);
            for (MarginalStrategy strategy :
                 {MarginalStrategy::BinStationary, MarginalStrategy::BinStationaryAtomic, MarginalStrategy::Auto}) {
                SCOPED_TRACE(where + ", " + qmarg::to_string(strategy));
                const MarginalOptions options{strategy};
                const std::vector<double> first = qmarg::marginal_probabilities(gpu, qubits, options);
                expect_bins_near<TypeParam>(first, reference);
                if (strategy != MarginalStrategy::BinStationary) continue;
                const std::vector<double> again = qmarg::marginal_probabilities(gpu, qubits, options);
                EXPECT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * sizeof(double)))
                    << "not bitwise equal on repeat";
            }
#if defined(QMARG_TESTS_WITH_CUDA)
            SCOPED_TRACE(where + ", streaming path alone");
            qmarg_test::expect_streaming_path_matches(gpu, qubits, reference);
#endif
            if (this->HasFatalFailure()) return;
        }
    }
}

}  // namespace
