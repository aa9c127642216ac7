// expectation_z on every backend (CPU and GPU, float and double): known states
// with known answers, random states against an independent long-double
// reference written from the definition (bit by bit, no mask or parity
// helper), invariance under the order of the qubit list, and the messages for
// bad qubit lists.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using qmarg::Device;
using qmarg::Index;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg_test::fresh_seed;
using qmarg_test::seed_trace;

template <class B>
class ExpectationZTest : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(ExpectationZTest, qmarg_test::AllBackends, qmarg_test::BackendName);

using qmarg_test::describe;

template <class Real>
long double reference(const std::vector<std::complex<Real>>& amps, const Qubits& qubits) {
    long double sum = 0;
    for (std::size_t i = 0; i < amps.size(); ++i) {
        int ones = 0;
        for (int q : qubits) ones += static_cast<int>((i >> q) & 1u);
        const long double re = amps[i].real(), im = amps[i].imag();
        sum += (ones % 2 ? -1 : 1) * (re * re + im * im);
    }
    return sum;
}

TYPED_TEST(ExpectationZTest, BasisStatesGivePlusOrMinusOne) {
    using Real = typename TypeParam::Real;
    const int n = 5;
    StateVector<Real> state(n, TypeParam::device);
    // |00000>: every Z product is +1.
    for (const Qubits& qubits : qmarg_test::all_ordered_subsets(n, 2)) {
        SCOPED_TRACE(describe(qubits));
        EXPECT_EQ(qmarg::expectation_z(state, qubits), 1.0);
    }
    // X on one qubit q (basis state 2^q): the sign flips exactly when q is selected.
    for (int q = 0; q < n; ++q) {
        state.set_basis_state(Index{1} << q);
        SCOPED_TRACE("X on qubit " + std::to_string(q));
        EXPECT_EQ(qmarg::expectation_z(state, {q}), -1.0);
        EXPECT_EQ(qmarg::expectation_z(state, {(q + 1) % n}), 1.0);
        EXPECT_EQ(qmarg::expectation_z(state, {(q + 2) % n, q}), -1.0);
        EXPECT_EQ(qmarg::expectation_z(state, {0, 1, 2, 3, 4}), -1.0);
    }
    // Any basis state b: (-1)^(number of selected qubits set in b).
    state.set_basis_state(0b10110);
    EXPECT_EQ(qmarg::expectation_z(state, {1, 2}), 1.0);
    EXPECT_EQ(qmarg::expectation_z(state, {0, 1, 2}), 1.0);
    EXPECT_EQ(qmarg::expectation_z(state, {4, 2, 1}), -1.0);
    EXPECT_EQ(qmarg::expectation_z(state, {3}), 1.0);
}

TYPED_TEST(ExpectationZTest, UniformSuperpositionGivesZero) {
    using Real = typename TypeParam::Real;
    for (int n : {1, 4, 9}) {
        StateVector<Real> state(n, TypeParam::device);
        state.set_uniform_superposition();
        for (const Qubits& qubits : {Qubits{0}, Qubits{n - 1}}) {
            SCOPED_TRACE("n = " + std::to_string(n) + ", " + describe(qubits));
            EXPECT_NEAR(qmarg::expectation_z(state, qubits), 0.0, 1e-12);
        }
    }
}

TYPED_TEST(ExpectationZTest, HandComputedTwoQubitState) {
    // Probabilities 0.1, 0.2, 0.3, 0.4 for |00>, |01>, |10>, |11> (index = q1 q0).
    using Real = typename TypeParam::Real;
    StateVector<Real> state(2, TypeParam::device);
    state.set_amplitudes({{static_cast<Real>(std::sqrt(0.1)), 0},
                          {0, static_cast<Real>(std::sqrt(0.2))},
                          {static_cast<Real>(-std::sqrt(0.3)), 0},
                          {static_cast<Real>(std::sqrt(0.2)), static_cast<Real>(std::sqrt(0.2))}});
    const double tolerance = qmarg_test::tolerance<Real>();
    EXPECT_NEAR(qmarg::expectation_z(state, {0}), 0.1 - 0.2 + 0.3 - 0.4, tolerance);  // -0.2
    EXPECT_NEAR(qmarg::expectation_z(state, {1}), 0.1 + 0.2 - 0.3 - 0.4, tolerance);  // -0.4
    EXPECT_NEAR(qmarg::expectation_z(state, {0, 1}), 0.1 - 0.2 - 0.3 + 0.4, tolerance);  // 0
    EXPECT_NEAR(qmarg::expectation_z(state, {1, 0}), 0.0, tolerance);
}

TYPED_TEST(ExpectationZTest, RandomStatesMatchTheDefinition) {
    using Real = typename TypeParam::Real;
    std::mt19937_64 rng(fresh_seed());
    for (int n : {1, 2, 3, 4, 8, 13}) {
        const std::uint64_t seed = fresh_seed();
        SCOPED_TRACE("n = " + std::to_string(n) + ", " + seed_trace(seed));
        StateVector<Real> state(n, TypeParam::device);
        state.set_random_state(seed);
        const auto amps = state.amplitudes();
        // Every ordered subset for tiny n; the edges and random subsets above.
        std::vector<Qubits> lists;
        if (n <= 4) {
            lists = qmarg_test::all_ordered_subsets(n, n);
        } else {
            lists = {{0}, {n - 1}, {0, n - 1}, qmarg_test::random_qubits(n, n, rng)};
            for (int k = 1; k <= n; k += 3) lists.push_back(qmarg_test::random_qubits(n, k, rng));
        }
        for (const Qubits& qubits : lists) {
            SCOPED_TRACE(describe(qubits));
            EXPECT_NEAR(qmarg::expectation_z(state, qubits), static_cast<double>(reference(amps, qubits)), 1e-12);
        }
    }
}

TYPED_TEST(ExpectationZTest, OrderOfTheQubitListDoesNotMatter) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    StateVector<Real> state(10, TypeParam::device);
    state.set_random_state(seed);
    for (int k : {2, 5, 10}) {
        Qubits qubits = qmarg_test::random_qubits(10, k, rng);
        const double value = qmarg::expectation_z(state, qubits);
        std::shuffle(qubits.begin(), qubits.end(), rng);
        SCOPED_TRACE(describe(qubits));
        EXPECT_EQ(qmarg::expectation_z(state, qubits), value);
    }
}

TYPED_TEST(ExpectationZTest, BadQubitListsAreClearErrors) {
    using Real = typename TypeParam::Real;
    StateVector<Real> state(3, TypeParam::device);
    const auto message_for = [&](const Qubits& qubits) -> std::string {
        try {
            qmarg::expectation_z(state, qubits);
        } catch (const qmarg::Error& e) {
            return e.what();
        }
        return "no error";
    };
    EXPECT_EQ(message_for({}), "expectation_z qubit list is empty: at least 1 qubit is needed");
    EXPECT_EQ(message_for({0, 3}),
              "expectation_z qubit list: qubit 3 is out of range for a 3-qubit state (valid qubits are 0..2)");
    EXPECT_EQ(message_for({-1}),
              "expectation_z qubit list: qubit -1 is out of range for a 3-qubit state (valid qubits are 0..2)");
    EXPECT_EQ(message_for({0, 2, 0}),
              "expectation_z qubit list: qubit 0 appears more than once (at positions 0 and 2)");
    EXPECT_EQ(message_for({0, 1, 2, 1}), "expectation_z qubit list has 4 qubits but a 3-qubit state has only 3");
}

}  // namespace
