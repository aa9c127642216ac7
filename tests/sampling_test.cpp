// Sampling outcomes from a distribution: reproducible by seed, faithful to the
// probabilities, never an outcome of probability 0, and clear errors.
#include <cmath>
#include <limits>
#include <numeric>

#include "qmarg/sampling.hpp"
#include "test_support.hpp"

namespace {

TEST(Sampling, SameSeedSameOutcomes) {
    const std::vector<double> p = {0.1, 0.2, 0.3, 0.4};
    const auto a = qmarg::sample_outcomes(p, 1000, 42);
    const auto b = qmarg::sample_outcomes(p, 1000, 42);
    const auto c = qmarg::sample_outcomes(p, 1000, 43);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_EQ(qmarg::sample_counts(p, 1000, 42), qmarg::count_outcomes(a));
}

TEST(Sampling, FrequenciesFollowTheProbabilities) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    SCOPED_TRACE(qmarg_test::seed_trace(seed));
    // Unnormalised weights are fine; zeros are never drawn.
    const std::vector<double> weights = {0.0, 3.0, 1.0, 0.0, 4.0, 2.0, 0.0};
    const double total = 10.0;
    const std::uint64_t shots = 200000;
    const auto counts = qmarg::sample_counts(weights, shots, seed);
    std::uint64_t sum = 0;
    for (const auto& [outcome, count] : counts) {
        ASSERT_LT(outcome, weights.size());
        EXPECT_GT(weights[outcome], 0.0) << "outcome " << outcome << " has probability 0";
        const double p = weights[outcome] / total;
        const double sigma = std::sqrt(shots * p * (1 - p));
        EXPECT_NEAR(static_cast<double>(count), shots * p, 6 * sigma) << "outcome " << outcome;
        sum += count;
    }
    EXPECT_EQ(sum, shots);
    EXPECT_EQ(counts.size(), 4u);
}

TEST(Sampling, ASingleCertainOutcome) {
    const auto samples = qmarg::sample_outcomes({0.0, 0.0, 1.0}, 100, qmarg_test::fresh_seed());
    for (auto s : samples) EXPECT_EQ(s, 2u);
    EXPECT_TRUE(qmarg::sample_outcomes({1.0}, 0, 1).empty());
}

TEST(Sampling, BadDistributionsAreErrors) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_THROW(qmarg::sample_outcomes({}, 10, 1), qmarg::Error);
    EXPECT_THROW(qmarg::sample_outcomes({0.0, 0.0}, 10, 1), qmarg::Error);
    EXPECT_THROW(qmarg::sample_outcomes({0.5, nan}, 10, 1), qmarg::Error);
    EXPECT_THROW(qmarg::sample_outcomes({0.5, inf}, 10, 1), qmarg::Error);
    EXPECT_THROW(qmarg::sample_counts({0.5, -0.1}, 10, 1), qmarg::Error);
    try {
        qmarg::sample_outcomes({0.5, -0.25}, 10, 1);
    } catch (const qmarg::Error& e) {
        EXPECT_STREQ(e.what(),
                     "cannot sample: probability 1 is -0.25 (probabilities must be finite and non-negative)");
    }
}

}  // namespace
