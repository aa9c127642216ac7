// The Auto rule for marginal probabilities and the footprint of each strategy.
// Everything here except query_marginal_device_limits is a pure function, so
// the planner can be reasoned about (and re-derived) apart from the kernels.
#include <cuda_runtime.h>

#include <cmath>

#include "check.cuh"
#include "marginal_common.cuh"
#include "marginal_plan.cuh"

namespace qmarg {
namespace gpu {

MarginalDeviceLimits query_marginal_device_limits() {
    int device = 0;
    QMARG_CUDA_CHECK(cudaGetDevice(&device));
    int shared_optin = 0, multiprocessors = 0, threads_per_sm = 0, max_grid_x = 0;
    QMARG_CUDA_CHECK(cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    QMARG_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
    QMARG_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    QMARG_CUDA_CHECK(cudaDeviceGetAttribute(&max_grid_x, cudaDevAttrMaxGridDimX, device));
    MarginalDeviceLimits limits;
    limits.shared_bytes_per_block = static_cast<std::size_t>(shared_optin);
    limits.resident_threads = static_cast<Index>(multiprocessors) * static_cast<Index>(threads_per_sm);
    limits.max_grid_blocks = static_cast<unsigned>(max_grid_x);
    return limits;
}

std::size_t shared_privatized_bytes(int k) { return (std::size_t{1} << k) * sizeof(double); }

int shared_privatized_max_qubits(std::size_t shared_bytes_per_block) {
    int k = 0;
    while (k + 1 <= kMaxMarginalQubits && shared_privatized_bytes(k + 1) <= shared_bytes_per_block) ++k;
    return k;
}

unsigned partitioned_partitions(int num_qubits, unsigned max_grid_blocks) {
    return one_thread_per_item_blocks(Index{1} << num_qubits, max_grid_blocks);
}

long double partitioned_bytes(int num_qubits, int k, unsigned max_grid_blocks) {
    return std::ldexp(static_cast<long double>(partitioned_partitions(num_qubits, max_grid_blocks)), k) *
           sizeof(double);
}

int partitioned_max_qubits(int num_qubits, unsigned max_grid_blocks, std::size_t free_bytes) {
    int k = 0;
    while (k + 1 <= num_qubits && partitioned_bytes(num_qubits, k + 1, max_grid_blocks) <= free_bytes) ++k;
    return k;
}

int live_bins_log2(const Qubits& qubits, Index resident_threads) {
    int window_log2 = 0;
    while (window_log2 < 63 && (Index{2} << window_log2) <= resident_threads) ++window_log2;
    int live = 0;
    for (int q : qubits) live += q < window_log2 ? 1 : 0;
    return live;
}

// The Auto rule, from the seed strategies measured on an H100 80GB HBM3 with a
// double-complex state of n = 30 qubits (DESIGN.md; GB/s of state read, the
// read roofline is 3100):
//
//                      k=1 low  k=1 high  k=5 low  k=5 high  k=10 low  k=10 high  k=15 low  k=20 high
//   GlobalAtomic (B)      18        9        55        9        874        9        2396       133
//   SharedPriv.  (C)     664      357       219      356        874      313        n/a        n/a
//   Partitioned  (A)      42       41        39       38        n/a      n/a        n/a        n/a
//
// GlobalAtomic is limited by atomics that collide on one address. What decides
// that is not k but how many distinct bins the amplitudes resident at one time
// (132 SMs x 2048 threads ~ 2^18 consecutive indices) touch: 2^(number of the
// qubits below 18). Read that way the row is one curve: 1 live bin -> 9 GB/s
// (every "high" cell), 2 -> 18, 32 -> 55, 256 -> 133 (k=20 high = qubits
// 10..29, eight of them below 18), 1024 -> 874, 32768 -> 2396.
// SharedPrivatized pays a flush of 2^k global atomics per 128-amplitude block
// instead, so it is nearly flat in the layout and falls with k; it beats
// GlobalAtomic in every cell with fewer than 2^10 live bins and ties at 2^10.
// Partitioned is slowest in every cell it runs (and needs the most memory).
//
// Rule:
//   1. live bins >= 2^10 (global_atomic_min_live_bins_log2)  -> GlobalAtomic
//   2. else, if the bins fit in shared memory and k <= 12
//      (shared_privatized_max_k)                              -> SharedPrivatized
//   3. else                                                   -> GlobalAtomic
// The k <= 12 cap is an extrapolation, not a measurement: at k = 10 the flush
// is 8 atomics per amplitude and C still reached 313 GB/s; at k = 14 it is 128,
// which should bring C down to B's level. The measured cells do not pin the
// crossover between k = 10 and 14; the benchmark in bench/marginal_bench.cu
// (GlobalAtomic, SharedPrivatized and Auto side by side) is what re-derives both
// thresholds on our own GPU.
MarginalStrategy plan_marginal(int num_qubits, const Qubits& qubits, const MarginalDeviceLimits& limits,
                               const MarginalPlanPolicy& policy) {
    (void)num_qubits;  // the measured crossovers depend on k and the layout, not on n (n >= 20)
    const int k = static_cast<int>(qubits.size());
    if (live_bins_log2(qubits, limits.resident_threads) >= policy.global_atomic_min_live_bins_log2) {
        return MarginalStrategy::GlobalAtomic;
    }
    if (k <= shared_privatized_max_qubits(limits.shared_bytes_per_block) && k <= policy.shared_privatized_max_k) {
        return MarginalStrategy::SharedPrivatized;
    }
    return MarginalStrategy::GlobalAtomic;
}

}  // namespace gpu
}  // namespace qmarg
