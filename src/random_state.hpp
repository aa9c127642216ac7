// The counter-based generator behind StateVector::set_random_state, shared by
// the CPU and GPU backends: amplitude i is a function of (seed, i) alone, so a
// seed gives the same state on either device and for any thread count.
//
// Real and imaginary parts are independent standard normals (Box-Muller on two
// hashed uniforms); normalising such a vector gives a Haar-random pure state.
#pragma once

#include <cmath>
#include <cstdint>

#include "qmarg/bits.hpp"

namespace qmarg {
namespace detail {

// SplitMix64's finaliser: a bijective 64-bit mix with good avalanche.
QMARG_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// A uniform double in (0, 1], never 0 so that log() below stays finite.
QMARG_HOST_DEVICE inline double uniform_open0(std::uint64_t bits) {
    return (static_cast<double>(bits >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

// The unnormalised Gaussian amplitude of index i for `seed`.
QMARG_HOST_DEVICE inline void gaussian_amplitude(std::uint64_t seed, std::uint64_t i, double& re, double& im) {
    const std::uint64_t key = mix64(seed ^ 0x5DEECE66Dull);
    const double u1 = uniform_open0(mix64(key ^ (2 * i)));
    const double u2 = uniform_open0(mix64(key ^ (2 * i + 1)));
    const double radius = sqrt(-2.0 * log(u1));
    const double angle = 6.283185307179586476925 * u2;
    re = radius * cos(angle);
    im = radius * sin(angle);
}

}  // namespace detail
}  // namespace qmarg
