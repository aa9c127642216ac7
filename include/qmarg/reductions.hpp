// Whole-state reductions: norms and inner products, accumulated in double.
#pragma once

#include <complex>

#include "qmarg/state_vector.hpp"

namespace qmarg {

// Sum of |a_i|^2 over all amplitudes (1 for a normalised state).
template <class Real>
double total_probability(const StateVector<Real>& state);

// <a|b> = sum_i conj(a_i) b_i. Both states must have the same number of
// qubits and live on the same device.
template <class Real>
std::complex<double> inner_product(const StateVector<Real>& a, const StateVector<Real>& b);

}  // namespace qmarg
