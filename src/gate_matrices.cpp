// The standard gate matrices (qmarg::gates, Qiskit's conventions). Kept apart
// from the named gate functions in gates.cpp because they depend on Matrix
// alone: the OpenQASM reader (and its fuzz build) uses them without any backend.
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

// e^{i(phi + lambda)} is formed as e^{i phi} e^{i lambda}, not from the sum:
// for a large angle the rounded sum loses phi's low bits (at |lambda| ~ 4e9,
// about 5e-7 rad), and the two rows would stop being orthogonal. The product
// keeps the matrix unitary to rounding for any angles.
Matrix u3(double theta, double phi, double lambda) {
    const double c = std::cos(theta / 2), s = std::sin(theta / 2);
    const Matrix::value_type e_phi = phase_factor(phi), e_lambda = phase_factor(lambda);
    return Matrix(2, {c, -e_lambda * s, e_phi * s, e_phi * e_lambda * c});
}

Matrix swap() {
    return Matrix(4, {1.0, 0.0, 0.0, 0.0,  //
                      0.0, 0.0, 1.0, 0.0,  //
                      0.0, 1.0, 0.0, 0.0,  //
                      0.0, 0.0, 0.0, 1.0});
}

}  // namespace gates
}  // namespace qmarg
