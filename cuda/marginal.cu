// gpu::marginal_probabilities: resolves Auto through the planner, checks that
// the chosen strategy can run this case (throwing an Error that says why not
// and what would fit), zeroes the output where the strategy adds into it, and
// runs the strategy's kernels (cuda/marginal_global_atomic.cu,
// cuda/marginal_shared.cu, cuda/marginal_partitioned.cu,
// cuda/marginal_bin_stationary.cu for BinStationary and BinStationaryAtomic).
//
// The input was validated by the dispatch in src/marginal.cpp (qubits distinct
// and in range, 1 <= k <= n); what is checked here is what only the device can
// say: shared memory per block and free device memory.
//
// The work is queued on the default stream and not waited for: an asynchronous
// fault surfaces at the next checked call (copying the result to the host
// synchronises), or at the launch itself with QMARG_SYNC_AFTER_LAUNCH.
#include <cuda_runtime.h>

#include <complex>
#include <string>

#include "backend/gpu.hpp"
#include "check.cuh"
#include "format.hpp"
#include "marginal_common.cuh"
#include "marginal_plan.cuh"

namespace qmarg {
namespace gpu {
namespace {

void check_shared_privatized_fits(int k, const MarginalDeviceLimits& limits) {
    const std::size_t needed = shared_privatized_bytes(k);
    if (needed <= limits.shared_bytes_per_block) return;
    throw Error("SharedPrivatized needs 2^" + std::to_string(k) + " bins = " + detail::human_bytes(needed) +
                " of shared memory per block but this GPU allows " +
                detail::human_bytes(limits.shared_bytes_per_block) + ": at most " +
                std::to_string(shared_privatized_max_qubits(limits.shared_bytes_per_block)) + " qubits");
}

void check_partitioned_fits(int num_qubits, int k, const MarginalDeviceLimits& limits) {
    const long double needed = partitioned_bytes(num_qubits, k, limits.max_grid_blocks);
    const std::size_t free_bytes = free_memory();
    if (needed <= static_cast<long double>(free_bytes)) return;
    const int fits = partitioned_max_qubits(num_qubits, limits.max_grid_blocks, free_bytes);
    throw Error("Partitioned needs " + std::to_string(partitioned_partitions(num_qubits, limits.max_grid_blocks)) +
                " partitions of 2^" + std::to_string(k) + " bins = " + detail::human_bytes(needed) +
                " of device memory but " + detail::human_bytes(free_bytes) + " is free: " +
                (fits > 0 ? "at most " + std::to_string(fits) + " qubits" : std::string("not even 1 qubit")) +
                " for a " + std::to_string(num_qubits) + "-qubit state");
}

void zero_bins(double* out, int k) {
    QMARG_CUDA_CHECK(cudaMemsetAsync(out, 0, (std::size_t{1} << k) * sizeof(double), 0));
}

}  // namespace

template <class Real>
void marginal_probabilities(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits, double* out,
                            MarginalStrategy strategy) {
    const QubitList list = make_qubit_list(qubits);
    const int k = list.count;
    const MarginalDeviceLimits limits = query_marginal_device_limits();
    if (strategy == MarginalStrategy::Auto) strategy = plan_marginal(num_qubits, qubits, limits);

    switch (strategy) {
        case MarginalStrategy::GlobalAtomic:
            zero_bins(out, k);
            marginal_probabilities_global_atomic(amps, num_qubits, list, out, limits.max_grid_blocks);
            return;
        case MarginalStrategy::SharedPrivatized:
            check_shared_privatized_fits(k, limits);
            zero_bins(out, k);
            marginal_probabilities_shared(amps, num_qubits, list, out, limits.max_grid_blocks);
            return;
        case MarginalStrategy::Partitioned:
            check_partitioned_fits(num_qubits, k, limits);
            marginal_probabilities_partitioned(amps, num_qubits, list, out, limits.max_grid_blocks);
            return;
        case MarginalStrategy::BinStationary:
            marginal_probabilities_bin_stationary(amps, num_qubits, qubits, out);
            return;
        case MarginalStrategy::BinStationaryAtomic:
            marginal_probabilities_bin_stationary_atomic(amps, num_qubits, qubits, out);
            return;
        case MarginalStrategy::Auto: break;
    }
    throw Error("marginal strategy " + std::to_string(static_cast<int>(strategy)) + " (" + to_string(strategy) +
                ") is not implemented by the GPU backend");
}

template void marginal_probabilities<float>(const std::complex<float>*, int, const Qubits&, double*, MarginalStrategy);
template void marginal_probabilities<double>(const std::complex<double>*, int, const Qubits&, double*,
                                             MarginalStrategy);

}  // namespace gpu
}  // namespace qmarg
