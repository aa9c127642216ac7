// CPU whole-state reductions, as fixed-order trees (src/cpu/tree_reduce.hpp).
#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "backend/cpu.hpp"
#include "cpu/tree_reduce.hpp"

namespace qmarg {
namespace cpu {

template <class Real>
double total_probability(const std::complex<Real>* amps, Index size) {
    return tree_reduce<double>(size, [amps](Index begin, Index end) {
        double sum = 0;
        for (Index i = begin; i < end; ++i) {
            const double re = amps[i].real();
            const double im = amps[i].imag();
            sum += re * re + im * im;
        }
        return sum;
    });
}

template <class Real>
std::complex<double> inner_product(const std::complex<Real>* a, const std::complex<Real>* b, Index size) {
    return tree_reduce<std::complex<double>>(size, [a, b](Index begin, Index end) {
        // conj(a) * b written out, so that no complex<Real> product rounds in Real.
        double re = 0, im = 0;
        for (Index i = begin; i < end; ++i) {
            const double ar = a[i].real(), ai = a[i].imag();
            const double br = b[i].real(), bi = b[i].imag();
            re += ar * br + ai * bi;
            im += ar * bi - ai * br;
        }
        return std::complex<double>(re, im);
    });
}

template double total_probability<float>(const std::complex<float>*, Index);
template double total_probability<double>(const std::complex<double>*, Index);
template std::complex<double> inner_product<float>(const std::complex<float>*, const std::complex<float>*, Index);
template std::complex<double> inner_product<double>(const std::complex<double>*, const std::complex<double>*,
                                                    Index);

}  // namespace cpu
}  // namespace qmarg
