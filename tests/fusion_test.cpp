// fuse_gates(): fused circuits act exactly as the circuits they came from
// (checked with the independent dense reference of circuit_reference.hpp on
// random states), stay within their width, never grow, keep the order of
// operations that share qubits, and reject bad widths; run() with fusion on
// every backend.
#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "circuit_reference.hpp"
#include "qmarg/qasm.hpp"
#include "test_support.hpp"

namespace {

using qmarg::Circuit;
using qmarg::Matrix;
using qmarg::Operation;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg_test::Amplitudes;
using Complex = std::complex<double>;

// ---- random circuits ------------------------------------------------------------------

// A Haar-ish random unitary (QR of a complex Gaussian matrix by Gram-Schmidt).
Matrix random_unitary(int dim, std::mt19937_64& rng) {
    std::normal_distribution<double> gauss;
    std::vector<std::vector<Complex>> cols(dim, std::vector<Complex>(dim));
    for (auto& col : cols)
        for (auto& x : col) x = Complex(gauss(rng), gauss(rng));
    for (int c = 0; c < dim; ++c) {
        for (int p = 0; p < c; ++p) {
            Complex dot = 0;
            for (int r = 0; r < dim; ++r) dot += std::conj(cols[p][r]) * cols[c][r];
            for (int r = 0; r < dim; ++r) cols[c][r] -= dot * cols[p][r];
        }
        double norm = 0;
        for (const Complex& x : cols[c]) norm += std::norm(x);
        for (Complex& x : cols[c]) x /= std::sqrt(norm);
    }
    Matrix m(dim);
    for (int r = 0; r < dim; ++r)
        for (int c = 0; c < dim; ++c) m(r, c) = cols[c][r];
    return m;
}

Operation make_op(const std::string& name, Qubits targets, Matrix matrix, Qubits controls = {}) {
    Operation op;
    op.name = name;
    op.targets = std::move(targets);
    op.controls = std::move(controls);
    op.matrix = std::move(matrix);
    return op;
}

// Random 1- and 2-qubit gates, some with one or two controls, some diagonal
// or permutations (the GPU's fast paths), on random qubits in random order.
Circuit random_circuit(int n, int gates, std::mt19937_64& rng) {
    Circuit c;
    c.num_qubits = n;
    std::uniform_real_distribution<double> angle(-3.2, 3.2);
    for (int g = 0; g < gates; ++g) {
        const int kind = static_cast<int>(rng() % 6);
        const int width = std::min(n, kind == 0 || kind == 1 ? 1 : kind == 5 ? 3 : 2);
        const Qubits q = qmarg_test::random_qubits(n, width, rng);
        switch (width == 1 ? static_cast<int>(rng() % 2) : kind) {
            case 0: c.operations.push_back(make_op("u", {q[0]}, random_unitary(2, rng))); break;
            case 1: c.operations.push_back(make_op("rz", {q[0]}, qmarg::gates::rz(angle(rng)))); break;
            case 2: c.operations.push_back(make_op("u2", {q[0], q[1]}, random_unitary(4, rng))); break;
            case 3: c.operations.push_back(make_op("cu", {q[0]}, random_unitary(2, rng), {q[1]})); break;
            case 4: c.operations.push_back(make_op(rng() % 2 ? "cx" : "cz", {q[0]},
                                                   rng() % 2 ? qmarg::gates::x() : qmarg::gates::z(), {q[1]}));
                    break;
            default:
                if (width == 3) {
                    c.operations.push_back(make_op("ccu", {q[0]}, random_unitary(2, rng), {q[1], q[2]}));
                } else {
                    c.operations.push_back(make_op("swap", {q[0], q[1]}, qmarg::gates::swap()));
                }
        }
    }
    return c;
}

Amplitudes random_amplitudes(int n, std::mt19937_64& rng) {
    std::normal_distribution<double> gauss;
    Amplitudes amps(std::size_t{1} << n);
    double norm = 0;
    for (Complex& a : amps) {
        a = Complex(gauss(rng), gauss(rng));
        norm += std::norm(a);
    }
    for (Complex& a : amps) a /= std::sqrt(norm);
    return amps;
}

Amplitudes apply_circuit(Amplitudes amps, const Circuit& circuit) {
    for (const Operation& op : circuit.operations) qmarg_test::apply_dense(amps, op);
    return amps;
}

double max_difference(const Amplitudes& a, const Amplitudes& b) {
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
    return worst;
}

int width_of(const Operation& op) { return static_cast<int>(op.targets.size() + op.controls.size()); }

bool same_operation(const Operation& a, const Operation& b) {
    if (a.name != b.name || a.targets != b.targets || a.controls != b.controls || a.matrix.dim() != b.matrix.dim()) {
        return false;
    }
    return std::equal(a.matrix.data(), a.matrix.data() + a.matrix.dim() * a.matrix.dim(), b.matrix.data());
}

// ---- exactness and shape ----------------------------------------------------------------

TEST(FuseGates, RandomCircuitsActAsTheOriginalOnRandomStates) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    SCOPED_TRACE(qmarg_test::seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n = 2; n <= 10; ++n) {
        const Circuit circuit = random_circuit(n, 60, rng);
        const Amplitudes input = random_amplitudes(n, rng);
        const Amplitudes expected = apply_circuit(input, circuit);
        for (int m = 1; m <= 5; ++m) {
            SCOPED_TRACE("n = " + std::to_string(n) + ", max_qubits = " + std::to_string(m));
            const Circuit fused = qmarg::fuse_gates(circuit, m);
            EXPECT_LT(max_difference(apply_circuit(input, fused), expected), 1e-12);
            EXPECT_LE(fused.operations.size(), circuit.operations.size());
        }
    }
}

