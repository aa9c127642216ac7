// The marginal queries of qmarg/marginal_queries.hpp on every backend:
// many marginals in one pass against one call per list (and, for a GPU state,
// against the CPU reference on a copy), conditional marginals and outcome
// probabilities against a naive sum written here (bit tests spelled out, long
// double), their identities (conditional marginals summed over all condition
// values give the plain marginal; outcome probabilities sum to the total),
// bitwise repeatability, sampling, and every error message. States are fresh
// random ones; failures name the seed, n and the lists.
#include <cmath>
#include <cstring>
#include <functional>
#include <iomanip>
#include <sstream>

#include "test_support.hpp"

namespace {

using qmarg::Condition;
using qmarg::Device;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg_test::describe;
using qmarg_test::fresh_seed;
using qmarg_test::seed_trace;

template <class B>
class MarginalQueries : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(MarginalQueries, qmarg_test::AllBackends, qmarg_test::BackendName);

template <class Real>
StateVector<Real> random_state(int n, Device device, std::uint64_t seed) {
    StateVector<Real> state(n, device);
    state.set_random_state(seed);
    return state;
}

std::string describe_lists(int n, const std::vector<Qubits>& lists) {
    std::string text = "n=" + std::to_string(n) + " lists:";
    for (const Qubits& list : lists) text += " " + describe(list);
    return text;
}

// Relative error 1e-12 per bin; bins far below the mean (1e-3 / bins) are held
// to that error relative to the floor instead of their own tiny value.
void expect_bins_near(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    const double floor = 1e-3 / static_cast<double>(want.size());
    for (std::size_t b = 0; b < want.size(); ++b) {
        const double allowed = 1e-12 * std::max(std::abs(want[b]), floor);
        if (!(std::abs(got[b] - want[b]) <= allowed)) {
            ADD_FAILURE() << std::setprecision(17) << what << ": bin " << b << " got " << got[b] << ", expected "
                          << want[b];
            return;
        }
    }
}

// The reference: sum over every amplitude whose condition qubits hold their
// values, binned by the listed qubits.
template <class Real>
std::vector<double> naive_conditional(const std::vector<std::complex<Real>>& amps, const Qubits& qubits,
                                      const Condition& condition) {
    std::vector<long double> sum(std::size_t{1} << qubits.size(), 0.0L);
    for (std::size_t i = 0; i < amps.size(); ++i) {
        bool holds = true;
        for (std::size_t j = 0; j < condition.qubits.size() && holds; ++j) {
            holds = static_cast<int>((i >> condition.qubits[j]) & 1u) == condition.values[j];
        }
        if (!holds) continue;
        std::size_t bin = 0;
        for (std::size_t j = 0; j < qubits.size(); ++j) bin |= ((i >> qubits[j]) & 1u) << j;
        const long double re = amps[i].real(), im = amps[i].imag();
        sum[bin] += re * re + im * im;
    }
    return std::vector<double>(sum.begin(), sum.end());
}

// Random lists for an n-qubit state: every edge the plan distinguishes
// (qubit 0, qubit n-1, k = 1, k = n, overlaps, random orders).
std::vector<Qubits> random_lists(int n, std::mt19937_64& rng) {
    std::vector<Qubits> lists = {{0}, {n - 1}};
    const int extra = std::uniform_int_distribution<int>(1, 5)(rng);
    for (int i = 0; i < extra; ++i) {
        const int k = std::uniform_int_distribution<int>(1, std::min(n, 6))(rng);
        lists.push_back(qmarg_test::random_qubits(n, k, rng));
    }
    lists.push_back(qmarg_test::random_qubits(n, n, rng));
    if (n > 1) lists.push_back({n - 1, 0});
    std::shuffle(lists.begin(), lists.end(), rng);
    return lists;
}

// Every list of `lists` on `state`: against one marginal_probabilities call per
// list on the same state, and (for a GPU state) on a CPU copy.
template <class Real>
void check_lists(const StateVector<Real>& state, const std::vector<Qubits>& lists) {
    const std::string what = describe_lists(state.num_qubits(), lists);
    const auto got = qmarg::marginal_probabilities_of_lists(state, lists);
    ASSERT_EQ(got.size(), lists.size()) << what;
    const StateVector<Real> cpu = state.to(Device::Cpu);
    for (std::size_t j = 0; j < lists.size(); ++j) {
        const std::string list_what = what + ", list " + std::to_string(j) + " " + describe(lists[j]);
        expect_bins_near(got[j], qmarg::marginal_probabilities(state, lists[j]), list_what + " vs one call");
        if (state.device() == Device::Gpu) {
            expect_bins_near(got[j], qmarg::marginal_probabilities(cpu, lists[j]), list_what + " vs CPU");
        }
    }
}

TYPED_TEST(MarginalQueries, ManyListsMatchOneCallPerList) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    // n < 17 folds every union; 17..20 take the qubit-mass pass and groups.
    for (int n : {1, 2, 3, 5, 9, 13, 16, 17, 18, 20}) {
        const auto state = random_state<Real>(n, TypeParam::device, rng());
        for (int trial = 0; trial < 3; ++trial) check_lists(state, random_lists(n, rng));
        if (::testing::Test::HasFailure()) return;
    }
}

