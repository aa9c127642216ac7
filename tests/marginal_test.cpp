// marginal_probabilities on every backend against a naive reference written
// differently from the library: each bin is the expectation of a projector,
// summed over all amplitudes in long double with the bit tests spelled out
// (no shared helper, so a wrong bin mapping cannot cancel out). Subsets are
// exhaustive (all orders) for small n and random (in random order) above.
#include <omp.h>

#include <cmath>
#include <sstream>

#include "test_support.hpp"

namespace {

using qmarg::Device;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg_test::fresh_seed;
using qmarg_test::seed_trace;

template <class B>
class MarginalVsProjectors : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(MarginalVsProjectors, qmarg_test::AllBackends, qmarg_test::BackendName);

// Probabilities are accumulated in double also for float states, and the
// reference sees the same float amplitudes, so 1e-12 holds for both precisions.
constexpr double kRelativeTolerance = 1e-12;

std::string describe(int n, const Qubits& qubits) {
    std::ostringstream text;
    text << "n=" << n << " qubits={";
    for (std::size_t j = 0; j < qubits.size(); ++j) text << (j ? "," : "") << qubits[j];
    text << "}";
    return text.str();
}

// <P_b> for every bin b, P_b = product over j of the projector of qubit
// qubits[j] onto bit j of b.
template <class Real>
std::vector<double> projector_expectations(const std::vector<std::complex<Real>>& amps, const Qubits& qubits) {
    const std::size_t k = qubits.size();
    std::vector<long double> weight(amps.size());
    for (std::size_t i = 0; i < amps.size(); ++i) {
        const long double re = amps[i].real(), im = amps[i].imag();
        weight[i] = re * re + im * im;
    }
    std::vector<double> expectation(std::size_t{1} << k);
    for (std::size_t b = 0; b < expectation.size(); ++b) {
        long double sum = 0;
        for (std::size_t i = 0; i < amps.size(); ++i) {
            bool projected = true;
            for (std::size_t j = 0; j < k && projected; ++j) {
                projected = ((i >> qubits[j]) & 1u) == ((b >> j) & 1u);
            }
            if (projected) sum += weight[i];
        }
        expectation[b] = static_cast<double>(sum);
    }
    return expectation;
}

void expect_bins_near(const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t b = 0; b < want.size(); ++b) {
        EXPECT_NEAR(got[b], want[b], kRelativeTolerance * want[b] + 1e-300) << "bin " << b;
    }
}

// Checks the marginals of `state` over each subset against the reference.
template <class Real>
void check_subsets(const StateVector<Real>& state, const std::vector<Qubits>& subsets) {
    const auto amps = state.amplitudes();
    for (const Qubits& qubits : subsets) {
        SCOPED_TRACE(describe(state.num_qubits(), qubits));
        expect_bins_near(qmarg::marginal_probabilities(state, qubits), projector_expectations(amps, qubits));
        if (::testing::Test::HasFailure()) return;  // one failing case is enough to read
    }
}

template <class Real>
StateVector<Real> random_state(int n, Device device, std::uint64_t seed) {
    StateVector<Real> state(n, device);
    state.set_random_state(seed);
    return state;
}

TYPED_TEST(MarginalVsProjectors, AllOrderedSubsetsForSmallStates) {
    using Real = typename TypeParam::Real;
    for (int n = 1; n <= 5; ++n) {
        const std::uint64_t seed = fresh_seed();
        SCOPED_TRACE(seed_trace(seed));
        check_subsets(random_state<Real>(n, TypeParam::device, seed), qmarg_test::all_ordered_subsets(n, n));
    }
}

TYPED_TEST(MarginalVsProjectors, RandomSubsetsInRandomOrder) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n = 6; n <= 16; ++n) {
        // The reference costs 2^(n+k): keep it within 2^22 per subset.
        const int max_k = std::min(n, 22 - n);
        std::vector<Qubits> subsets;
        for (int trial = 0; trial < 4; ++trial) {
            const int k = std::uniform_int_distribution<int>(1, max_k)(rng);
            subsets.push_back(qmarg_test::random_qubits(n, k, rng));
        }
        check_subsets(random_state<Real>(n, TypeParam::device, seed + n), subsets);
    }
}