TEST(FuseGates, NoFusedOperationSpansMoreThanMaxQubits) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    SCOPED_TRACE(qmarg_test::seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n = 2; n <= 10; ++n) {
        const Circuit circuit = random_circuit(n, 80, rng);
        for (int m = 1; m <= qmarg::kMaxFusedQubits; ++m) {
            SCOPED_TRACE("n = " + std::to_string(n) + ", max_qubits = " + std::to_string(m));
            const Circuit fused = qmarg::fuse_gates(circuit, m);
            ASSERT_LE(fused.operations.size(), circuit.operations.size());
            for (std::size_t i = 0; i < fused.operations.size(); ++i) {
                const Operation& op = fused.operations[i];
                if (width_of(op) > m) {
                    // Only an operation too wide to fuse may exceed the width, and then as written.
                    const bool original =
                        std::any_of(circuit.operations.begin(), circuit.operations.end(),
                                    [&](const Operation& o) { return same_operation(o, op); });
                    EXPECT_TRUE(original) << "fused operation " << i << " '" << op.name << "' spans " << width_of(op)
                                          << " qubits";
                }
                if (op.name.rfind("fused(", 0) == 0) {
                    EXPECT_TRUE(op.controls.empty());
                    EXPECT_TRUE(std::is_sorted(op.targets.begin(), op.targets.end())) << op.name;
                }
            }
        }
    }
}

TEST(FuseGates, FusedMatricesOfUnitariesAreUnitary) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    SCOPED_TRACE(qmarg_test::seed_trace(seed));
    std::mt19937_64 rng(seed);
    const Circuit fused = qmarg::fuse_gates(random_circuit(8, 200, rng), 5);
    for (const Operation& op : fused.operations) {
        const Matrix product = op.matrix.adjoint() * op.matrix;
        for (int r = 0; r < product.dim(); ++r)
            for (int c = 0; c < product.dim(); ++c)
                ASSERT_LT(std::abs(product(r, c) - Complex(r == c ? 1.0 : 0.0)), 1e-12)
                    << op.name << " entry " << r << "," << c;
    }
}