// All n single-qubit marginals (the one-pass kernel above 16 qubits), alone
// and mixed with lists whose unions fold or do not.
TYPED_TEST(MarginalQueries, AllSingleQubitMarginals) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n : {4, 16, 17, 19, 21}) {
        const auto state = random_state<Real>(n, TypeParam::device, rng());
        std::vector<Qubits> singles;
        for (int q = 0; q < n; ++q) singles.push_back({q});
        std::shuffle(singles.begin(), singles.end(), rng);
        check_lists(state, singles);
        std::vector<Qubits> mixed = singles;
        mixed.push_back({2, 0, 1});
        mixed.push_back(qmarg_test::random_qubits(n, std::min(n, 3), rng));
        mixed.push_back(qmarg_test::random_qubits(n, n - 1 > 0 ? n - 1 : 1, rng));
        mixed.push_back({0, n - 1});
        std::shuffle(mixed.begin(), mixed.end(), rng);
        check_lists(state, mixed);
        if (::testing::Test::HasFailure()) return;
    }
}

TYPED_TEST(MarginalQueries, ResultsRepeatBitwise) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n : {3, 12, 18}) {
        const auto state = random_state<Real>(n, TypeParam::device, rng());
        std::vector<Qubits> lists = random_lists(n, rng);
        for (int q = 0; q < n; ++q) lists.push_back({q});
        // Qubits below n - 1, so that the condition on qubit n - 1 stays apart.
        const Qubits qubits = qmarg_test::random_qubits(n - 1, std::min(n - 1, 3), rng);
        const Condition condition{{n - 1}, {1}};
        const Qubits& marginal_qubits = qubits;
        const auto lists_first = qmarg::marginal_probabilities_of_lists(state, lists);
        const auto conditional_first = qmarg::conditional_marginal_probabilities(state, marginal_qubits, condition);
        const double outcome_first = qmarg::outcome_probability(state, qubits, 1);
        for (int repeat = 0; repeat < 3; ++repeat) {
            SCOPED_TRACE(describe_lists(n, lists) + " repeat " + std::to_string(repeat));
            const auto lists_again = qmarg::marginal_probabilities_of_lists(state, lists);
            for (std::size_t j = 0; j < lists.size(); ++j) {
                ASSERT_EQ(0, std::memcmp(lists_first[j].data(), lists_again[j].data(),
                                         lists_first[j].size() * sizeof(double)))
                    << "list " << j;
            }
            const auto conditional_again = qmarg::conditional_marginal_probabilities(state, marginal_qubits, condition);
            ASSERT_EQ(0, std::memcmp(conditional_first.data(), conditional_again.data(),
                                     conditional_first.size() * sizeof(double)))
                << "conditional marginal of " << describe(marginal_qubits);
            const double outcome_again = qmarg::outcome_probability(state, qubits, 1);
            ASSERT_EQ(0, std::memcmp(&outcome_first, &outcome_again, sizeof(double)))
                << "outcome probability of " << describe(qubits);
        }
    }
}

