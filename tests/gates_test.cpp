// apply_matrix and the named gates on every backend against an independent
// reference: the full 2^n x 2^n operator built from Kronecker products (Eigen)
// in a layout where the targets are the low qubits and the controls the next
// ones, then carried back to the real qubit order by a permutation of basis
// states. Also: the named gates' matrices against their textbook entries, their
// action on basis states, and unitarity over 1000 random gates.
#include <unsupported/Eigen/KroneckerProduct>

#include <Eigen/Dense>
#include <cmath>
#include <functional>
#include <sstream>

#include "test_support.hpp"

namespace {

using Eigen::MatrixXcd;
using Eigen::VectorXcd;
using qmarg::Device;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg_test::fresh_seed;
using qmarg_test::seed_trace;
using C = std::complex<double>;

constexpr double kPi = 3.141592653589793238462643383279502884;
constexpr C kI{0, 1};

template <class B>
class GatesVsKronecker : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(GatesVsKronecker, qmarg_test::AllBackends, qmarg_test::BackendName);

std::string describe(int n, const Qubits& targets, const Qubits& controls, const std::vector<int>& values) {
    std::ostringstream text;
    auto list = [&text](const std::vector<int>& v) {
        text << "{";
        for (std::size_t j = 0; j < v.size(); ++j) text << (j ? "," : "") << v[j];
        text << "}";
    };
    text << "n=" << n << " targets=";
    list(targets);
    text << " controls=";
    list(controls);
    text << " control_values=";
    list(values);
    return text.str();
}

qmarg::Matrix to_qmarg(const MatrixXcd& m) {
    qmarg::Matrix out(static_cast<int>(m.rows()));
    for (int r = 0; r < m.rows(); ++r)
        for (int c = 0; c < m.cols(); ++c) out(r, c) = m(r, c);
    return out;
}

MatrixXcd to_eigen(const qmarg::Matrix& m) {
    MatrixXcd out(m.dim(), m.dim());
    for (int r = 0; r < m.dim(); ++r)
        for (int c = 0; c < m.dim(); ++c) out(r, c) = m(r, c);
    return out;
}

MatrixXcd identity(long dim) { return MatrixXcd::Identity(dim, dim); }

// The operator of `u` on `targets` under `controls` (holding `values`, all 1 if
// empty) as a dense 2^n x 2^n matrix.
MatrixXcd full_operator(int n, const Qubits& targets, const MatrixXcd& u, const Qubits& controls,
                        const std::vector<int>& values) {
    const int k = static_cast<int>(targets.size());
    const int c = static_cast<int>(controls.size());
    // In the layout, bit p of a basis index is qubit order[p]: targets first
    // (so targets[0] is bit 0, as for the matrix), then controls, then the rest.
    Qubits order = targets;
    order.insert(order.end(), controls.begin(), controls.end());
    for (int q = 0; q < n; ++q)
        if (std::find(order.begin(), order.end(), q) == order.end()) order.push_back(q);

    long satisfied_pattern = 0;
    for (int j = 0; j < c; ++j)
        if (values.empty() || values[j] == 1) satisfied_pattern += 1L << j;
    MatrixXcd satisfied = MatrixXcd::Zero(1L << c, 1L << c);
    satisfied(satisfied_pattern, satisfied_pattern) = 1;
    const MatrixXcd controlled = Eigen::kroneckerProduct(identity(1L << c) - satisfied, identity(1L << k)).eval() +
                                 Eigen::kroneckerProduct(satisfied, u).eval();
    const MatrixXcd in_layout = Eigen::kroneckerProduct(identity(1L << (n - k - c)), controlled);

    // <r|G|s> = <layout(r)|G_layout|layout(s)>.
    const long dim = 1L << n;
    std::vector<long> layout(dim, 0);
    for (long i = 0; i < dim; ++i)
        for (int p = 0; p < n; ++p)
            if ((i >> order[p]) & 1) layout[i] += 1L << p;
    MatrixXcd full(dim, dim);
    for (long r = 0; r < dim; ++r)
        for (long s = 0; s < dim; ++s) full(r, s) = in_layout(layout[r], layout[s]);
    return full;
}

template <class Real>
VectorXcd as_eigen(const std::vector<std::complex<Real>>& amps) {
    VectorXcd out(amps.size());
    for (std::size_t i = 0; i < amps.size(); ++i) out[i] = C(amps[i].real(), amps[i].imag());
    return out;
}

template <class Real>
void expect_state_near(const StateVector<Real>& state, const VectorXcd& want) {
    const auto got = state.amplitudes();
    ASSERT_EQ(static_cast<long>(got.size()), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double error = std::abs(C(got[i].real(), got[i].imag()) - want[i]);
        EXPECT_LE(error, qmarg_test::tolerance<Real>() * (1 + std::abs(want[i])))
            << "amplitude " << i << ": got " << got[i] << ", want " << want[i];
    }
}

MatrixXcd random_matrix(int dim, std::mt19937_64& rng) {
    std::normal_distribution<double> normal;
    MatrixXcd m(dim, dim);
    for (int r = 0; r < dim; ++r)
        for (int c = 0; c < dim; ++c) m(r, c) = C(normal(rng), normal(rng));
    return m;
}

MatrixXcd random_unitary(int dim, std::mt19937_64& rng) {
    Eigen::HouseholderQR<MatrixXcd> qr(random_matrix(dim, rng));
    return qr.householderQ();
}

struct GateCase {
    Qubits targets, controls;
    std::vector<int> values;
};

// k targets in random order, up to max_controls random controls, and control
// values either left out or random.
GateCase random_case(int n, int k, int max_controls, std::mt19937_64& rng) {
    const int c = std::uniform_int_distribution<int>(0, std::min(max_controls, n - k))(rng);
    Qubits qubits = qmarg_test::random_qubits(n, k + c, rng);
    GateCase g;
    g.targets.assign(qubits.begin(), qubits.begin() + k);
    g.controls.assign(qubits.begin() + k, qubits.end());
    if (c > 0 && rng() % 2) {
        for (int j = 0; j < c; ++j) g.values.push_back(static_cast<int>(rng() % 2));
    }
    return g;
}

// Applies `m` per `g` to a fresh random state and compares with the reference.
template <class Real>
void check_apply_matrix(int n, Device device, const GateCase& g, const MatrixXcd& m, std::uint64_t seed) {
    SCOPED_TRACE(describe(n, g.targets, g.controls, g.values));
    StateVector<Real> state(n, device);
    state.set_random_state(seed);
    const VectorXcd want = full_operator(n, g.targets, m, g.controls, g.values) * as_eigen(state.amplitudes());
    qmarg::apply_matrix(state, g.targets, to_qmarg(m), g.controls, g.values);
    expect_state_near(state, want);
}

// General (non-unitary) matrices, so a transposed or conjugated product fails.
TYPED_TEST(GatesVsKronecker, RandomMatricesOnRandomTargetsAndControls) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int k = 1; k <= 4; ++k) {
        for (int n = k; n <= 8; ++n) {
            for (int trial = 0; trial < 3; ++trial) {
                const GateCase g = random_case(n, k, 3, rng);
                check_apply_matrix<Real>(n, TypeParam::device, g, random_matrix(1 << k, rng), rng());
                if (this->HasFailure()) return;
            }
        }
    }
}

