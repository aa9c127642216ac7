// MarginalStrategy::GlobalAtomic (seed B): one thread per amplitude, each adds
// its probability straight into the output bin in global memory with one
// atomicAdd. No temporaries and no limit beyond the 2^k output itself; the cost
// is contention: every amplitude in flight that maps to the same bin queues on
// the same address (see cuda/marginal_plan.cu for what that costs).
#include <cuda_runtime.h>

#include "check.cuh"
#include "marginal_common.cuh"

namespace qmarg {
namespace gpu {
namespace {

// The grid-stride loop runs once per thread unless the grid had to be capped
// (one_thread_per_item_blocks).
template <class Amp>
__global__ void __launch_bounds__(kMarginalThreadsPerBlock)
    marginal_global_atomic_kernel(const Amp* __restrict__ amps, Index size, const __grid_constant__ QubitList qubits,
                                  double* __restrict__ out) {
    const Index stride = grid_thread_count();
    for (Index i = global_thread_index(); i < size; i += stride) {
        atomicAdd(&out[marginal_bin(i, qubits)], probability(amps[i]));
    }
}

}  // namespace

template <class Real>
void marginal_probabilities_global_atomic(const std::complex<Real>* amps, int num_qubits, const QubitList& qubits,
                                          double* out, unsigned max_grid_blocks) {
    const Index size = Index{1} << num_qubits;
    const unsigned blocks = one_thread_per_item_blocks(size, max_grid_blocks);
    marginal_global_atomic_kernel<<<blocks, kMarginalThreadsPerBlock>>>(as_device(amps), size, qubits, out);
    QMARG_CHECK_LAUNCH(marginal_global_atomic_kernel);
}

template void marginal_probabilities_global_atomic<float>(const std::complex<float>*, int, const QubitList&, double*,
                                                          unsigned);
template void marginal_probabilities_global_atomic<double>(const std::complex<double>*, int, const QubitList&, double*,
                                                           unsigned);

}  // namespace gpu
}  // namespace qmarg