TYPED_TEST(MarginalQueries, ListErrorsNameTheList) {
    using Real = typename TypeParam::Real;
    const StateVector<Real> state(5, TypeParam::device);
    const auto message = [&](const std::vector<Qubits>& lists) {
        try {
            qmarg::marginal_probabilities_of_lists(state, lists);
        } catch (const qmarg::Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message({{0}, {1}, {}}), "marginal qubit list 2 is empty: at least 1 qubit is needed");
    EXPECT_EQ(message({{0}, {5}}),
              "marginal qubit list 1: qubit 5 is out of range for a 5-qubit state (valid qubits are 0..4)");
    EXPECT_EQ(message({{3, 1, 3}}), "marginal qubit list 0: qubit 3 appears more than once (at positions 0 and 2)");
    EXPECT_EQ(message({{0}, {0, 1, 2, 3, 4, 0}}),
              "marginal qubit list 1 has 6 qubits but a 5-qubit state has only 5");
    EXPECT_EQ(message({{-1}}),
              "marginal qubit list 0: qubit -1 is out of range for a 5-qubit state (valid qubits are 0..4)");
    EXPECT_TRUE(qmarg::marginal_probabilities_of_lists(state, {}).empty());
}

// Conditions on low, high and random qubits, against the naive sum, and
// summed over every assignment of the condition: the plain marginal.
TYPED_TEST(MarginalQueries, ConditionalMarginals) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n : {2, 3, 6, 10, 14, 17}) {
        const auto state = random_state<Real>(n, TypeParam::device, rng());
        const auto amps = state.amplitudes();
        for (int trial = 0; trial < 6; ++trial) {
            const int m = std::uniform_int_distribution<int>(trial == 0 ? 0 : 1, std::min(n - 1, 4))(rng);
            Qubits order = qmarg_test::random_qubits(n, n, rng);
            if (trial == 1) std::sort(order.begin(), order.end());                    // condition on low qubits
            if (trial == 2) std::sort(order.begin(), order.end(), std::greater<>());  // on high qubits
            Condition condition;
            condition.qubits.assign(order.begin(), order.begin() + m);
            for (int j = 0; j < m; ++j) condition.values.push_back(static_cast<int>(rng() & 1));
            const int k = std::uniform_int_distribution<int>(1, n - m)(rng);
            Qubits qubits(order.begin() + m, order.begin() + m + k);
            std::shuffle(qubits.begin(), qubits.end(), rng);
            std::ostringstream what;
            what << "n=" << n << " " << describe(qubits) << " condition " << describe(condition.qubits) << " = {";
            for (int v : condition.values) what << v;
            what << "}";
            expect_bins_near(qmarg::conditional_marginal_probabilities(state, qubits, condition),
                             naive_conditional(amps, qubits, condition), what.str());

            std::vector<double> summed(std::size_t{1} << k, 0.0);
            for (std::uint64_t values = 0; values < (std::uint64_t{1} << m); ++values) {
                Condition each{condition.qubits, {}};
                for (int j = 0; j < m; ++j) each.values.push_back(static_cast<int>((values >> j) & 1u));
                const auto part = qmarg::conditional_marginal_probabilities(state, qubits, each);
                for (std::size_t b = 0; b < summed.size(); ++b) summed[b] += part[b];
            }
            expect_bins_near(summed, qmarg::marginal_probabilities(state, qubits), what.str() + " summed over values");
            if (::testing::Test::HasFailure()) return;
        }
    }
}

// The largest and smallest shapes: every qubit either listed or conditioned
// (one amplitude per bin), a single free qubit, and an empty condition.
TYPED_TEST(MarginalQueries, ConditionalEdgeCases) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n : {2, 9, 20}) {
        const auto state = random_state<Real>(n, TypeParam::device, rng());
        const auto amps = state.amplitudes();
        const Qubits order = qmarg_test::random_qubits(n, n, rng);
        const std::vector<std::pair<Qubits, Condition>> cases = {
            {Qubits(order.begin() + 1, order.end()), Condition{{order[0]}, {1}}},
            {Qubits{order[0]}, Condition{Qubits(order.begin() + 1, order.end()), std::vector<int>(n - 1, 1)}},
            {Qubits{0}, Condition{{n - 1}, {0}}},
            {Qubits{n - 1}, Condition{{0}, {1}}},
            {Qubits{n - 1, 0}, Condition{}},
        };
        for (const auto& c : cases) {
            const std::string what = "n=" + std::to_string(n) + " " + describe(c.first) + " condition " +
                                     describe(c.second.qubits);
            expect_bins_near(qmarg::conditional_marginal_probabilities(state, c.first, c.second),
                             naive_conditional(amps, c.first, c.second), what);
        }
        // n = 20, a 16-qubit condition on the highest qubits: few long bins.
        if (n == 20) {
            Condition high;
            for (int q = 19; q >= 4; --q) {
                high.qubits.push_back(q);
                high.values.push_back(q % 2);
            }
            expect_bins_near(qmarg::conditional_marginal_probabilities(state, {1, 3}, high),
                             naive_conditional(amps, {1, 3}, high), "n=20 qubits {1, 3} condition 19..4");
        }
    }
}