TYPED_TEST(GatesVsKronecker, MatrixOnAllQubits) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    for (int n = 1; n <= 5; ++n) {
        check_apply_matrix<Real>(n, TypeParam::device, {qmarg_test::random_qubits(n, n, rng), {}, {}},
                                 random_matrix(1 << n, rng), rng());
    }
}

TYPED_TEST(GatesVsKronecker, EveryControlPatternOnEdgeQubits) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    const int n = 6;
    const MatrixXcd m = random_matrix(4, rng);
    for (int pattern = 0; pattern < 4; ++pattern) {
        const std::vector<int> values = {pattern & 1, pattern >> 1};
        check_apply_matrix<Real>(n, TypeParam::device, {{n - 1, 0}, {2, 4}, values}, m, rng());
        check_apply_matrix<Real>(n, TypeParam::device, {{0, n - 1}, {4, 2}, values}, m, rng());
        check_apply_matrix<Real>(n, TypeParam::device, {{2, 4}, {0, n - 1}, values}, m, rng());
    }
}

// targets[0] is the least significant bit of the matrix index:
// apply_matrix(s, {a, b}, kron(B, A)) applies A to a and B to b.
TYPED_TEST(GatesVsKronecker, TargetOrderIsMatrixBitOrder) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    const MatrixXcd a = random_unitary(2, rng), b = random_unitary(2, rng);
    StateVector<Real> together(5, TypeParam::device);
    together.set_random_state(seed);
    StateVector<Real> apart = together.clone();
    qmarg::apply_matrix(together, {3, 1}, to_qmarg(Eigen::kroneckerProduct(b, a).eval()));
    qmarg::apply_matrix(apart, {3}, to_qmarg(a));
    qmarg::apply_matrix(apart, {1}, to_qmarg(b));
    expect_state_near(together, as_eigen(apart.amplitudes()));
}

