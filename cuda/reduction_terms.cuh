// The terms that total_probability, inner_product and expectation_z add up:
// Ops for the tree reduction in reduce.cuh (the Op contract is described there).
// They live in a header so that the benchmark times exactly the library's kernel.
//
// Amplitudes are read as 16-byte vectors, the widest load sm_90 issues: one
// double-precision amplitude (double2) or two single-precision ones (float4)
// per load. Each product is formed in double, so a single-precision state is
// summed as accurately as a double-precision one.
#pragma once

#include <cuda_runtime.h>

#include <complex>
#include <cstdint>
#include <string>

#include "qmarg/bits.hpp"
#include "qmarg/error.hpp"
#include "qmarg/types.hpp"
#include "reduce.cuh"

namespace qmarg {
namespace gpu {

// One 16-byte load of amplitudes of precision Real.
template <class Real>
struct AmpPack;
template <>
struct AmpPack<double> {
    using type = double2;
    static constexpr int kAmps = 1;
    __device__ static void get(const double2& v, int, double& re, double& im) {
        re = v.x;
        im = v.y;
    }
};
template <>
struct AmpPack<float> {
    using type = float4;
    static constexpr int kAmps = 2;
    __device__ static void get(const float4& v, int j, double& re, double& im) {
        re = j == 0 ? v.x : v.z;
        im = j == 0 ? v.y : v.w;
    }
};

// The amplitudes as 16-byte packs. StateVector storage comes from cudaMalloc
// (256-byte aligned) and holds 2^n >= 2 amplitudes, so a state always passes;
// the check guards any other caller of the backend.
template <class Real>
const typename AmpPack<Real>::type* as_packs(const std::complex<Real>* amps, Index size, const char* operation) {
    if (reinterpret_cast<std::uintptr_t>(amps) % 16 != 0 || size % AmpPack<Real>::kAmps != 0) {
        throw Error(std::string(operation) + ": the GPU reduction reads amplitudes 16 bytes at a time and needs " +
                    "16-byte aligned storage holding a multiple of " + std::to_string(AmpPack<Real>::kAmps) +
                    " amplitudes (got " + std::to_string(size) + ")");
    }
    return reinterpret_cast<const typename AmpPack<Real>::type*>(amps);
}

// Number of packs in `size` amplitudes (the items of the reduction).
template <class Real>
Index pack_count(Index size) {
    return size / AmpPack<Real>::kAmps;
}

// |a|^2 in double. The fma keeps the double-state product exact before the
// one rounding; for a single-precision state both products are exact anyway.
__device__ inline double abs2(double re, double im) { return fma(re, re, im * im); }

// sum |a_i|^2.
template <class Real>
struct TotalProbabilityTerm {
    using Pack = AmpPack<Real>;
    using Acc = double;
    using Item = typename Pack::type;
    const Item* amps;

    __device__ Item load(Index i) const { return __ldg(amps + i); }
    __device__ Acc term(const Item& v, Index) const {
        double re, im;
        Pack::get(v, 0, re, im);
        double sum = abs2(re, im);
#pragma unroll
        for (int j = 1; j < Pack::kAmps; ++j) {
            Pack::get(v, j, re, im);
            sum += abs2(re, im);
        }
        return sum;
    }
};

// sum |a_i|^2 (-1)^parity(i & mask): <psi| prod_{q in mask} Z_q |psi>.
template <class Real>
struct ExpectationZTerm {
    using Pack = AmpPack<Real>;
    using Acc = double;
    using Item = typename Pack::type;
    const Item* amps;
    std::uint64_t mask;

    __device__ Item load(Index i) const { return __ldg(amps + i); }
    __device__ Acc term(const Item& v, Index i) const {
        double sum = signed_abs2(v, i, 0);
#pragma unroll
        for (int j = 1; j < Pack::kAmps; ++j) sum += signed_abs2(v, i, j);
        return sum;
    }
    __device__ double signed_abs2(const Item& v, Index i, int j) const {
        double re, im;
        Pack::get(v, j, re, im);
        const double p = abs2(re, im);
        return parity((i * Pack::kAmps + j) & mask) ? -p : p;
    }
};

// sum conj(a_i) b_i. The imaginary part uses products rounded on their own
// (no fma contraction), so that <a|a> has an imaginary part of exactly 0.
template <class Real>
struct InnerProductTerm {
    using Pack = AmpPack<Real>;
    using Acc = ComplexSum;
    struct Item {
        typename Pack::type a;
        typename Pack::type b;
    };
    const typename Pack::type* a;
    const typename Pack::type* b;

    __device__ Item load(Index i) const { return {__ldg(a + i), __ldg(b + i)}; }
    __device__ Acc term(const Item& v, Index) const {
        ComplexSum sum = conj_times(v, 0);
#pragma unroll
        for (int j = 1; j < Pack::kAmps; ++j) sum = sum + conj_times(v, j);
        return sum;
    }
    __device__ static ComplexSum conj_times(const Item& v, int j) {
        double ar, ai, br, bi;
        Pack::get(v.a, j, ar, ai);
        Pack::get(v.b, j, br, bi);
        return {fma(ar, br, ai * bi), __dmul_rn(ar, bi) - __dmul_rn(ai, br)};
    }
};

}  // namespace gpu
}  // namespace qmarg
