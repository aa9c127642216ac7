// The standard gate matrices (Qiskit's conventions) and the named gates. Every
// named gate is apply_matrix with one of these matrices, so it is validated and
// dispatched to the CPU or GPU exactly like a user's own matrix.
#include <cmath>
#include <complex>

#include "qmarg/gates.hpp"

namespace qmarg {
namespace gates {
namespace {
using C = std::complex<double>;
constexpr C kI{0.0, 1.0};
constexpr double kPi = 3.141592653589793238462643383279502884;
const double kInvSqrt2 = 1.0 / std::sqrt(2.0);
C phase_factor(double angle) { return std::polar(1.0, angle); }
}  // namespace

Matrix h() { return Matrix(2, {kInvSqrt2, kInvSqrt2, kInvSqrt2, -kInvSqrt2}); }
Matrix x() { return Matrix(2, {0.0, 1.0, 1.0, 0.0}); }
Matrix y() { return Matrix(2, {0.0, -kI, kI, 0.0}); }
Matrix z() { return Matrix(2, {1.0, 0.0, 0.0, -1.0}); }
Matrix s() { return Matrix(2, {1.0, 0.0, 0.0, kI}); }
Matrix sdg() { return Matrix(2, {1.0, 0.0, 0.0, -kI}); }
Matrix t() { return phase(kPi / 4); }
Matrix tdg() { return phase(-kPi / 4); }
Matrix sx() { return Matrix(2, {C(0.5, 0.5), C(0.5, -0.5), C(0.5, -0.5), C(0.5, 0.5)}); }

Matrix rx(double theta) {
    const double c = std::cos(theta / 2), s = std::sin(theta / 2);
    return Matrix(2, {c, -kI * s, -kI * s, c});
}

Matrix ry(double theta) {
    const double c = std::cos(theta / 2), s = std::sin(theta / 2);
    return Matrix(2, {c, -s, s, c});
}

Matrix rz(double theta) { return Matrix(2, {phase_factor(-theta / 2), 0.0, 0.0, phase_factor(theta / 2)}); }

Matrix phase(double lambda) { return Matrix(2, {1.0, 0.0, 0.0, phase_factor(lambda)}); }

Matrix u3(double theta, double phi, double lambda) {
    const double c = std::cos(theta / 2), s = std::sin(theta / 2);
    return Matrix(2, {c, -phase_factor(lambda) * s, phase_factor(phi) * s, phase_factor(phi + lambda) * c});
}

Matrix swap() {
    return Matrix(4, {1.0, 0.0, 0.0, 0.0,  //
                      0.0, 0.0, 1.0, 0.0,  //
                      0.0, 1.0, 0.0, 0.0,  //
                      0.0, 0.0, 0.0, 1.0});
}

}  // namespace gates

template <class Real>
void h(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::h());
}
template <class Real>
void x(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::x());
}
template <class Real>
void y(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::y());
}
template <class Real>
void z(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::z());
}
template <class Real>
void s(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::s());
}
template <class Real>
void sdg(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::sdg());
}
template <class Real>
void t(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::t());
}
template <class Real>
void tdg(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::tdg());
}
template <class Real>
void sx(StateVector<Real>& state, int qubit) {
    apply_matrix(state, {qubit}, gates::sx());
}
template <class Real>
void rx(StateVector<Real>& state, int qubit, double theta) {
    apply_matrix(state, {qubit}, gates::rx(theta));
}
template <class Real>
void ry(StateVector<Real>& state, int qubit, double theta) {
    apply_matrix(state, {qubit}, gates::ry(theta));
}
template <class Real>
void rz(StateVector<Real>& state, int qubit, double theta) {
    apply_matrix(state, {qubit}, gates::rz(theta));
}
template <class Real>
void phase(StateVector<Real>& state, int qubit, double lambda) {
    apply_matrix(state, {qubit}, gates::phase(lambda));
}
template <class Real>
void u3(StateVector<Real>& state, int qubit, double theta, double phi, double lambda) {
    apply_matrix(state, {qubit}, gates::u3(theta, phi, lambda));
}
template <class Real>
void cx(StateVector<Real>& state, int control, int target) {
    apply_matrix(state, {target}, gates::x(), {control});
}
template <class Real>
void cz(StateVector<Real>& state, int control, int target) {
    apply_matrix(state, {target}, gates::z(), {control});
}
template <class Real>
void swap(StateVector<Real>& state, int qubit_a, int qubit_b) {
    apply_matrix(state, {qubit_a, qubit_b}, gates::swap());
}
template <class Real>
void ccx(StateVector<Real>& state, int control_a, int control_b, int target) {
    apply_matrix(state, {target}, gates::x(), {control_a, control_b});
}

#define QMARG_INSTANTIATE(Real)                                                          \
    template void h<Real>(StateVector<Real>&, int);                                      \
    template void x<Real>(StateVector<Real>&, int);                                      \
    template void y<Real>(StateVector<Real>&, int);                                      \
    template void z<Real>(StateVector<Real>&, int);                                      \
    template void s<Real>(StateVector<Real>&, int);                                      \
    template void sdg<Real>(StateVector<Real>&, int);                                    \
    template void t<Real>(StateVector<Real>&, int);                                      \
    template void tdg<Real>(StateVector<Real>&, int);                                    \
    template void sx<Real>(StateVector<Real>&, int);                                     \
    template void rx<Real>(StateVector<Real>&, int, double);                             \
    template void ry<Real>(StateVector<Real>&, int, double);                             \
    template void rz<Real>(StateVector<Real>&, int, double);                             \
    template void phase<Real>(StateVector<Real>&, int, double);                          \
    template void u3<Real>(StateVector<Real>&, int, double, double, double);             \
    template void cx<Real>(StateVector<Real>&, int, int);                                \
    template void cz<Real>(StateVector<Real>&, int, int);                                \
    template void swap<Real>(StateVector<Real>&, int, int);                              \
    template void ccx<Real>(StateVector<Real>&, int, int, int);
QMARG_INSTANTIATE(float)
QMARG_INSTANTIATE(double)
#undef QMARG_INSTANTIATE

}  // namespace qmarg