// On a GPU state a conditional marginal is BinStationary over the compact
// state of the matching amplitudes (cuda/marginal_conditional.cu). Each
// shape of condition it plans differently, in random orders: conditions among
// the lane bits 1..5, on qubit 0 (a listed qubit whose half of the bins is
// dropped), above the lane bits, leaving a compact state too small for the
// streaming kernel, and k close to the compact n (the transposed path). Every
// result against the naive sum, and again bitwise.
TYPED_TEST(MarginalQueries, ConditionalMarginalsOfEveryShape) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    const auto uniform = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
    for (int n : {12, 15, 18, 20}) {
        const auto state = random_state<Real>(n, TypeParam::device, rng());
        const auto amps = state.amplitudes();
        for (int shape = 0; shape < 6; ++shape) {
            Qubits pool = qmarg_test::random_qubits(n, n, rng);
            int m = uniform(1, 3);
            if (shape == 0) pool = qmarg_test::random_qubits(5, 5, rng);      // lane bits 1..5 (+1 below)
            if (shape == 1) std::iter_swap(pool.begin(), std::find(pool.begin(), pool.end(), 0));  // qubit 0 first
            if (shape == 2) pool = qmarg_test::random_qubits(n - 6, n - 6, rng);  // 6..n-1 (+6 below)
            if (shape == 3) m = n - 10;                                       // a compact state of 10 qubits
            for (int& q : pool) q += shape == 0 ? 1 : shape == 2 ? 6 : 0;
            Condition condition;
            condition.qubits.assign(pool.begin(), pool.begin() + m);
            for (int j = 0; j < m; ++j) condition.values.push_back(uniform(0, 1));
            Qubits rest;
            for (int q = 0; q < n; ++q)
                if (std::find(condition.qubits.begin(), condition.qubits.end(), q) == condition.qubits.end())
                    rest.push_back(q);
            std::shuffle(rest.begin(), rest.end(), rng);
            const int free = static_cast<int>(rest.size());
            const int k = shape >= 4 ? free - uniform(0, 4) : uniform(1, std::min(free, 8));
            const Qubits qubits(rest.begin(), rest.begin() + k);
            std::ostringstream what;
            what << "n=" << n << " " << describe(qubits) << " condition " << describe(condition.qubits) << " = {";
            for (int v : condition.values) what << v;
            what << "}";
            const auto got = qmarg::conditional_marginal_probabilities(state, qubits, condition);
            expect_bins_near(got, naive_conditional(amps, qubits, condition), what.str());
            const auto again = qmarg::conditional_marginal_probabilities(state, qubits, condition);
            ASSERT_EQ(again.size(), got.size());
            EXPECT_EQ(std::memcmp(again.data(), got.data(), got.size() * sizeof(double)), 0)
                << what.str() << ": a second call gave other bits";
            if (::testing::Test::HasFailure()) return;
        }
    }
}

