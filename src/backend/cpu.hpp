// The CPU reference backend (OpenMP, Eigen for small dense matrices): simple,
// obviously correct, still parallel. Every GPU result is tested against it.
// Inputs arrive validated; pointers are host pointers to 2^n amplitudes.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "qmarg/matrix.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace cpu {

// src/cpu/state_init.cpp
template <class Real> void set_zero_state(std::complex<Real>* amps, Index size);
template <class Real> void set_basis_state(std::complex<Real>* amps, Index size, Index index);
template <class Real> void set_uniform_superposition(std::complex<Real>* amps, Index size);
template <class Real> void set_random_state(std::complex<Real>* amps, Index size, std::uint64_t seed);

}  // namespace cpu
}  // namespace qmarg
