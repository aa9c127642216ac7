// The example circuits in examples/*.qasm, read with load_qasm and run on every
// backend, against their closed-form answers (the random circuit against an
// independent dense simulation).
#include <cmath>
#include <complex>
#include <string>

#include "circuit_reference.hpp"
#include "qmarg/qasm.hpp"
#include "test_support.hpp"

namespace {

using qmarg::Circuit;
using qmarg::StateVector;
using qmarg_test::tolerance;

template <class B>
class ExampleCircuits : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(ExampleCircuits, qmarg_test::AllBackends, qmarg_test::BackendName);

Circuit example(const std::string& name) { return qmarg::load_qasm(qmarg_test::source_dir() + "/examples/" + name); }

// The example run on a fresh |0...0> state of the backend's device and precision.
template <class Real>
StateVector<Real> run_example(const Circuit& circuit, qmarg::Device device) {
    StateVector<Real> state(circuit.num_qubits, device);
    qmarg::run(state, circuit);
    return state;
}

TYPED_TEST(ExampleCircuits, GhzHasTwoEqualOutcomes) {
    using Real = typename TypeParam::Real;
    const Circuit c = example("ghz.qasm");
    const auto state = run_example<Real>(c, TypeParam::device);
    const auto p = qmarg::marginal_probabilities(state, c.measured_qubits());
    ASSERT_EQ(p.size(), 32u);
    for (std::size_t i = 0; i < p.size(); ++i) {
        EXPECT_NEAR(p[i], (i == 0 || i == 31) ? 0.5 : 0.0, tolerance<Real>()) << "outcome " << i;
    }
}

TYPED_TEST(ExampleCircuits, BernsteinVaziraniRevealsTheHiddenString) {
    using Real = typename TypeParam::Real;
    const Circuit c = example("bernstein_vazirani.qasm");
    const auto state = run_example<Real>(c, TypeParam::device);
    const auto p = qmarg::marginal_probabilities(state, c.measured_qubits());
    ASSERT_EQ(p.size(), 64u);
    const std::size_t hidden = 0b101101;
    for (std::size_t i = 0; i < p.size(); ++i) {
        EXPECT_NEAR(p[i], i == hidden ? 1.0 : 0.0, tolerance<Real>()) << "outcome " << i;
    }
}

TYPED_TEST(ExampleCircuits, QftOfABasisStateHasUniformMagnitudesAndLinearPhases) {
    using Real = typename TypeParam::Real;
    const Circuit c = example("qft.qasm");
    const auto state = run_example<Real>(c, TypeParam::device);
    const auto amplitudes = state.amplitudes();
    const double pi = 3.14159265358979323846;
    ASSERT_EQ(amplitudes.size(), 16u);
    for (int y = 0; y < 16; ++y) {
        const std::complex<double> expected = std::polar(0.25, 2 * pi * 5 * y / 16);
        EXPECT_LT(std::abs(std::complex<double>(amplitudes[y]) - expected), 10 * tolerance<Real>()) << "amplitude " << y;
    }
    for (double p : qmarg::marginal_probabilities(state, c.measured_qubits())) EXPECT_NEAR(p, 1.0 / 16, tolerance<Real>());
}

TYPED_TEST(ExampleCircuits, GroverFindsTheMarkedItem) {
    using Real = typename TypeParam::Real;
    const Circuit c = example("grover.qasm");
    const auto state = run_example<Real>(c, TypeParam::device);
    const auto p = qmarg::marginal_probabilities(state, c.measured_qubits());
    ASSERT_EQ(p.size(), 8u);
    // sin^2(5 theta) with sin(theta) = 1/sqrt(8): 121/128.
    for (std::size_t i = 0; i < p.size(); ++i) {
        EXPECT_NEAR(p[i], i == 5 ? 121.0 / 128 : 1.0 / 128, tolerance<Real>()) << "outcome " << i;
    }
}

TYPED_TEST(ExampleCircuits, RandomCircuitAgreesWithADenseSimulation) {
    using Real = typename TypeParam::Real;
    const Circuit c = example("random_circuit.qasm");
    ASSERT_EQ(c.operations.size(), 80u);
    ASSERT_EQ(c.measured_qubits(), (qmarg::Qubits{4, 1, 5}));
    const auto state = run_example<Real>(c, TypeParam::device);
    const auto reference = qmarg_test::dense_state(c);
    EXPECT_NEAR(qmarg::total_probability(state), 1.0, tolerance<Real>());
    const auto amplitudes = state.amplitudes();
    for (std::size_t i = 0; i < amplitudes.size(); ++i) {
        EXPECT_LT(std::abs(std::complex<double>(amplitudes[i]) - reference[i]), 10 * tolerance<Real>()) << "amplitude " << i;
    }
    for (const qmarg::Qubits& qubits : {c.measured_qubits(), qmarg::Qubits{0, 1, 2, 3, 4, 5}, qmarg::Qubits{3}}) {
        const auto p = qmarg::marginal_probabilities(state, qubits);
        const auto expected = qmarg_test::dense_marginal(reference, qubits);
        for (std::size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(p[i], expected[i], tolerance<Real>()) << "outcome " << i;
    }
}

}  // namespace