TEST(FuseGates, KeepsEverythingButTheOperations) {
    Circuit circuit = qmarg::parse_qasm(
        "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[3];\ncreg c[2];\nh q[0];\ncx q[0],q[1];\nt q[2];\n"
        "measure q[2] -> c[0];\nmeasure q[0] -> c[1];\n",
        "keep.qasm");
    const Circuit fused = qmarg::fuse_gates(circuit, 3);
    EXPECT_EQ(fused.source_name, circuit.source_name);
    EXPECT_EQ(fused.num_qubits, 3);
    EXPECT_EQ(fused.num_clbits, 2);
    EXPECT_EQ(fused.measured_qubits(), circuit.measured_qubits());
    ASSERT_EQ(fused.quantum_registers.size(), 1u);
    EXPECT_EQ(fused.qubit_name(1), "q[1]");
    ASSERT_EQ(fused.operations.size(), 1u);
    EXPECT_EQ(fused.operations[0].name, "fused(h,cx,t)");
    EXPECT_EQ(fused.operations[0].targets, (Qubits{0, 1, 2}));
    EXPECT_EQ(fused.operations[0].location.line, 5);  // the first member's
}

// targets[0] of a fused gate is its lowest qubit and the least significant
// bit of the matrix index: X on qubit 1 and Z on qubit 3 become kron(Z, X).
TEST(FuseGates, BitOrderOfTheFusedMatrix) {
    Circuit circuit;
    circuit.num_qubits = 4;
    circuit.operations.push_back(make_op("z", {3}, qmarg::gates::z()));
    circuit.operations.push_back(make_op("x", {1}, qmarg::gates::x()));
    const Circuit fused = qmarg::fuse_gates(circuit, 2);
    ASSERT_EQ(fused.operations.size(), 1u);
    EXPECT_EQ(fused.operations[0].targets, (Qubits{1, 3}));
    const Matrix& m = fused.operations[0].matrix;
    const double expected[4][4] = {{0, 1, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, -1}, {0, 0, -1, 0}};
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) EXPECT_EQ(m(r, c), Complex(expected[r][c])) << "entry " << r << "," << c;
}

// A controlled gate joins as its full matrix on targets and controls.
TEST(FuseGates, ControlledGateBecomesItsFullMatrix) {
    Circuit circuit;
    circuit.num_qubits = 2;
    circuit.operations.push_back(make_op("h", {0}, qmarg::gates::h()));
    circuit.operations.push_back(make_op("cx", {1}, qmarg::gates::x(), {0}));
    const Circuit fused = qmarg::fuse_gates(circuit, 2);
    ASSERT_EQ(fused.operations.size(), 1u);
    const Matrix& m = fused.operations[0].matrix;
    // |00> -> (|00> + |11>)/sqrt2: column 0 has entries at rows 0 and 3.
    const double s = 1 / std::sqrt(2.0);
    EXPECT_NEAR(std::abs(m(0, 0) - s), 0, 1e-15);
    EXPECT_NEAR(std::abs(m(3, 0) - s), 0, 1e-15);
    EXPECT_EQ(m(1, 0), Complex(0));
    EXPECT_EQ(m(2, 0), Complex(0));
    EXPECT_TRUE(fused.operations[0].controls.empty());
}

