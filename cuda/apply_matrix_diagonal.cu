// Diagonal gates (Z, S, T, Rz, Phase, CZ, or any diagonal matrix, with any
// controls): amplitude i is multiplied by the diagonal entry its target bits
// select. No amplitude depends on another, so threads take amplitudes in plain
// index order (over the non-control bits): a warp reads and writes whole cache
// lines wherever the targets are, and there is no product to compute.
//
// The diagonal (at most 2^10 entries) travels as a kernel parameter and each
// block copies it to shared memory once: neighbouring threads usually select
// different entries, which shared memory serves in parallel where constant
// memory would serialise them.
#include <cuda_runtime.h>

#include "apply_matrix.cuh"
#include "apply_matrix_tile.cuh"
#include "check.cuh"
#include "device_complex.cuh"
#include "qmarg/bits.hpp"

namespace qmarg {
namespace gpu {
namespace {

constexpr int kThreads = 256;
// Amplitudes a thread loads before it uses the first: enough bytes in flight
// per multiprocessor to cover memory latency.
constexpr int kUnroll = 4;

template <class Real>
struct DiagonalEntries {
    DeviceComplex<Real> entry[1 << kMaxGateTargets];
};

template <class Real>
__global__ void __launch_bounds__(kThreads)
    apply_matrix_diagonal_kernel(DeviceComplex<Real>* amps, const __grid_constant__ GateQubits gate,
                                 const __grid_constant__ DiagonalEntries<Real> diagonal, Index count) {
    using C = DeviceComplex<Real>;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    C* entries = reinterpret_cast<C*>(shared_bytes);
    const int dim = 1 << gate.num_targets;
    for (int r = threadIdx.x; r < dim; r += kThreads) entries[r] = diagonal.entry[r];
    __syncthreads();  // every entry is in shared memory before any thread reads one another thread copied

    const Index step = static_cast<Index>(gridDim.x) * kThreads * kUnroll;
    for (Index first = static_cast<Index>(blockIdx.x) * kThreads * kUnroll + threadIdx.x; first < count;
         first += step) {
        Index index[kUnroll];
        C value[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const Index i = first + static_cast<Index>(u) * kThreads;
            index[u] = insert_zero_bits(i, gate.controls_sorted, gate.num_controls) | gate.control_mask;
            if (i < count) value[u] = amps[index[u]];
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            if (first + static_cast<Index>(u) * kThreads < count) {
                const C d = entries[gather_bits(index[u], gate.targets, gate.num_targets)];
                amps[index[u]] = complex_mul(d, value[u]);
            }
        }
    }
}

}  // namespace

template <class Real>
void apply_matrix_diagonal(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    const int dim = matrix.dim();
    DiagonalEntries<Real> diagonal{};
    for (int r = 0; r < dim; ++r) {
        diagonal.entry[r] = make_device_complex<Real>(static_cast<Real>(matrix(r, r).real()),
                                                      static_cast<Real>(matrix(r, r).imag()));
    }
    const Index count = Index{1} << (gate.num_qubits - gate.num_controls);
    const std::size_t shared = static_cast<std::size_t>(dim) * sizeof(DeviceComplex<Real>);
    const auto kernel = apply_matrix_diagonal_kernel<Real>;
    const Index work = (count + kThreads * kUnroll - 1) / (kThreads * kUnroll);
    const unsigned blocks = resident_grid(kernel, kThreads, shared, work);
    kernel<<<blocks, kThreads, shared>>>(as_device(amps), gate, diagonal, count);
    QMARG_CHECK_LAUNCH(apply_matrix_diagonal_kernel);
}

template void apply_matrix_diagonal<float>(std::complex<float>*, const GateQubits&, const Matrix&);
template void apply_matrix_diagonal<double>(std::complex<double>*, const GateQubits&, const Matrix&);

}  // namespace gpu
}  // namespace qmarg
