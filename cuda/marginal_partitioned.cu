// MarginalStrategy::Partitioned (seed A): every block of the one-thread-per-
// amplitude grid owns a partition of 2^k bins in global memory; its threads add
// into their own block's partition with atomics (the seed's pseudo-code writes
// outs[outInd], i.e. partition 0, where it means the block's partition), and a
// second kernel sums the partitions bin by bin into the output, one thread per
// bin. The partitions are a scoped DeviceArray: freed on every path out.
//
// Memory: blocks x 2^k doubles = 2^(n+k-4) bytes; cuda/marginal.cu has checked
// that against free device memory before this runs.
#include <cuda_runtime.h>

#include "check.cuh"
#include "device_array.cuh"
#include "marginal_common.cuh"
#include "marginal_plan.cuh"

namespace qmarg {
namespace gpu {
namespace {

template <class Amp>
__global__ void __launch_bounds__(kMarginalThreadsPerBlock)
    marginal_partition_kernel(const Amp* __restrict__ amps, Index size, const __grid_constant__ QubitList qubits,
                              double* __restrict__ partitions) {
    double* const own = partitions + (static_cast<Index>(blockIdx.x) << qubits.count);
    const Index stride = grid_thread_count();
    for (Index i = global_thread_index(); i < size; i += stride) {
        atomicAdd(&own[marginal_bin(i, qubits)], probability(amps[i]));
    }
}

// out[b] = sum over partitions p of partitions[p * num_bins + b], in partition
// order. Neighbouring threads read neighbouring bins of one partition, so each
// step of the loop is a coalesced load; unrolling lets a thread keep several of
// those loads in flight.
__global__ void __launch_bounds__(kMarginalThreadsPerBlock)
    marginal_reduce_partitions_kernel(const double* __restrict__ partitions, Index num_bins, unsigned num_partitions,
                                      double* __restrict__ out) {
    const Index stride = grid_thread_count();
    for (Index b = global_thread_index(); b < num_bins; b += stride) {
        double total = 0;
#pragma unroll 8
        for (unsigned p = 0; p < num_partitions; ++p) total += partitions[static_cast<Index>(p) * num_bins + b];
        out[b] = total;
    }
}

}  // namespace

template <class Real>
void marginal_probabilities_partitioned(const std::complex<Real>* amps, int num_qubits, const QubitList& qubits,
                                        double* out, unsigned max_grid_blocks) {
    const Index size = Index{1} << num_qubits;
    const Index num_bins = Index{1} << qubits.count;
    const unsigned blocks = one_thread_per_item_blocks(size, max_grid_blocks);
    DeviceArray<double> partitions(static_cast<std::size_t>(blocks) * num_bins, "Partitioned marginal partitions");
    QMARG_CUDA_CHECK(cudaMemsetAsync(partitions.data(), 0, partitions.size() * sizeof(double), 0));

    marginal_partition_kernel<<<blocks, kMarginalThreadsPerBlock>>>(as_device(amps), size, qubits, partitions.data());
    QMARG_CHECK_LAUNCH(marginal_partition_kernel);

    marginal_reduce_partitions_kernel<<<one_thread_per_item_blocks(num_bins, max_grid_blocks),
                                        kMarginalThreadsPerBlock>>>(partitions.data(), num_bins, blocks, out);
    QMARG_CHECK_LAUNCH(marginal_reduce_partitions_kernel);
    // Leaving the scope frees the partitions; cudaFree waits for the kernels above.
}

template void marginal_probabilities_partitioned<float>(const std::complex<float>*, int, const QubitList&, double*,
                                                        unsigned);
template void marginal_probabilities_partitioned<double>(const std::complex<double>*, int, const QubitList&, double*,
                                                         unsigned);

}  // namespace gpu
}  // namespace qmarg