TYPED_TEST(MarginalQueries, ConditionErrorsNameTheValue) {
    using Real = typename TypeParam::Real;
    const StateVector<Real> state(4, TypeParam::device);
    const auto message = [&](const Qubits& qubits, const Condition& condition) {
        try {
            qmarg::conditional_marginal_probabilities(state, qubits, condition);
        } catch (const qmarg::Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message({0}, {{1, 0}, {1, 1}}), "qubit 0 is both a marginal qubit and a condition qubit");
    EXPECT_EQ(message({0}, {{4}, {1}}),
              "condition qubit list: qubit 4 is out of range for a 4-qubit state (valid qubits are 0..3)");
    EXPECT_EQ(message({0}, {{2, 3, 2}, {1, 1, 1}}),
              "condition qubit list: qubit 2 appears more than once (at positions 0 and 2)");
    EXPECT_EQ(message({0}, {{2, 3}, {1, 2}}), "condition value 2 for condition qubit 3 must be 0 or 1");
    EXPECT_EQ(message({0}, {{2, 3}, {1}}),
              "the condition has 1 value for 2 qubits: give one value per condition qubit");
    EXPECT_EQ(message({0}, {{2}, {}}), "the condition has 0 values for 1 qubit: give one value per condition qubit");
    EXPECT_EQ(message({}, {{2}, {1}}), "marginal qubit list is empty: at least 1 qubit is needed");
    EXPECT_EQ(message({9}, {{2}, {1}}),
              "marginal qubit list: qubit 9 is out of range for a 4-qubit state (valid qubits are 0..3)");
}

// Each outcome's probability is its marginal bin; all of them sum to the total.
TYPED_TEST(MarginalQueries, OutcomeProbabilities) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n : {1, 2, 5, 11, 16}) {
        const auto state = random_state<Real>(n, TypeParam::device, rng());
        const auto amps = state.amplitudes();
        for (int k : {1, std::min(n, 2), std::uniform_int_distribution<int>(1, n)(rng), n}) {
            const Qubits qubits = qmarg_test::random_qubits(n, k, rng);
            const std::string what = "n=" + std::to_string(n) + " " + describe(qubits);
            const std::vector<double> want = naive_conditional(amps, qubits, Condition{});
            std::vector<double> got(want.size());
            long double total = 0;
            for (std::uint64_t outcome = 0; outcome < want.size(); ++outcome) {
                got[outcome] = qmarg::outcome_probability(state, qubits, outcome);
                total += got[outcome];
            }
            expect_bins_near(got, want, what);
            // The state's own norm (a float state is normalised only to float precision).
            EXPECT_NEAR(static_cast<double>(total), qmarg::total_probability(state), 1e-12) << what;
            EXPECT_NEAR(static_cast<double>(total), 1.0, qmarg_test::tolerance<Real>()) << what;
        }
    }
}

TYPED_TEST(MarginalQueries, OutcomeErrors) {
    using Real = typename TypeParam::Real;
    const StateVector<Real> state(4, TypeParam::device);
    const auto message = [&](const Qubits& qubits, std::uint64_t outcome) {
        try {
            qmarg::outcome_probability(state, qubits, outcome);
        } catch (const qmarg::Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message({2, 0}, 4), "outcome 4 does not fit in 2 qubits: it must be below 2^2 = 4");
    EXPECT_EQ(message({3}, 2), "outcome 2 does not fit in 1 qubit: it must be below 2^1 = 2");
    EXPECT_EQ(message({4}, 0),
              "outcome qubit list: qubit 4 is out of range for a 4-qubit state (valid qubits are 0..3)");
    EXPECT_EQ(message({}, 0), "outcome qubit list is empty: at least 1 qubit is needed");
    EXPECT_EQ(message({1, 1}, 0), "outcome qubit list: qubit 1 appears more than once (at positions 0 and 1)");
    EXPECT_EQ(qmarg::outcome_probability(state, {3, 2, 1, 0}, 0), 1.0);  // |0000>
}

TYPED_TEST(MarginalQueries, SampleMarginal) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    const auto state = random_state<Real>(6, TypeParam::device, seed);
    const Qubits qubits = {4, 1};
    const auto samples = qmarg::sample_marginal(state, qubits, 1000, seed);
    EXPECT_EQ(samples, qmarg::sample_marginal(state, qubits, 1000, seed));
    EXPECT_EQ(samples, qmarg::sample_outcomes(qmarg::marginal_probabilities(state, qubits), 1000, seed));
    for (std::uint64_t s : samples) ASSERT_LT(s, 4u);

    StateVector<Real> basis(5, TypeParam::device);
    basis.set_basis_state(0b10010);  // qubits 1 and 4 set: outcome 0b01 of {1, 2}, 0b11 of {4, 1}
    for (std::uint64_t s : qmarg::sample_marginal(basis, {1, 2}, 50, seed)) EXPECT_EQ(s, 0b01u);
    for (std::uint64_t s : qmarg::sample_marginal(basis, {4, 1}, 50, seed)) EXPECT_EQ(s, 0b11u);

    StateVector<Real> zero(3, TypeParam::device);
    zero.set_amplitudes(std::vector<std::complex<Real>>(8));
    EXPECT_THROW(qmarg::sample_marginal(zero, {0}, 10, seed), qmarg::Error);
    EXPECT_THROW(qmarg::sample_marginal(basis, {5}, 10, seed), qmarg::Error);
}

}  // namespace
