// Matrices of the built-in gates. Rows and columns follow qmarg's convention
// (targets[0] is the least significant bit), which is also Qiskit's.
#include "qasm/qelib1.hpp"

#include <cmath>
#include <complex>

#include "qmarg/gates.hpp"

namespace qmarg {
namespace qasm {
namespace {

using C = std::complex<double>;
const C kI{0.0, 1.0};
const double kPi = 3.14159265358979323846;

C phase(double angle) { return std::polar(1.0, angle); }

// The standard library's single-gate matrices are qmarg's own (include/qmarg/gates.hpp).
using gates::h;
using gates::rx;
using gates::ry;
using gates::rz;
using gates::swap;
using gates::sx;
using gates::u3;
using gates::x;
using gates::y;
using gates::z;
Matrix p(double lambda) { return gates::phase(lambda); }
Matrix sxdg() { return gates::sx().adjoint(); }
// exp(-i theta/2 X(x)X)
Matrix rxx(double theta) {
    const double c = std::cos(theta / 2), s = std::sin(theta / 2);
    Matrix m(4);
    for (int i = 0; i < 4; ++i) {
        m(i, i) = c;
        m(i, 3 - i) = -kI * s;
    }
    return m;
}
// exp(-i theta/2 Z(x)Z)
Matrix rzz(double theta) {
    Matrix m(4);
    m(0, 0) = m(3, 3) = phase(-theta / 2);
    m(1, 1) = m(2, 2) = phase(theta / 2);
    return m;
}
// Relative-phase Toffoli (Margolus): X on the target up to phases on |110>-like states.
Matrix rccx() {
    Matrix m(8);
    m(0, 0) = m(1, 1) = m(2, 2) = m(4, 4) = m(6, 6) = 1.0;
    m(3, 7) = -kI;
    m(5, 5) = -1.0;
    m(7, 3) = kI;
    return m;
}
// Relative-phase 3-controlled X.
Matrix rc3x() {
    Matrix m(16);
    for (int i : {0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14}) m(i, i) = 1.0;
    m(3, 3) = kI;
    m(7, 15) = 1.0;
    m(11, 11) = -kI;
    m(15, 7) = -1.0;
    return m;
}

void set(Operation& op, Matrix matrix, Qubits targets, Qubits controls = {}) {
    op.matrix = std::move(matrix);
    op.targets = std::move(targets);
    op.controls = std::move(controls);
}

// One-target gate on q[0]; controlled gate: control q[0], target q[1].
#define ONE(expr)                                        \
    [](const double* a, const int* q, Operation& op) {  \
        (void)a;                                         \
        set(op, expr, {q[0]});                           \
        return true;                                     \
    }
#define CONTROLLED(expr)                                 \
    [](const double* a, const int* q, Operation& op) {  \
        (void)a;                                         \
        set(op, expr, {q[1]}, {q[0]});                   \
        return true;                                     \
    }

bool identity(const double*, const int*, Operation&) { return false; }

}  // namespace

const std::vector<StandardGate>& primitive_gates() {
    static const std::vector<StandardGate> gates = {
        {"U", 3, 1, ONE(u3(a[0], a[1], a[2]))},
        {"CX", 0, 2, CONTROLLED(x())},
    };
    return gates;
}

const std::vector<StandardGate>& qelib1_gates() {
    static const std::vector<StandardGate> gates = {
        {"u3", 3, 1, ONE(u3(a[0], a[1], a[2]))},
        {"u2", 2, 1, ONE(u3(kPi / 2, a[0], a[1]))},
        {"u1", 1, 1, ONE(p(a[0]))},
        {"cx", 0, 2, CONTROLLED(x())},
        {"id", 0, 1, identity},
        {"u0", 1, 1, identity},
        {"u", 3, 1, ONE(u3(a[0], a[1], a[2]))},
        {"p", 1, 1, ONE(p(a[0]))},
        {"x", 0, 1, ONE(x())},
        {"y", 0, 1, ONE(y())},
        {"z", 0, 1, ONE(z())},
        {"h", 0, 1, ONE(h())},
        {"s", 0, 1, ONE(p(kPi / 2))},
        {"sdg", 0, 1, ONE(p(-kPi / 2))},
        {"t", 0, 1, ONE(p(kPi / 4))},
        {"tdg", 0, 1, ONE(p(-kPi / 4))},
        {"rx", 1, 1, ONE(rx(a[0]))},
        {"ry", 1, 1, ONE(ry(a[0]))},
        {"rz", 1, 1, ONE(rz(a[0]))},
        {"sx", 0, 1, ONE(sx())},
        {"sxdg", 0, 1, ONE(sxdg())},
        {"cz", 0, 2, CONTROLLED(z())},
        {"cy", 0, 2, CONTROLLED(y())},
        {"swap", 0, 2, [](const double*, const int* q, Operation& op) {
             set(op, swap(), {q[0], q[1]});
             return true;
         }},
        {"ch", 0, 2, CONTROLLED(h())},
        {"ccx", 0, 3, [](const double*, const int* q, Operation& op) {
             set(op, x(), {q[2]}, {q[0], q[1]});
             return true;
         }},
        {"cswap", 0, 3, [](const double*, const int* q, Operation& op) {
             set(op, swap(), {q[1], q[2]}, {q[0]});
             return true;
         }},
        {"crx", 1, 2, CONTROLLED(rx(a[0]))},
        {"cry", 1, 2, CONTROLLED(ry(a[0]))},
        {"crz", 1, 2, CONTROLLED(rz(a[0]))},
        {"cu1", 1, 2, CONTROLLED(p(a[0]))},
        {"cp", 1, 2, CONTROLLED(p(a[0]))},
        {"cu3", 3, 2, CONTROLLED(u3(a[0], a[1], a[2]))},
        {"csx", 0, 2, CONTROLLED(sx())},
        {"cu", 4, 2, [](const double* a, const int* q, Operation& op) {
             Matrix m = u3(a[0], a[1], a[2]);
             for (int i = 0; i < 4; ++i) m.data()[i] *= phase(a[3]);
             set(op, std::move(m), {q[1]}, {q[0]});
             return true;
         }},
        {"rxx", 1, 2, [](const double* a, const int* q, Operation& op) {
             set(op, rxx(a[0]), {q[0], q[1]});
             return true;
         }},
        {"rzz", 1, 2, [](const double* a, const int* q, Operation& op) {
             set(op, rzz(a[0]), {q[0], q[1]});
             return true;
         }},
        {"rccx", 0, 3, [](const double*, const int* q, Operation& op) {
             set(op, rccx(), {q[0], q[1], q[2]});
             return true;
         }},
        {"rc3x", 0, 4, [](const double*, const int* q, Operation& op) {
             set(op, rc3x(), {q[0], q[1], q[2], q[3]});
             return true;
         }},
        {"c3x", 0, 4, [](const double*, const int* q, Operation& op) {
             set(op, x(), {q[3]}, {q[0], q[1], q[2]});
             return true;
         }},
        {"c3sqrtx", 0, 4, [](const double*, const int* q, Operation& op) {
             set(op, sxdg(), {q[3]}, {q[0], q[1], q[2]});
             return true;
         }},
        {"c4x", 0, 5, [](const double*, const int* q, Operation& op) {
             set(op, x(), {q[4]}, {q[0], q[1], q[2], q[3]});
             return true;
         }},
    };
    return gates;
}

}  // namespace qasm
}  // namespace qmarg
