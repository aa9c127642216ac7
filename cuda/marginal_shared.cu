// MarginalStrategy::SharedPrivatized (seed C): each block keeps a private copy
// of all 2^k bins in dynamic shared memory; its threads (one per amplitude) add
// into that copy with shared-memory atomics, then the block adds every one of
// its bins to the output with global atomics.
//
// Shared memory is not zeroed between launches (a seed pitfall): the kernel
// zeroes its bins itself on every launch. The bins need 2^k * 8 bytes per block;
// past the default 48 KiB the launcher raises the kernel's dynamic limit up to
// the device's opt-in maximum (cuda/marginal.cu has already checked that the
// bins fit it). The kernel declares no static shared memory, so the whole
// opt-in amount is available to the bins.
#include <cuda_runtime.h>

#include "check.cuh"
#include "marginal_common.cuh"
#include "marginal_plan.cuh"

namespace qmarg {
namespace gpu {
namespace {

// Shared memory a kernel may use without opting in.
constexpr std::size_t kDefaultDynamicSharedBytes = 48 * 1024;

template <class Amp>
__global__ void __launch_bounds__(kMarginalThreadsPerBlock)
    marginal_shared_kernel(const Amp* __restrict__ amps, Index size, const __grid_constant__ QubitList qubits,
                           double* __restrict__ out) {
    extern __shared__ double block_bins[];
    const unsigned num_bins = 1u << qubits.count;  // fits: 2^k doubles fit in shared memory

    for (unsigned b = threadIdx.x; b < num_bins; b += blockDim.x) block_bins[b] = 0;
    __syncthreads();  // every bin is zero before any thread adds to it

    // No early return for threads past the end: all of them must reach the
    // barriers (the seed returns before its __syncthreads).
    const Index stride = grid_thread_count();
    for (Index i = global_thread_index(); i < size; i += stride) {
        atomicAdd(&block_bins[marginal_bin(i, qubits)], probability(amps[i]));
    }
    __syncthreads();  // every shared add is done before the block's bins are read

    for (unsigned b = threadIdx.x; b < num_bins; b += blockDim.x) atomicAdd(&out[b], block_bins[b]);
}

}  // namespace

template <class Real>
void marginal_probabilities_shared(const std::complex<Real>* amps, int num_qubits, const QubitList& qubits, double* out,
                                   unsigned max_grid_blocks) {
    using Amp = DeviceComplex<Real>;
    const Index size = Index{1} << num_qubits;
    const std::size_t shared_bytes = shared_privatized_bytes(qubits.count);
    if (shared_bytes > kDefaultDynamicSharedBytes) {
        QMARG_CUDA_CHECK(cudaFuncSetAttribute(marginal_shared_kernel<Amp>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(shared_bytes)));
    }
    const unsigned blocks = one_thread_per_item_blocks(size, max_grid_blocks);
    marginal_shared_kernel<Amp><<<blocks, kMarginalThreadsPerBlock, shared_bytes>>>(as_device(amps), size, qubits, out);
    QMARG_CHECK_LAUNCH(marginal_shared_kernel);
}

template void marginal_probabilities_shared<float>(const std::complex<float>*, int, const QubitList&, double*,
                                                   unsigned);
template void marginal_probabilities_shared<double>(const std::complex<double>*, int, const QubitList&, double*,
                                                    unsigned);

}  // namespace gpu
}  // namespace qmarg
