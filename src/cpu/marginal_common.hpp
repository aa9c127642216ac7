// What the CPU marginal code (cpu/marginal.cpp: plain and conditional
// marginals; cpu/marginal_queries.cpp: lists and outcome probabilities)
// shares: |a|^2 formed in double whatever the state's precision, and qubit
// lists in ascending order for insert_zero_bits.
#pragma once

#include <algorithm>
#include <complex>

#include "qmarg/types.hpp"

namespace qmarg {
namespace cpu {

template <class Real>
double probability(const std::complex<Real>& amp) {
    const double re = amp.real();
    const double im = amp.imag();
    return re * re + im * im;
}

inline Qubits sorted(Qubits qubits) {
    std::sort(qubits.begin(), qubits.end());
    return qubits;
}

}  // namespace cpu
}  // namespace qmarg