// Products of diagonal gates keep exact zeros off the diagonal (so the GPU
// still takes its diagonal path); so do permutations.
TEST(FuseGates, DiagonalAndPermutationStructureSurvives) {
    Circuit circuit;
    circuit.num_qubits = 3;
    circuit.operations.push_back(make_op("s", {0}, qmarg::gates::s()));
    circuit.operations.push_back(make_op("cz", {1}, qmarg::gates::z(), {0}));
    circuit.operations.push_back(make_op("rz", {2}, qmarg::gates::rz(0.3)));
    circuit.operations.push_back(make_op("t", {1}, qmarg::gates::t()));
    Circuit permutations;
    permutations.num_qubits = 3;
    permutations.operations.push_back(make_op("x", {0}, qmarg::gates::x()));
    permutations.operations.push_back(make_op("cx", {2}, qmarg::gates::x(), {0}));
    permutations.operations.push_back(make_op("swap", {1, 2}, qmarg::gates::swap()));
    for (const Circuit* c : {&circuit, &permutations}) {
        const Circuit fused = qmarg::fuse_gates(*c, 3);
        ASSERT_EQ(fused.operations.size(), 1u);
        const Matrix& m = fused.operations[0].matrix;
        for (int r = 0; r < m.dim(); ++r) {
            int nonzero = 0;
            for (int col = 0; col < m.dim(); ++col) nonzero += m(r, col) != Complex(0);
            EXPECT_EQ(nonzero, 1) << fused.operations[0].name << " row " << r;
            if (c == &circuit) {
                EXPECT_NE(m(r, r), Complex(0)) << "row " << r;
            }
        }
    }
}

// ---- order and what stops fusion -----------------------------------------------------------

// H X H on one qubit around a gate too wide to fuse: nothing moves across
// it, and with room for all three the H's and X fuse into one gate (Z).
TEST(FuseGates, WideOperationsAreNotCrossed) {
    Circuit circuit;
    circuit.num_qubits = 3;
    circuit.operations.push_back(make_op("h", {0}, qmarg::gates::h()));
    circuit.operations.push_back(make_op("ccx", {0}, qmarg::gates::x(), {1, 2}));
    circuit.operations.push_back(make_op("h", {0}, qmarg::gates::h()));
    circuit.operations.push_back(make_op("x", {1}, qmarg::gates::x()));
    const Circuit fused = qmarg::fuse_gates(circuit, 2);
    ASSERT_EQ(fused.operations.size(), 3u);
    EXPECT_EQ(fused.operations[0].name, "h");
    EXPECT_EQ(fused.operations[1].name, "ccx");
    EXPECT_EQ(fused.operations[1].controls, (Qubits{1, 2}));  // as written
    EXPECT_EQ(fused.operations[2].name, "fused(h,x)");

    const Circuit all = qmarg::fuse_gates(circuit, 3);
    ASSERT_EQ(all.operations.size(), 1u);
}

// A chain that does not commute: with width 1 only same-qubit neighbours fuse,
// and the CX between them keeps its place.
TEST(FuseGates, NonCommutingOrderIsKept) {
    Circuit circuit;
    circuit.num_qubits = 2;
    circuit.operations.push_back(make_op("h", {0}, qmarg::gates::h()));
    circuit.operations.push_back(make_op("t", {0}, qmarg::gates::t()));
    circuit.operations.push_back(make_op("cx", {1}, qmarg::gates::x(), {0}));
    circuit.operations.push_back(make_op("h", {1}, qmarg::gates::h()));
    circuit.operations.push_back(make_op("h", {0}, qmarg::gates::h()));
    const Circuit fused = qmarg::fuse_gates(circuit, 1);
    ASSERT_EQ(fused.operations.size(), 4u);
    EXPECT_EQ(fused.operations[0].name, "fused(h,t)");
    EXPECT_EQ(fused.operations[1].name, "cx");
    const Amplitudes start = qmarg_test::dense_state(circuit);
    EXPECT_LT(max_difference(qmarg_test::dense_state(fused), start), 1e-15);
}

// A layer of one-qubit gates on different qubits is one pass per m qubits;
// a one-qubit gate joins the two-qubit gate that follows on its qubit.
TEST(FuseGates, LayersBecomeFewerOperations) {
    Circuit layer;
    layer.num_qubits = 8;
    for (int q = 0; q < 8; ++q) layer.operations.push_back(make_op("h", {q}, qmarg::gates::h()));
    EXPECT_EQ(qmarg::fuse_gates(layer, 4).operations.size(), 2u);
    EXPECT_EQ(qmarg::fuse_gates(layer, 1).operations.size(), 8u);

    Circuit pairs;
    pairs.num_qubits = 4;
    for (int q = 0; q < 4; ++q) pairs.operations.push_back(make_op("h", {q}, qmarg::gates::h()));
    pairs.operations.push_back(make_op("cx", {2}, qmarg::gates::x(), {0}));
    pairs.operations.push_back(make_op("cz", {3}, qmarg::gates::z(), {1}));
    const Circuit fused = qmarg::fuse_gates(pairs, 2);
    ASSERT_EQ(fused.operations.size(), 2u);
    EXPECT_EQ(fused.operations[0].targets, (Qubits{0, 2}));
    EXPECT_EQ(fused.operations[1].targets, (Qubits{1, 3}));
}

