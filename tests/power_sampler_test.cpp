// bench/power_sampler.hpp: the summary of its polls, and a clear refusal
// where it cannot read a GPU (no NVML, as on a machine without a driver, or
// no GPU at the bus id it is given). Its readings of a real GPU are checked
// where apply_matrix_bench records them.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "../bench/power_sampler.hpp"

namespace {

using qmarg::bench::PowerSample;
using qmarg::bench::PowerSampler;
using qmarg::bench::run_for_at_least;
using qmarg::bench::summarize_power;

PowerSample sample(double mhz, double watts, int capped, double celsius = -1) {
    PowerSample s;
    s.sm_mhz = mhz;
    s.power_w = watts;
    s.capped = capped;
    s.temperature_c = celsius;
    return s;
}

TEST(PowerSampler, SummaryTakesMediansAndTheCappedShare) {
    const std::vector<PowerSample> samples = {sample(1980, 520, 0, 41), sample(1740, 699, 1, 55),
                                              sample(1755, 700, 1, 57), sample(1815, 698, 1, 56),
                                              sample(1590, 701, 1, 60)};
    const auto summary = summarize_power(samples, 700);
    EXPECT_EQ(summary.samples, 5);
    EXPECT_DOUBLE_EQ(summary.sm_mhz, 1755);
    EXPECT_DOUBLE_EQ(summary.power_w, 699);
    EXPECT_DOUBLE_EQ(summary.power_capped, 0.8);
    EXPECT_DOUBLE_EQ(summary.power_limit_w, 700);
    EXPECT_DOUBLE_EQ(summary.temperature_c, 56);
}

// A quantity a poll did not get stays out of its median and its share; one
// that no poll got reads 0.
TEST(PowerSampler, SummaryLeavesOutWhatWasNotReported) {
    const std::vector<PowerSample> samples = {sample(1900, -1, -1, 50), sample(1700, -1, 1), sample(-1, -1, 0, 52),
                                              sample(1800, -1, -1)};
    const auto summary = summarize_power(samples, 0);
    EXPECT_EQ(summary.samples, 4);
    EXPECT_DOUBLE_EQ(summary.sm_mhz, 1800);
    EXPECT_DOUBLE_EQ(summary.power_w, 0);
    EXPECT_DOUBLE_EQ(summary.temperature_c, 51);
    EXPECT_DOUBLE_EQ(summary.power_capped, 0.5);
    const auto none = summarize_power({}, 700);
    EXPECT_EQ(none.samples, 0);
    EXPECT_DOUBLE_EQ(none.sm_mhz, 0);
    EXPECT_DOUBLE_EQ(none.power_capped, 0);
    EXPECT_DOUBLE_EQ(none.temperature_c, 0);
}

// The count comes first: short work runs min_runs times when min_ms has
// already passed, and no time asks for no run.
TEST(PowerSampler, RunForAtLeastRunsTheCountAsked) {
    int calls = 0;
    EXPECT_EQ(run_for_at_least([&] { ++calls; }, 5, 0), 5);
    EXPECT_EQ(calls, 5);
    EXPECT_EQ(run_for_at_least([&] { ++calls; }, 0, 0), 0);
    EXPECT_EQ(calls, 5);
}

// Beyond the count it runs until the time has passed, and no longer: work
// of at least 2 ms asked for 30 ms takes at least the 30 ms and stops after
// 15 runs at most (fewer where a sleep oversleeps).
TEST(PowerSampler, RunForAtLeastRunsUntilTheTimeHasPassed) {
    using Clock = std::chrono::steady_clock;
    int calls = 0;
    const auto begin = Clock::now();
    const int runs = run_for_at_least(
        [&] {
            ++calls;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        },
        1, 30);
    const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
    EXPECT_EQ(runs, calls);
    EXPECT_GE(elapsed, 30);
    EXPECT_LE(runs, 15);
}

// Domain 0xffff does not exist on any machine: without NVML the reason names
// the library, with it the bus id. Either way nothing is sampled.
TEST(PowerSampler, SaysWhyItCannotReadAGpu) {
    const std::string bus_id = "FFFF:FF:1F.7";
    PowerSampler sampler(bus_id);
    ASSERT_FALSE(sampler.available());
    const std::string& reason = sampler.unavailable_reason();
    EXPECT_TRUE(reason.find("libnvidia-ml.so.1") != std::string::npos || reason.find(bus_id) != std::string::npos)
        << reason;
    sampler.start(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(sampler.stop().samples, 0);
}

}  // namespace
