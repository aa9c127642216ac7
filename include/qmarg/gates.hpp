// Gate application. Every gate is a dense 2^k x 2^k matrix applied to an
// ordered list of target qubits, optionally conditioned on control qubits.
//
// Bit order: targets[0] is the least significant bit of the matrix's row and
// column index, exactly as qubits[0] is the least significant bit of a marginal
// bin. So apply_matrix(s, {a, b}, m) with m = kron(B, A) applies A to qubit a
// and B to qubit b.
#pragma once

#include <vector>

#include "qmarg/matrix.hpp"
#include "qmarg/state_vector.hpp"
#include "qmarg/types.hpp"

namespace qmarg {

// Applies `matrix` to `targets`, on the amplitudes whose control qubits hold
// `control_values` (all 1 when control_values is empty; otherwise one 0/1 value
// per control). Targets and controls must be distinct, in range and non-empty
// for targets; the matrix must be 2^k x 2^k for k targets. A GPU state takes
// at most 10 targets (more is an Error).
//
// Accuracy on a GPU: dense gates that run on FP64 tensor cores (double gates
// on 5 or more targets, and on 4 with a target among the three lowest qubits;
// float gates on 6 or more, and on 5 with a target among the four lowest
// qubits) are computed in double, for float states too, with Gauss's three
// real products per complex one. Their error is rounding of the amplitudes'
// size, like the direct product's; an imaginary part much smaller than the
// terms it sums (a matrix whose imaginary parts are 1e-9 of its real parts,
// on a real state) is therefore exact to about 1e-16 of the amplitudes
// rather than of itself. Float gates on 5 targets none of which is among the
// four lowest qubits use Gauss's form in float arithmetic: such an
// imaginary part is exact to about 1e-7 of the amplitudes (float rounding).
// Other gates multiply directly, in the state's precision.
template <class Real>
void apply_matrix(StateVector<Real>& state, const Qubits& targets, const Matrix& matrix,
                  const Qubits& controls = {}, const std::vector<int>& control_values = {});

// The standard gate matrices (Qiskit's conventions).
namespace gates {
Matrix h();
Matrix x();
Matrix y();
Matrix z();
Matrix s();
Matrix sdg();
Matrix t();
Matrix tdg();
Matrix sx();
Matrix rx(double theta);
Matrix ry(double theta);
Matrix rz(double theta);
Matrix phase(double lambda);
Matrix u3(double theta, double phi, double lambda);
Matrix swap();  // on targets {a, b}
}  // namespace gates

// Named gates, built on apply_matrix.
template <class Real> void h(StateVector<Real>& state, int qubit);
template <class Real> void x(StateVector<Real>& state, int qubit);
template <class Real> void y(StateVector<Real>& state, int qubit);
template <class Real> void z(StateVector<Real>& state, int qubit);
template <class Real> void s(StateVector<Real>& state, int qubit);
template <class Real> void sdg(StateVector<Real>& state, int qubit);
template <class Real> void t(StateVector<Real>& state, int qubit);
template <class Real> void tdg(StateVector<Real>& state, int qubit);
template <class Real> void sx(StateVector<Real>& state, int qubit);
template <class Real> void rx(StateVector<Real>& state, int qubit, double theta);
template <class Real> void ry(StateVector<Real>& state, int qubit, double theta);
template <class Real> void rz(StateVector<Real>& state, int qubit, double theta);
template <class Real> void phase(StateVector<Real>& state, int qubit, double lambda);
template <class Real> void u3(StateVector<Real>& state, int qubit, double theta, double phi, double lambda);
template <class Real> void cx(StateVector<Real>& state, int control, int target);
template <class Real> void cz(StateVector<Real>& state, int control, int target);
template <class Real> void swap(StateVector<Real>& state, int qubit_a, int qubit_b);
template <class Real> void ccx(StateVector<Real>& state, int control_a, int control_b, int target);

}  // namespace qmarg
