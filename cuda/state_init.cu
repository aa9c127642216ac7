// GPU initialisers for StateVector. The random state uses the generator shared
// with the CPU (src/random_state.hpp), so a seed gives the same state on both.
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>

#include "backend/gpu.hpp"
#include "check.cuh"
#include "device_complex.cuh"
#include "launch.cuh"
#include "random_state.hpp"
#include "reduce.cuh"

namespace qmarg {
namespace gpu {
namespace {

constexpr int kThreads = 256;

template <class Real>
__global__ void fill_kernel(DeviceComplex<Real>* amps, Index size, Real re, Real im) {
    const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
    for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < size; i += stride) {
        amps[i] = {re, im};
    }
}

struct GaussianNorm {
    std::uint64_t seed;
    __device__ double operator()(Index i) const {
        double re, im;
        detail::gaussian_amplitude(seed, i, re, im);
        return re * re + im * im;
    }
};

template <class Real>
__global__ void random_fill_kernel(DeviceComplex<Real>* amps, Index size, std::uint64_t seed, double scale) {
    const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
    for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < size; i += stride) {
        double re, im;
        detail::gaussian_amplitude(seed, i, re, im);
        amps[i] = {static_cast<Real>(re * scale), static_cast<Real>(im * scale)};
    }
}


}  // namespace

template <class Real>
void set_zero_state(std::complex<Real>* amps, Index size) {
    set_basis_state(amps, size, 0);
}

template <class Real>
void set_basis_state(std::complex<Real>* amps, Index size, Index index) {
    QMARG_CUDA_CHECK(cudaMemset(amps, 0, size * sizeof(std::complex<Real>)));
    const std::complex<Real> one(1, 0);
    copy_to_device(amps + index, &one, sizeof one);
}

template <class Real>
void set_uniform_superposition(std::complex<Real>* amps, Index size) {
    const Real value = static_cast<Real>(1.0 / sqrt(static_cast<double>(size)));
    fill_kernel<Real><<<grid_stride_blocks(size, kThreads), kThreads>>>(as_device(amps), size, value, Real(0));
    QMARG_CHECK_LAUNCH(fill_kernel);
}

template <class Real>
void set_random_state(std::complex<Real>* amps, Index size, std::uint64_t seed) {
    const double norm2 = deterministic_sum(size, GaussianNorm{seed});
    const double scale = 1.0 / sqrt(norm2);
    random_fill_kernel<Real><<<grid_stride_blocks(size, kThreads), kThreads>>>(as_device(amps), size, seed, scale);
    QMARG_CHECK_LAUNCH(random_fill_kernel);
    QMARG_CUDA_CHECK(cudaDeviceSynchronize());
}

#define QMARG_INSTANTIATE(Real)                                                        \
    template void set_zero_state<Real>(std::complex<Real>*, Index);                    \
    template void set_basis_state<Real>(std::complex<Real>*, Index, Index);            \
    template void set_uniform_superposition<Real>(std::complex<Real>*, Index);         \
    template void set_random_state<Real>(std::complex<Real>*, Index, std::uint64_t);
QMARG_INSTANTIATE(float)
QMARG_INSTANTIATE(double)
#undef QMARG_INSTANTIATE

}  // namespace gpu
}  // namespace qmarg
