// The Auto rule for marginal probabilities and the footprint of each strategy.
// Everything here except query_marginal_device_limits is a pure function, so
// the planner can be reasoned about (and re-derived) apart from the kernels.
#include <cuda_runtime.h>

#include <cmath>

#include "check.cuh"
#include "device_attribute.cuh"
#include "marginal_atomic_merge.hpp"
#include "marginal_common.cuh"
#include "marginal_plan.cuh"
#include "marginal_state_loads.hpp"

namespace qmarg {
namespace gpu {

// Every marginal call needs these before its first launch (once_per_device).
MarginalDeviceLimits query_marginal_device_limits() {
    return once_per_device<MarginalDeviceLimits>([](int device) {
        int shared_optin = 0, max_grid_x = 0, l2_bytes = 0;
        QMARG_CUDA_CHECK(cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        QMARG_CUDA_CHECK(cudaDeviceGetAttribute(&max_grid_x, cudaDevAttrMaxGridDimX, device));
        QMARG_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
        MarginalDeviceLimits limits;
        limits.shared_bytes_per_block = static_cast<std::size_t>(shared_optin);
        limits.max_grid_blocks = static_cast<unsigned>(max_grid_x);
        limits.l2_bytes = static_cast<std::uint64_t>(l2_bytes);
        limits.multiprocessor_bytes_per_us = multiprocessor_bytes_per_us_of(device);
        return limits;
    });
}

StateLoads state_loads_for_device(int num_qubits, int k, bool single_precision) {
    return state_loads_for(num_qubits, k, single_precision, query_marginal_device_limits().l2_bytes);
}

MergeDevice merge_device() { return MergeDevice{query_marginal_device_limits().multiprocessor_bytes_per_us}; }

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

// The Auto rule, from bench/marginal_bench.cu on an H100 80GB HBM3 (double
// state, fraction of the read roofline measured in the same run; the full table
// is bench/results/marginal_strategies_H100_double.json):
//
//   n   k   layout        GlobalAtomic  SharedPriv.  Partitioned  BinStationary
//   30  1   low/high          0.006/0.003   0.21/0.11     0.012        1.00/1.00
//   30  10  low/high          0.28/0.003    0.035         -            0.99/1.00
//   30  20  low/descending    0.61/0.26     -             -            0.99/0.98
//   26  15  low/high          0.75/0.03     -             -            0.91/0.99
//   24  15  low               0.72          -             -            0.69
//   20  15  low               0.66          -             -            0.60
//
// BinStationary is the fastest in every cell measured but k = 15 on the lowest
// qubits of the smallest states (n <= 24), where GlobalAtomic was up to 10%
// ahead: there the engine's partial rows were up to 1/8 of the traffic, now
// capped at 1/128 (kLogPartialShare in src/marginal_bin_stationary_plan.cpp).
// It runs every k on every layout and is deterministic.
//
// BinStationaryAtomic runs the same kernels and merges split segments with
// atomics only where its rule (atomic_merge_pays) measured that faster, so it
// is BinStationary or better in every cell; Auto takes it. A deterministic
// request never reaches the planner: src/marginal.cpp sends it to
// BinStationary.
MarginalStrategy plan_marginal(int num_qubits, const Qubits& qubits, const MarginalDeviceLimits& limits) {
    (void)num_qubits;
    (void)qubits;
    (void)limits;
    return MarginalStrategy::BinStationaryAtomic;
}

}  // namespace gpu
}  // namespace qmarg