// Textbook matrices, written out entry by entry (Qiskit's conventions).
struct Textbook {
    const char* name;
    qmarg::Matrix (*matrix)();
    MatrixXcd expected;
};

MatrixXcd two_by_two(C a, C b, C c, C d) {
    MatrixXcd m(2, 2);
    m << a, b, c, d;
    return m;
}

MatrixXcd textbook_u3(double theta, double phi, double lambda) {
    const double c = std::cos(theta / 2), s = std::sin(theta / 2);
    return two_by_two(c, -std::exp(kI * lambda) * s, std::exp(kI * phi) * s, std::exp(kI * (phi + lambda)) * c);
}

void expect_matrix_near(const qmarg::Matrix& got, const MatrixXcd& want, const std::string& name) {
    ASSERT_EQ(got.dim(), want.rows()) << name;
    EXPECT_LE((to_eigen(got) - want).cwiseAbs().maxCoeff(), 1e-15) << name << ":\n" << to_eigen(got);
}

TEST(GateMatrices, MatchTheirTextbookEntries) {
    const double r = 1 / std::sqrt(2.0);
    expect_matrix_near(qmarg::gates::h(), two_by_two(r, r, r, -r), "h");
    expect_matrix_near(qmarg::gates::x(), two_by_two(0, 1, 1, 0), "x");
    expect_matrix_near(qmarg::gates::y(), two_by_two(0, -kI, kI, 0), "y");
    expect_matrix_near(qmarg::gates::z(), two_by_two(1, 0, 0, -1), "z");
    expect_matrix_near(qmarg::gates::s(), two_by_two(1, 0, 0, kI), "s");
    expect_matrix_near(qmarg::gates::sdg(), two_by_two(1, 0, 0, -kI), "sdg");
    expect_matrix_near(qmarg::gates::t(), two_by_two(1, 0, 0, C(r, r)), "t");
    expect_matrix_near(qmarg::gates::tdg(), two_by_two(1, 0, 0, C(r, -r)), "tdg");
    expect_matrix_near(qmarg::gates::sx(), 0.5 * two_by_two(C(1, 1), C(1, -1), C(1, -1), C(1, 1)), "sx");
    MatrixXcd swap = MatrixXcd::Zero(4, 4);
    swap(0, 0) = swap(1, 2) = swap(2, 1) = swap(3, 3) = 1;
    expect_matrix_near(qmarg::gates::swap(), swap, "swap");
    for (double theta : {0.0, 0.3, -1.7, kPi, 2.9}) {
        const double c = std::cos(theta / 2), s = std::sin(theta / 2);
        const std::string at = "(" + std::to_string(theta) + ")";
        expect_matrix_near(qmarg::gates::rx(theta), two_by_two(c, -kI * s, -kI * s, c), "rx" + at);
        expect_matrix_near(qmarg::gates::ry(theta), two_by_two(c, -s, s, c), "ry" + at);
        expect_matrix_near(qmarg::gates::rz(theta), two_by_two(std::exp(-kI * theta / 2.0), 0, 0,
                                                               std::exp(kI * theta / 2.0)),
                           "rz" + at);
        expect_matrix_near(qmarg::gates::phase(theta), two_by_two(1, 0, 0, std::exp(kI * theta)), "phase" + at);
        expect_matrix_near(qmarg::gates::u3(theta, 0.4, -1.1), textbook_u3(theta, 0.4, -1.1), "u3" + at);
        // Qiskit's identities: U3(θ, -π/2, π/2) = Rx(θ), U3(θ, 0, 0) = Ry(θ),
        // U3(0, 0, λ) = Phase(λ).
        expect_matrix_near(qmarg::gates::u3(theta, -kPi / 2, kPi / 2), to_eigen(qmarg::gates::rx(theta)),
                           "u3 as rx" + at);
        expect_matrix_near(qmarg::gates::u3(theta, 0, 0), to_eigen(qmarg::gates::ry(theta)), "u3 as ry" + at);
        expect_matrix_near(qmarg::gates::u3(0, 0, theta), to_eigen(qmarg::gates::phase(theta)), "u3 as phase" + at);
    }
}

