// The timing API (qmarg/benchmark.hpp): one time per timed run, every time
// positive, errors for bad counts and for strategies that cannot run a case, on
// every backend and precision; and the two run-count rules the benchmarks share
// (a budget for slow cases, a least time for fast ones), on stand-in timings.
// What the times are worth is the benchmarks' job.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "qmarg/benchmark.hpp"
#include "qmarg/qmarg.hpp"
#include "test_support.hpp"

namespace {

template <class B>
class Benchmark : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(Benchmark, qmarg_test::AllBackends, qmarg_test::BackendName);

TYPED_TEST(Benchmark, OnePositiveTimePerRun) {
    using Real = typename TestFixture::Real;
    const std::uint64_t seed = qmarg_test::fresh_seed();
    qmarg::StateVector<Real> state(12, TestFixture::device);
    state.set_random_state(seed);
    for (const qmarg::Qubits& qubits : {qmarg::Qubits{0}, qmarg::Qubits{11, 3, 7}}) {
        const std::vector<double> ms = qmarg::time_marginal_ms(state, qubits, {}, 1, 4);
        ASSERT_EQ(ms.size(), 4u) << qmarg_test::seed_trace(seed);
        for (double t : ms) EXPECT_GT(t, 0.0) << qmarg_test::seed_trace(seed);
    }
    const std::vector<double> roofline = qmarg::time_read_roofline_ms(state, 0, 3);
    ASSERT_EQ(roofline.size(), 3u);
    for (double t : roofline) EXPECT_GT(t, 0.0);
    EXPECT_GT(qmarg::read_roofline_ms(state, 5), 0.0);
    // Timing leaves the state as it was.
    EXPECT_NEAR(qmarg::total_probability(state), 1.0, 1e-5) << qmarg_test::seed_trace(seed);
}

TYPED_TEST(Benchmark, BadCountsAndQubitsAreErrors) {
    using Real = typename TestFixture::Real;
    qmarg::StateVector<Real> state(6, TestFixture::device);
    state.set_random_state(qmarg_test::fresh_seed());
    EXPECT_THROW(qmarg::time_marginal_ms(state, {0}, {}, -1, 3), qmarg::Error);
    EXPECT_THROW(qmarg::time_marginal_ms(state, {0}, {}, 0, 0), qmarg::Error);
    EXPECT_THROW(qmarg::time_marginal_ms(state, {0, 6}, {}, 0, 1), qmarg::Error);
    EXPECT_THROW(qmarg::time_marginal_ms(state, {2, 2}, {}, 0, 1), qmarg::Error);
    EXPECT_THROW(qmarg::time_read_roofline_ms(state, 0, 0), qmarg::Error);
    try {
        qmarg::time_read_roofline_ms(state, -2, 1);
        ADD_FAILURE() << "a negative warm-up was accepted";
    } catch (const qmarg::Error& e) {
        EXPECT_NE(std::string(e.what()).find("-2"), std::string::npos) << e.what();
    }
}

TEST(BenchmarkCpu, GpuStrategyOnCpuStateIsAnError) {
    qmarg::StateVector<double> state(5, qmarg::Device::Cpu);
    state.set_random_state(qmarg_test::fresh_seed());
    EXPECT_THROW(qmarg::time_marginal_ms(state, {0}, {qmarg::MarginalStrategy::BinStationary}, 1, 1), qmarg::Error);
}

TEST(BenchmarkGpu, EveryStrategyTimesAndLimitsThrowBeforeTiming) {
    QMARG_SKIP_IF_UNAVAILABLE(qmarg::Device::Gpu);
    const std::uint64_t seed = qmarg_test::fresh_seed();
    qmarg::StateVector<float> state(16, qmarg::Device::Gpu);
    state.set_random_state(seed);
    for (qmarg::MarginalStrategy s :
         {qmarg::MarginalStrategy::Auto, qmarg::MarginalStrategy::GlobalAtomic, qmarg::MarginalStrategy::SharedPrivatized,
          qmarg::MarginalStrategy::Partitioned, qmarg::MarginalStrategy::BinStationary,
          qmarg::MarginalStrategy::BinStationaryAtomic}) {
        const std::vector<double> ms = qmarg::time_marginal_ms(state, {15, 0, 4}, {s}, 1, 2);
        ASSERT_EQ(ms.size(), 2u) << qmarg::to_string(s) << ", " << qmarg_test::seed_trace(seed);
        for (double t : ms) EXPECT_GT(t, 0.0) << qmarg::to_string(s);
    }
    // 2^15 doubles of bins per block exceed shared memory on every current GPU.
    qmarg::Qubits fifteen;
    for (int q = 0; q < 15; ++q) fifteen.push_back(q);
    EXPECT_THROW(qmarg::time_marginal_ms(state, fifteen, {qmarg::MarginalStrategy::SharedPrivatized}, 1, 2),
                 qmarg::Error);
    const qmarg::GpuInfo info = qmarg::gpu_info();
    EXPECT_GE(info.clock_rate_khz, 0);
    EXPECT_GE(info.memory_clock_rate_khz, 0);
}

TEST(TimedRunCount, SlowCasesGetWhatFitsTheirBudgetButAtLeastMinRuns) {
    EXPECT_EQ(qmarg::timed_run_count(20, 5.0, 0.0, 3), 20);   // no budget: always the runs asked for
    EXPECT_EQ(qmarg::timed_run_count(20, 0.05, 2.0, 3), 20);  // 20 runs fit in 2 s
    EXPECT_EQ(qmarg::timed_run_count(20, 0.25, 2.0, 3), 8);   // floor(2 / 0.25)
    EXPECT_EQ(qmarg::timed_run_count(20, 1.5, 2.0, 3), 3);    // 1 fits; at least 3
    EXPECT_EQ(qmarg::timed_run_count(2, 1.5, 2.0, 3), 2);     // never more than asked for
    EXPECT_EQ(qmarg::timed_run_count(20, 0.0, 2.0, 3), 20);   // an instant check
    EXPECT_THROW(qmarg::timed_run_count(0, 0.1, 2.0, 3), qmarg::Error);
}

// A stand-in for a timing: every run takes `run_ms`, except the first
// `slow_first` of each call, which take `slow_ms` (a cold start).
struct FakeTiming {
    double run_ms;
    int slow_first = 0;
    double slow_ms = 0;
    std::vector<std::pair<int, int>> calls;  // (warmup, runs) of each call

