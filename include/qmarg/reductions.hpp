// Whole-state reductions: norms, inner products and Z expectation values,
// accumulated in double (also for a single-precision state).
//
// Determinism. On the GPU each of these is a tree reduction with a fixed
// shape: a grid fixed by the state size and the GPU, each thread adding its
// share of the amplitudes in a fixed order, warps and blocks combined in fixed
// trees, and the per-block partials summed in a fixed order. No floating-point
// atomic is used, so the result carries the same bits on every run with the
// same state on the same GPU model (and the same number of usable
// multiprocessors). Results on another GPU model, or on the CPU, differ from
// it only by rounding (about 1e-15 relative for total_probability). The CPU
// backend sums fixed chunks in order, so its result does not depend on the
// number of threads.
#pragma once

#include <complex>

#include "qmarg/state_vector.hpp"
#include "qmarg/types.hpp"

namespace qmarg {

// Sum of |a_i|^2 over all amplitudes (1 for a normalised state).
template <class Real>
double total_probability(const StateVector<Real>& state);

// <a|b> = sum_i conj(a_i) b_i. Both states must have the same number of
// qubits and live on the same device.
template <class Real>
std::complex<double> inner_product(const StateVector<Real>& a, const StateVector<Real>& b);

// <psi| Z_{q1} Z_{q2} ... Z_{qm} |psi> for qubits = {q1, ..., qm}:
//   sum_i |a_i|^2 (-1)^(number of the listed qubits that are 1 in index i).
// The state is not normalised first (for an unnormalised state this is the
// expectation times the squared norm). The order of `qubits` does not matter;
// the list must be non-empty, in range and free of duplicates (otherwise
// Error, naming the bad qubit).
template <class Real>
double expectation_z(const StateVector<Real>& state, const Qubits& qubits);

}  // namespace qmarg