// Each named gate acts on a random state as its textbook matrix does.
TYPED_TEST(GatesVsKronecker, NamedGatesActAsTheirMatrices) {
    using Real = typename TypeParam::Real;
    using State = StateVector<Real>;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    const int n = 5;
    const Qubits q = qmarg_test::random_qubits(n, 3, rng);
    const double theta = std::uniform_real_distribution<double>(-kPi, kPi)(rng);
    const double phi = std::uniform_real_distribution<double>(-kPi, kPi)(rng);
    const double lambda = std::uniform_real_distribution<double>(-kPi, kPi)(rng);
    const double r = 1 / std::sqrt(2.0), c = std::cos(theta / 2), s = std::sin(theta / 2);
    const MatrixXcd x = two_by_two(0, 1, 1, 0);
    MatrixXcd swap = MatrixXcd::Zero(4, 4);
    swap(0, 0) = swap(1, 2) = swap(2, 1) = swap(3, 3) = 1;

    struct Named {
        std::string name;
        std::function<void(State&)> apply;
        GateCase where;
        MatrixXcd matrix;
    };
    const std::vector<Named> named = {
        {"h", [&](State& st) { qmarg::h(st, q[0]); }, {{q[0]}, {}, {}}, two_by_two(r, r, r, -r)},
        {"x", [&](State& st) { qmarg::x(st, q[0]); }, {{q[0]}, {}, {}}, x},
        {"y", [&](State& st) { qmarg::y(st, q[0]); }, {{q[0]}, {}, {}}, two_by_two(0, -kI, kI, 0)},
        {"z", [&](State& st) { qmarg::z(st, q[0]); }, {{q[0]}, {}, {}}, two_by_two(1, 0, 0, -1)},
        {"s", [&](State& st) { qmarg::s(st, q[0]); }, {{q[0]}, {}, {}}, two_by_two(1, 0, 0, kI)},
        {"sdg", [&](State& st) { qmarg::sdg(st, q[0]); }, {{q[0]}, {}, {}}, two_by_two(1, 0, 0, -kI)},
        {"t", [&](State& st) { qmarg::t(st, q[0]); }, {{q[0]}, {}, {}}, two_by_two(1, 0, 0, C(r, r))},
        {"tdg", [&](State& st) { qmarg::tdg(st, q[0]); }, {{q[0]}, {}, {}}, two_by_two(1, 0, 0, C(r, -r))},
        {"sx", [&](State& st) { qmarg::sx(st, q[0]); }, {{q[0]}, {}, {}},
         0.5 * two_by_two(C(1, 1), C(1, -1), C(1, -1), C(1, 1))},
        {"rx", [&](State& st) { qmarg::rx(st, q[0], theta); }, {{q[0]}, {}, {}}, two_by_two(c, -kI * s, -kI * s, c)},
        {"ry", [&](State& st) { qmarg::ry(st, q[0], theta); }, {{q[0]}, {}, {}}, two_by_two(c, -s, s, c)},
        {"rz", [&](State& st) { qmarg::rz(st, q[0], theta); }, {{q[0]}, {}, {}},
         two_by_two(std::exp(-kI * theta / 2.0), 0, 0, std::exp(kI * theta / 2.0))},
        {"phase", [&](State& st) { qmarg::phase(st, q[0], lambda); }, {{q[0]}, {}, {}},
         two_by_two(1, 0, 0, std::exp(kI * lambda))},
        {"u3", [&](State& st) { qmarg::u3(st, q[0], theta, phi, lambda); }, {{q[0]}, {}, {}},
         textbook_u3(theta, phi, lambda)},
        {"cx", [&](State& st) { qmarg::cx(st, q[1], q[0]); }, {{q[0]}, {q[1]}, {}}, x},
        {"cz", [&](State& st) { qmarg::cz(st, q[1], q[0]); }, {{q[0]}, {q[1]}, {}}, two_by_two(1, 0, 0, -1)},
        {"swap", [&](State& st) { qmarg::swap(st, q[0], q[1]); }, {{q[0], q[1]}, {}, {}}, swap},
        {"ccx", [&](State& st) { qmarg::ccx(st, q[1], q[2], q[0]); }, {{q[0]}, {q[1], q[2]}, {}}, x},
    };
    for (const Named& gate : named) {
        SCOPED_TRACE(gate.name + " " + describe(n, gate.where.targets, gate.where.controls, gate.where.values));
        State state(n, TypeParam::device);
        state.set_random_state(rng());
        const VectorXcd want = full_operator(n, gate.where.targets, gate.matrix, gate.where.controls, {}) *
                               as_eigen(state.amplitudes());
        gate.apply(state);
        expect_state_near(state, want);
    }
}

