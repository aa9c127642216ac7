// |a|^2 of one amplitude, formed in double whatever the state's precision, as
// the CPU marginal code (plain and conditional) adds it up.
#pragma once

#include <complex>

namespace qmarg {
namespace cpu {

template <class Real>
double probability(const std::complex<Real>& amp) {
    const double re = amp.real();
    const double im = amp.imag();
    return re * re + im * im;
}

}  // namespace cpu
}  // namespace qmarg
