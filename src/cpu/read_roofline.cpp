// The CPU's read roofline: every thread sums its static share of the state's
// real and imaginary parts in its own precision, the least work per byte that
// still makes the compiler load every byte. Summing in Real (not double, as the
// reductions do) keeps the float loop as wide as the double one; the sum itself
// is never used for anything but keeping the loads alive.
#include <complex>
#include <cstdint>

#include "backend/cpu.hpp"

namespace qmarg {
namespace cpu {

template <class Real>
double read_roofline(const std::complex<Real>* amps, Index size) {
    const Real* parts = reinterpret_cast<const Real*>(amps);
    const auto count = static_cast<std::int64_t>(2 * size);
    Real sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum)
    for (std::int64_t i = 0; i < count; ++i) sum += parts[i];
    return static_cast<double>(sum);
}

template double read_roofline(const std::complex<float>*, Index);
template double read_roofline(const std::complex<double>*, Index);

}  // namespace cpu
}  // namespace qmarg