    std::vector<double> operator()(int warmup, int runs) {
        calls.emplace_back(warmup, runs);
        std::vector<double> ms(static_cast<std::size_t>(runs), run_ms);
        for (int i = 0; i < std::min(slow_first, runs); ++i) ms[static_cast<std::size_t>(i)] = slow_ms;
        return ms;
    }
};

TEST(TimeUntilFilled, RetimesFastCasesUntilTheirRunsFillMinSeconds) {
    // 20 runs of 0.1 ms (2 ms) against 50 ms: retimed once with 500 runs.
    FakeTiming fast{0.1};
    int warmup = 3, runs = 20;
    std::vector<double> ms = qmarg::time_until_filled(std::ref(fast), 0.05, 100000, warmup, runs);
    ASSERT_EQ(fast.calls.size(), 2u);
    EXPECT_EQ(fast.calls[0], std::make_pair(3, 20));
    EXPECT_EQ(fast.calls[1], std::make_pair(0, 500));
    EXPECT_EQ(warmup, 23);
    EXPECT_EQ(runs, 500);
    EXPECT_EQ(ms.size(), 500u);

    // Slow first runs make the first estimate too small; each retiming at
    // least doubles the runs, until they fill the time.
    FakeTiming cold{0.1, 10, 2.0};
    warmup = 0;
    runs = 20;
    ms = qmarg::time_until_filled(std::ref(cold), 0.05, 100000, warmup, runs);
    double total = 0;
    for (double t : ms) total += t * 1e-3;
    EXPECT_GE(total, 0.05);
    for (std::size_t j = 1; j < cold.calls.size(); ++j) EXPECT_GE(cold.calls[j].second, 2 * cold.calls[j - 1].second);
    EXPECT_EQ(static_cast<std::size_t>(runs), ms.size());

    // Slow cases, min_seconds <= 0 and the run limit time once.
    FakeTiming slow{30.0};
    warmup = 2;
    runs = 20;
    EXPECT_EQ(qmarg::time_until_filled(std::ref(slow), 0.05, 100000, warmup, runs).size(), 20u);
    EXPECT_EQ(slow.calls.size(), 1u);
    FakeTiming off{0.1};
    EXPECT_EQ(qmarg::time_until_filled(std::ref(off), 0.0, 100000, warmup, runs).size(), 20u);
    EXPECT_EQ(off.calls.size(), 1u);
    FakeTiming capped{0.001};
    runs = 20;
    ms = qmarg::time_until_filled(std::ref(capped), 0.05, 1000, warmup, runs);
    EXPECT_EQ(runs, 1000);
    EXPECT_EQ(ms.size(), 1000u);

    int bad_warmup = -1, some_runs = 20;
    EXPECT_THROW(qmarg::time_until_filled(std::ref(fast), 0.05, 100000, bad_warmup, some_runs), qmarg::Error);
}

TEST(CompareMarginals, AcceptsWithinToleranceAndNamesTheFirstBinOutside) {
    const std::vector<double> want{0.5, 0.25, 0.25, 0.0};
    EXPECT_EQ(qmarg::compare_marginals(want, want, 1e-9), "");
    EXPECT_EQ(qmarg::compare_marginals({0.5 + 1e-12, 0.25, 0.25, 0.0}, want, 1e-9), "");
    // A bin far below the mean is held to the tolerance relative to 1e-3 of
    // the mean bin: 1e-14 off an empty bin passes, 1e-9 does not.
    EXPECT_EQ(qmarg::compare_marginals({0.5, 0.25, 0.25, 1e-14}, want, 1e-9), "");
    const std::string far = qmarg::compare_marginals({0.5, 0.25, 0.25, 1e-9}, want, 1e-9);
    EXPECT_NE(far.find("bin 3"), std::string::npos) << far;
    const std::string off = qmarg::compare_marginals({0.5, 0.26, 0.24, 0.0}, want, 1e-9);
    EXPECT_NE(off.find("bin 1: got 0.26"), std::string::npos) << off;
    const std::string size = qmarg::compare_marginals({1.0}, want, 1e-9);
    EXPECT_EQ(size, "1 bins, expected 4");
}

}  // namespace
