// run(): circuits on every backend against the dense reference, progress
// reports, and errors that name the failing operation.
#include <random>
#include <string>
#include <vector>

#include "circuit_reference.hpp"
#include "qmarg/qasm.hpp"
#include "test_support.hpp"

namespace {

using qmarg::Circuit;
using qmarg::StateVector;

template <class B>
class CircuitRun : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(CircuitRun, qmarg_test::AllBackends, qmarg_test::BackendName);

// A random program over the qelib1.inc gates with controls (so that the
// backends' control handling is exercised through run()).
std::string random_program(int n, int gates, std::mt19937_64& rng) {
    const char* const one[] = {"h", "x", "y", "sx", "t", "sdg"};
    const char* const two[] = {"cx", "cz", "ch", "swap", "csx"};
    std::string text = "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[" + std::to_string(n) + "];\n";
    std::uniform_real_distribution<double> angle(-3.2, 3.2);
    for (int g = 0; g < gates; ++g) {
        const auto q = qmarg_test::random_qubits(n, 3, rng);
        auto arg = [&](int i) { return "q[" + std::to_string(q[i]) + "]"; };
        switch (rng() % 5) {
            case 0: text += std::string(one[rng() % 6]) + " " + arg(0) + ";\n"; break;
            case 1: text += "u3(" + std::to_string(angle(rng)) + "," + std::to_string(angle(rng)) + "," +
                            std::to_string(angle(rng)) + ") " + arg(0) + ";\n"; break;
            case 2: text += std::string(two[rng() % 5]) + " " + arg(0) + ", " + arg(1) + ";\n"; break;
            case 3: text += "cu(" + std::to_string(angle(rng)) + ",0.3,-0.2," + std::to_string(angle(rng)) + ") " +
                            arg(0) + ", " + arg(1) + ";\n"; break;
            default: text += std::string(rng() % 2 ? "ccx " : "cswap ") + arg(0) + ", " + arg(1) + ", " + arg(2) + ";\n";
        }
    }
    return text;
}

TYPED_TEST(CircuitRun, RandomCircuitsMatchTheDenseReference) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = qmarg_test::fresh_seed();
    SCOPED_TRACE(qmarg_test::seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n : {3, 5, 8}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const Circuit c = qmarg::parse_qasm(random_program(n, 40, rng));
        StateVector<Real> state(n, TypeParam::device);
        qmarg::run(state, c);
        const auto reference = qmarg_test::dense_state(c);
        const auto amplitudes = state.amplitudes();
        for (std::size_t i = 0; i < amplitudes.size(); ++i) {
            ASSERT_LT(std::abs(std::complex<double>(amplitudes[i]) - reference[i]), 20 * qmarg_test::tolerance<Real>())
                << "amplitude " << i;
        }
    }
}

TYPED_TEST(CircuitRun, ProgressCountsEveryOperation) {
    using Real = typename TypeParam::Real;
    const Circuit c = qmarg::parse_qasm("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[3];\nh q;\ncx q[0], q[2];\n");
    StateVector<Real> state(3, TypeParam::device);
    std::vector<std::pair<std::size_t, std::size_t>> reports;
    qmarg::run(state, c, [&](std::size_t done, std::size_t total) { reports.emplace_back(done, total); });
    ASSERT_EQ(reports.size(), 4u);
    for (std::size_t i = 0; i < reports.size(); ++i) {
        EXPECT_EQ(reports[i].first, i + 1);
        EXPECT_EQ(reports[i].second, 4u);
    }
}

TYPED_TEST(CircuitRun, StateSizeMustMatch) {
    using Real = typename TypeParam::Real;
    const Circuit c = qmarg::parse_qasm("OPENQASM 2.0;\nqreg q[3];\n");
    StateVector<Real> state(4, TypeParam::device);
    try {
        qmarg::run(state, c);
        FAIL() << "expected an Error";
    } catch (const qmarg::Error& e) {
        EXPECT_STREQ(e.what(), "cannot run a 3-qubit circuit on a 4-qubit state");
    }
}

TYPED_TEST(CircuitRun, AFailingOperationIsNamedWithItsSourceLocation) {
    using Real = typename TypeParam::Real;
    // A circuit built in code can hold operations no program could produce.
    Circuit c = qmarg::parse_qasm("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[2];\nh q[0];\ncx q[0], q[1];\n",
                                  "bell.qasm");
    c.operations[1].controls = {1};
    StateVector<Real> state(2, TypeParam::device);
    try {
        qmarg::run(state, c);
        FAIL() << "expected an Error";
    } catch (const qmarg::Error& e) {
        EXPECT_EQ(std::string(e.what()), "operation 2 ('cx' at bell.qasm:5:1): qubit 1 is both a target and a control");
    }
}

}  // namespace