TEST(FuseGates, EmptyCircuitStaysEmpty) {
    Circuit circuit;
    circuit.num_qubits = 3;
    EXPECT_TRUE(qmarg::fuse_gates(circuit, 4).operations.empty());
}

// ---- the examples -----------------------------------------------------------------------------

TEST(FuseGates, ExampleCircuitsFusedAndUnfusedAgree) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    SCOPED_TRACE(qmarg_test::seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (const char* name :
         {"bernstein_vazirani.qasm", "ghz.qasm", "grover.qasm", "qft.qasm", "random_circuit.qasm"}) {
        const Circuit circuit = qmarg::load_qasm(qmarg_test::source_dir() + "/examples/" + name);
        const Amplitudes input = random_amplitudes(circuit.num_qubits, rng);
        const Amplitudes expected = apply_circuit(input, circuit);
        for (int m = 1; m <= qmarg::kMaxFusedQubits; ++m) {
            SCOPED_TRACE(std::string(name) + ", max_qubits = " + std::to_string(m));
            const Circuit fused = qmarg::fuse_gates(circuit, m);
            EXPECT_LE(fused.operations.size(), circuit.operations.size());
            EXPECT_LT(max_difference(apply_circuit(input, fused), expected), 1e-12);
        }
    }
}

// ---- errors -------------------------------------------------------------------------------

