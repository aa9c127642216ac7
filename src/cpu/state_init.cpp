// CPU initialisers for StateVector. The random state uses the generator shared
// with the GPU (src/random_state.hpp) and normalises with the backend's
// fixed-order tree (src/cpu/tree_reduce.hpp), so a seed gives the same bits for
// any OpenMP thread count.
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include <omp.h>

#include "backend/cpu.hpp"
#include "cpu/tree_reduce.hpp"
#include "random_state.hpp"

namespace qmarg {
namespace cpu {

template <class Real>
void set_zero_state(std::complex<Real>* amps, Index size) {
    set_basis_state(amps, size, 0);
}

template <class Real>
void set_basis_state(std::complex<Real>* amps, Index size, Index index) {
    const auto n = static_cast<std::int64_t>(size);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) amps[i] = std::complex<Real>(0, 0);
    amps[index] = std::complex<Real>(1, 0);
}

template <class Real>
void set_uniform_superposition(std::complex<Real>* amps, Index size) {
    const auto n = static_cast<std::int64_t>(size);
    const Real value = static_cast<Real>(1.0 / std::sqrt(static_cast<double>(size)));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) amps[i] = std::complex<Real>(value, 0);
}

template <class Real>
void set_random_state(std::complex<Real>* amps, Index size, std::uint64_t seed) {
    // The norm as a fixed-order tree: independent of the thread count.
    const auto n = static_cast<std::int64_t>(size);
    const double norm2 = tree_reduce<double>(size, [seed](Index begin, Index end) {
        double sum = 0;
        for (Index i = begin; i < end; ++i) {
            double re, im;
            detail::gaussian_amplitude(seed, i, re, im);
            sum += re * re + im * im;
        }
        return sum;
    });
    const double scale = 1.0 / std::sqrt(norm2);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        double re, im;
        detail::gaussian_amplitude(seed, static_cast<std::uint64_t>(i), re, im);
        amps[i] = std::complex<Real>(static_cast<Real>(re * scale), static_cast<Real>(im * scale));
    }
}

#define QMARG_INSTANTIATE(Real)                                                        \
    template void set_zero_state<Real>(std::complex<Real>*, Index);                    \
    template void set_basis_state<Real>(std::complex<Real>*, Index, Index);            \
    template void set_uniform_superposition<Real>(std::complex<Real>*, Index);         \
    template void set_random_state<Real>(std::complex<Real>*, Index, std::uint64_t);
QMARG_INSTANTIATE(float)
QMARG_INSTANTIATE(double)
#undef QMARG_INSTANTIATE

}  // namespace cpu
}  // namespace qmarg