// Permutation gates on basis states: exact, and readable as truth tables.
TYPED_TEST(GatesVsKronecker, PermutationGatesOnBasisStates) {
    using Real = typename TypeParam::Real;
    StateVector<Real> state(4, TypeParam::device);
    auto basis_after = [&state](qmarg::Index start, const std::function<void()>& gate) {
        state.set_basis_state(start);
        gate();
        const auto amps = state.amplitudes();
        for (std::size_t i = 0; i < amps.size(); ++i)
            if (amps[i] == std::complex<Real>(1, 0)) return static_cast<qmarg::Index>(i);
        return ~qmarg::Index{0};
    };
    EXPECT_EQ(basis_after(0b0000, [&] { qmarg::x(state, 2); }), 0b0100u);
    EXPECT_EQ(basis_after(0b0010, [&] { qmarg::cx(state, 1, 3); }), 0b1010u);
    EXPECT_EQ(basis_after(0b1000, [&] { qmarg::cx(state, 1, 3); }), 0b1000u);  // control 0: nothing
    EXPECT_EQ(basis_after(0b0001, [&] { qmarg::swap(state, 0, 2); }), 0b0100u);
    EXPECT_EQ(basis_after(0b1011, [&] { qmarg::ccx(state, 0, 1, 2); }), 0b1111u);
    EXPECT_EQ(basis_after(0b1001, [&] { qmarg::ccx(state, 0, 1, 2); }), 0b1001u);
    // Control on 0: flips target 2 only when qubit 3 is 0.
    const qmarg::Matrix not_gate = qmarg::gates::x();
    EXPECT_EQ(basis_after(0b0000, [&] { qmarg::apply_matrix(state, {2}, not_gate, {3}, {0}); }), 0b0100u);
    EXPECT_EQ(basis_after(0b1000, [&] { qmarg::apply_matrix(state, {2}, not_gate, {3}, {0}); }), 0b1000u);
}

// 1000 random unitaries (k <= 3, random targets and controls) keep the total
// probability at 1 within the precision's rounding.
TYPED_TEST(GatesVsKronecker, UnitarityOverThousandRandomGates) {
    using Real = typename TypeParam::Real;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    const int n = 10;
    StateVector<Real> state(n, TypeParam::device);
    state.set_random_state(seed);
    for (int gate = 0; gate < 1000; ++gate) {
        const int k = std::uniform_int_distribution<int>(1, 3)(rng);
        const GateCase g = random_case(n, k, 2, rng);
        qmarg::apply_matrix(state, g.targets, to_qmarg(random_unitary(1 << k, rng)), g.controls, g.values);
    }
    const double tolerance = std::is_same<Real, float>::value ? 1e-4 : 1e-11;
    EXPECT_NEAR(qmarg::total_probability(state), 1.0, tolerance);
}

// u3 (and u2, U, cu3 built from it) stays unitary to rounding for any angles:
// e^{i(phi + lambda)} must not come from the rounded sum, which at |lambda|
// ~ 4e9 drops phi's low bits (found by the fuzzer as u2(0.2, 4444444444.3)).
TEST(GateMatrices, U3IsUnitaryForHugeAngles) {
    for (const double lambda : {4444444444.3, -1e12, 3e15}) {
        for (const double phi : {0.2, -7e9, 1e13}) {
            const qmarg::Matrix u = qmarg::gates::u3(0.3, phi, lambda);
            for (int r = 0; r < 2; ++r) {
                for (int c = 0; c < 2; ++c) {
                    const C dot = u(r, 0) * std::conj(u(c, 0)) + u(r, 1) * std::conj(u(c, 1));
                    EXPECT_NEAR(std::abs(dot - (r == c ? C(1.0) : C(0.0))), 0.0, 1e-14)
                        << "phi " << phi << ", lambda " << lambda << ", rows " << r << ", " << c;
                }
            }
        }
    }
}

}  // namespace