void expect_error_containing(const std::function<void()>& call, const std::vector<std::string>& parts) {
    try {
        call();
        ADD_FAILURE() << "no qmarg::Error thrown";
    } catch (const qmarg::Error& e) {
        for (const std::string& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
}

TEST(FuseGates, RejectsWidthsOutsideTheLimit) {
    Circuit circuit;
    circuit.num_qubits = 2;
    circuit.operations.push_back(make_op("h", {0}, qmarg::gates::h()));
    for (int m : {0, -1, qmarg::kMaxFusedQubits + 1, 64}) {
        SCOPED_TRACE("max_qubits = " + std::to_string(m));
        expect_error_containing([&] { qmarg::fuse_gates(circuit, m); },
                                {"max_qubits " + std::to_string(m), "1.." + std::to_string(qmarg::kMaxFusedQubits)});
    }
}

TEST(FuseGates, NamesAnInvalidOperation) {
    Circuit circuit = qmarg::parse_qasm("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[2];\nh q[0];\ncx q[0],q[1];\n",
                                        "bad.qasm");
    circuit.operations[1].targets = {5};
    expect_error_containing([&] { qmarg::fuse_gates(circuit, 2); },
                            {"operation 2 ('cx' at bad.qasm:5:1)", "qubit 5"});
    circuit.operations[1].targets = {1};
    circuit.operations[1].matrix = Matrix::identity(4);
    expect_error_containing([&] { qmarg::fuse_gates(circuit, 2); }, {"operation 2", "2x2"});
}

TEST(FuseGates, RunRejectsBadFusionWidths) {
    Circuit circuit;
    circuit.num_qubits = 2;
    circuit.operations.push_back(make_op("h", {0}, qmarg::gates::h()));
    StateVector<double> state(2);
    for (int m : {-1, qmarg::kMaxFusedQubits + 1}) {
        SCOPED_TRACE("fuse_qubits = " + std::to_string(m));
        expect_error_containing([&] { qmarg::run(state, circuit, qmarg::RunOptions{m}); },
                                {"fuse_qubits " + std::to_string(m), "0 (no fusion)"});
    }
}

// ---- run() with fusion, on every backend ------------------------------------------------------

template <class B>
class FusedRun : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(FusedRun, qmarg_test::AllBackends, qmarg_test::BackendName);

// The same random state through the fused circuit on the backend under test
// and through the circuit as written on the CPU reference in double.
TYPED_TEST(FusedRun, MatchesTheUnfusedRun) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = qmarg_test::fresh_seed();
    SCOPED_TRACE(qmarg_test::seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n : {2, 5, 9, 12}) {
        const Circuit circuit = random_circuit(n, 120, rng);
        const std::uint64_t state_seed = rng();
        StateVector<double> reference(n, qmarg::Device::Cpu);
        reference.set_random_state(state_seed);
        qmarg::run(reference, circuit);
        const auto expected = reference.amplitudes();
        for (int m : {1, 2, 3, 4, 5, 6, qmarg::kMaxFusedQubits}) {
            SCOPED_TRACE("n = " + std::to_string(n) + ", fuse_qubits = " + std::to_string(m));
            StateVector<Real> fused(n, TypeParam::device);
            fused.set_random_state(state_seed);
            std::size_t reported_total = 0;
            qmarg::run(fused, circuit, qmarg::RunOptions{m},
                       [&](std::size_t, std::size_t total) { reported_total = total; });
            EXPECT_EQ(reported_total, qmarg::fuse_gates(circuit, m).operations.size());
            const auto actual = fused.amplitudes();
            double worst = 0;
            for (std::size_t i = 0; i < actual.size(); ++i)
                worst = std::max(worst, std::abs(std::complex<double>(actual[i]) - std::complex<double>(expected[i])));
            EXPECT_LT(worst, 50 * qmarg_test::tolerance<Real>());
        }
    }
}

// The widest fused gate runs on each device: kMaxFusedQubits is what the GPU takes.
TYPED_TEST(FusedRun, WidestFusedGateRuns) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = qmarg_test::fresh_seed();
    SCOPED_TRACE(qmarg_test::seed_trace(seed));
    std::mt19937_64 rng(seed);
    const int n = qmarg::kMaxFusedQubits + 2;
    Circuit circuit;
    circuit.num_qubits = n;
    for (int q = 0; q < qmarg::kMaxFusedQubits; ++q) {
        circuit.operations.push_back(make_op("u", {q + 1}, random_unitary(2, rng)));
        if (q > 0) circuit.operations.push_back(make_op("cx", {q + 1}, qmarg::gates::x(), {q}));
    }
    const Circuit fused = qmarg::fuse_gates(circuit, qmarg::kMaxFusedQubits);
    ASSERT_EQ(fused.operations.size(), 1u);
    ASSERT_EQ(static_cast<int>(fused.operations[0].targets.size()), qmarg::kMaxFusedQubits);
    StateVector<Real> a(n, TypeParam::device), b(n, TypeParam::device);
    const std::uint64_t state_seed = rng();
    a.set_random_state(state_seed);
    b.set_random_state(state_seed);
    qmarg::run(a, circuit);
    qmarg::run(b, fused);
    const auto x = a.amplitudes(), y = b.amplitudes();
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
        worst = std::max(worst, std::abs(std::complex<double>(x[i]) - std::complex<double>(y[i])));
    EXPECT_LT(worst, 50 * qmarg_test::tolerance<Real>());

    // One qubit more is beyond the GPU, and fuse_gates will not build it.
    if (TypeParam::device == qmarg::Device::Gpu) {
        Qubits wide(qmarg::kMaxFusedQubits + 1);
        for (int q = 0; q < static_cast<int>(wide.size()); ++q) wide[q] = q;
        expect_error_containing(
            [&] { qmarg::apply_matrix(a, wide, Matrix::identity(1 << wide.size())); },
            {std::to_string(qmarg::kMaxFusedQubits)});
    }
}

}  // namespace
