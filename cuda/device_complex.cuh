// Complex amplitudes as the kernels see them: CUDA's float2 / double2 (the
// same bytes as std::complex<Real>, interleaved re, im), shared by every
// kernel file, and the few complex operations the gate kernels need, written with explicit fused multiply-adds
// so that every kernel rounds the same way.
#pragma once

#include <cuda_runtime.h>

#include <complex>

namespace qmarg {
namespace gpu {

template <class Real>
struct DeviceComplexOf;
template <>
struct DeviceComplexOf<float> {
    using type = float2;
};
template <>
struct DeviceComplexOf<double> {
    using type = double2;
};
template <class Real>
using DeviceComplex = typename DeviceComplexOf<Real>::type;

// Two neighbouring amplitudes (index bit 0 = 0, 1) in one load, interleaved
// re, im, re, im: 16 bytes (float) or 32 bytes (double, 32-byte aligned), the
// widest loads sm_90 issues. The streaming marginal kernels read whole states
// this way (a state's storage is 256-byte aligned and holds 2^n >= 2 amplitudes).
template <class Real>
struct AmpPairOf;
template <>
struct AmpPairOf<float> {
    using type = float4;
};
template <>
struct AmpPairOf<double> {
    using type = double4_32a;
};
template <class Real>
using AmpPair = typename AmpPairOf<Real>::type;

// std::complex<Real> and DeviceComplex<Real> share their layout (an array of
// two Real), so device pointers to amplitudes are reinterpreted, never copied.
template <class Real>
DeviceComplex<Real>* as_device(std::complex<Real>* amps) {
    static_assert(sizeof(DeviceComplex<Real>) == sizeof(std::complex<Real>), "complex layouts differ");
    return reinterpret_cast<DeviceComplex<Real>*>(amps);
}
template <class Real>
const DeviceComplex<Real>* as_device(const std::complex<Real>* amps) {
    static_assert(sizeof(DeviceComplex<Real>) == sizeof(std::complex<Real>), "complex layouts differ");
    return reinterpret_cast<const DeviceComplex<Real>*>(amps);
}

template <class Real>
__host__ __device__ inline DeviceComplex<Real> make_device_complex(Real re, Real im) {
    DeviceComplex<Real> out;
    out.x = re;
    out.y = im;
    return out;
}

// acc + a * b with four fused multiply-adds.
__device__ __forceinline__ double2 complex_fma(double2 a, double2 b, double2 acc) {
    acc.x = fma(a.x, b.x, acc.x);
    acc.x = fma(-a.y, b.y, acc.x);
    acc.y = fma(a.x, b.y, acc.y);
    acc.y = fma(a.y, b.x, acc.y);
    return acc;
}
__device__ __forceinline__ float2 complex_fma(float2 a, float2 b, float2 acc) {
    acc.x = fmaf(a.x, b.x, acc.x);
    acc.x = fmaf(-a.y, b.y, acc.x);
    acc.y = fmaf(a.x, b.y, acc.y);
    acc.y = fmaf(a.y, b.x, acc.y);
    return acc;
}

template <class C>
__device__ __forceinline__ C complex_mul(C a, C b) {
    C zero;
    zero.x = 0;
    zero.y = 0;
    return complex_fma(a, b, zero);
}

}  // namespace gpu
}  // namespace qmarg
