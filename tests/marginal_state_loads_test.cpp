// BinStationary's choice of state loads (src/marginal_state_loads.hpp):
// evict-first where the state is at least twice the L2 and the output at
// most half of it. Plain C++, no GPU: the rule on an H100's 50 MiB of L2,
// where it was measured, and at the edges of its range. The kernels' two
// forms are compared bit for bit on the GPU in marginal_transpose_test.cpp
// and marginal_step_segments_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>

#include "marginal_state_loads.hpp"

namespace {

using qmarg::gpu::state_loads_for;
using qmarg::gpu::StateLoads;

constexpr std::uint64_t kH100L2 = std::uint64_t{50} << 20;
constexpr bool kFloat = true;
constexpr bool kDouble = false;

TEST(MarginalStateLoads, EvictFirstWhereTheOutputFitsBesideALargeState) {
    // n = 24: 128 MiB (float) and 256 MiB (double) states, outputs up to 16 MiB.
    for (const bool single : {kFloat, kDouble}) {
        for (int k : {1, 8, 20, 21}) {
            EXPECT_EQ(StateLoads::EvictFirst, state_loads_for(24, k, single, kH100L2)) << "k = " << k;
        }
    }
    EXPECT_EQ(StateLoads::EvictFirst, state_loads_for(26, 21, kDouble, kH100L2));
    EXPECT_EQ(StateLoads::EvictFirst, state_loads_for(30, 1, kFloat, kH100L2));
    // n = 23: a double state is 128 MiB.
    EXPECT_EQ(StateLoads::EvictFirst, state_loads_for(23, 20, kDouble, kH100L2));
}

TEST(MarginalStateLoads, PlainWhereTheOutputIsLargeOrTheStateSmall) {
    // Outputs of 32 MiB and more (k >= 22): more than half the L2.
    for (int n : {24, 26, 30}) {
        for (int k : {22, 23, n}) {
            EXPECT_EQ(StateLoads::Normal, state_loads_for(n, k, kDouble, kH100L2)) << "n = " << n << ", k = " << k;
            EXPECT_EQ(StateLoads::Normal, state_loads_for(n, k, kFloat, kH100L2)) << "n = " << n << ", k = " << k;
        }
    }
    // States under 100 MiB: n = 22 (64 MiB double, 32 MiB float), n = 23 float (64 MiB).
    EXPECT_EQ(StateLoads::Normal, state_loads_for(22, 20, kDouble, kH100L2));
    EXPECT_EQ(StateLoads::Normal, state_loads_for(22, 1, kFloat, kH100L2));
    EXPECT_EQ(StateLoads::Normal, state_loads_for(23, 20, kFloat, kH100L2));
    EXPECT_EQ(StateLoads::Normal, state_loads_for(1, 1, kDouble, kH100L2));
}

TEST(MarginalStateLoads, EdgesOfTheRange) {
    // The bounds themselves: a state of exactly twice the L2 and an output of
    // exactly half of it take evict-first loads.
    const std::uint64_t l2 = std::uint64_t{1} << 20;  // 1 MiB: states of 2 MiB = 2^17 double amplitudes
    EXPECT_EQ(StateLoads::EvictFirst, state_loads_for(17, 16, kDouble, l2));  // output 512 KiB
    EXPECT_EQ(StateLoads::Normal, state_loads_for(17, 17, kDouble, l2));      // output 1 MiB
    EXPECT_EQ(StateLoads::Normal, state_loads_for(16, 1, kDouble, l2));       // state 1 MiB
    EXPECT_EQ(StateLoads::EvictFirst, state_loads_for(18, 1, kFloat, l2));    // state 2 MiB
    // An unknown L2 (0) keeps plain loads; the largest states and outputs do not overflow.
    EXPECT_EQ(StateLoads::Normal, state_loads_for(24, 20, kDouble, 0));
    EXPECT_EQ(StateLoads::EvictFirst, state_loads_for(58, 1, kDouble, kH100L2));
    EXPECT_EQ(StateLoads::Normal, state_loads_for(58, 58, kDouble, kH100L2));
    EXPECT_EQ(StateLoads::Normal, state_loads_for(58, 58, kDouble, ~std::uint64_t{0}));
}

}  // namespace