TYPED_TEST(MarginalVsProjectors, EdgeCases) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n : {1, 2, 7, 11}) {
        Qubits all(n), descending(n);
        std::iota(all.begin(), all.end(), 0);
        std::iota(descending.rbegin(), descending.rend(), 0);
        Qubits shuffled = all;
        std::shuffle(shuffled.begin(), shuffled.end(), rng);
        Qubits all_but_one = shuffled;
        if (n > 1) all_but_one.pop_back();
        std::vector<Qubits> subsets = {{0}, {n - 1}, all, descending, shuffled, all_but_one};
        if (n > 1) subsets.push_back({n - 1, 0});
        check_subsets(random_state<Real>(n, TypeParam::device, seed + n), subsets);
    }
}

// Exact answers on basis states pin down the conventions themselves: qubit q is
// bit q of the index, and bit j of the bin is qubits[j].
TYPED_TEST(MarginalVsProjectors, BasisStatesFollowTheConventions) {
    using Real = typename TypeParam::Real;
    StateVector<Real> state(4, TypeParam::device);
    state.set_basis_state(0b0011);  // qubits 0 and 1 set
    EXPECT_EQ(qmarg::marginal_probabilities(state, {1}), (std::vector<double>{0, 1}));
    EXPECT_EQ(qmarg::marginal_probabilities(state, {2}), (std::vector<double>{1, 0}));
    state.set_basis_state(0b0001);  // qubit 0 set
    // Bin bit 0 is qubit 2 (0), bin bit 1 is qubit 0 (1): bin 2.
    EXPECT_EQ(qmarg::marginal_probabilities(state, {2, 0}), (std::vector<double>{0, 0, 1, 0}));
    EXPECT_EQ(qmarg::marginal_probabilities(state, {0, 2}), (std::vector<double>{0, 1, 0, 0}));
    state.set_basis_state(0b1010);
    std::vector<double> expected(16, 0.0);
    expected[0b0101] = 1;  // qubits {3,2,1,0}: bin bit j is qubit 3-j
    EXPECT_EQ(qmarg::marginal_probabilities(state, {3, 2, 1, 0}), expected);
    state.set_uniform_superposition();
    for (double p : qmarg::marginal_probabilities(state, {3, 1, 2})) EXPECT_NEAR(p, 1.0 / 8, 1e-7);
}

// The CPU backend switches between per-thread bins and one owner per bin by
// threads x 2^k; running under several thread counts covers both schemes
// (and uneven splits), and a repeated call must give the same bits.
template <class Real>
class CpuMarginalThreads : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuMarginalThreads, Reals);

TYPED_TEST(CpuMarginalThreads, AnyThreadCountMatchesAndRepeatsExactly) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    const int n = 10;
    const auto state = random_state<TypeParam>(n, Device::Cpu, seed);
    const auto amps = state.amplitudes();
    const int saved_threads = omp_get_max_threads();
    for (int threads : {1, 3, 8}) {
        omp_set_num_threads(threads);
        SCOPED_TRACE("threads=" + std::to_string(threads));
        for (int k = 1; k <= n; ++k) {
            const Qubits qubits = qmarg_test::random_qubits(n, k, rng);
            SCOPED_TRACE(describe(n, qubits));
            const auto first = qmarg::marginal_probabilities(state, qubits);
            expect_bins_near(first, projector_expectations(amps, qubits));
            EXPECT_EQ(qmarg::marginal_probabilities(state, qubits), first);
            qmarg::MarginalOptions deterministic;
            deterministic.deterministic = true;  // always met on the CPU: the same bits
            EXPECT_EQ(qmarg::marginal_probabilities(state, qubits, deterministic), first);
        }
    }
    omp_set_num_threads(saved_threads);
}

}  // namespace
