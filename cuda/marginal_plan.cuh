// The marginal planner: what each strategy needs to run a case, and the rule
// that MarginalStrategy::Auto follows. The rule is a pure function of
// (n, qubits, device limits) so that it can be read, tested and re-derived from
// a benchmark without a GPU in the loop; its thresholds sit in one policy
// struct. The rule itself and the measurements behind it are documented next to
// plan_marginal in cuda/marginal_plan.cu.
#pragma once

#include <cstddef>
#include <cstdint>

#include "qmarg/marginal.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

// What the planner and the limit checks need to know about the current device.
struct MarginalDeviceLimits {
    // Dynamic shared memory one block may opt into (cudaDevAttrMaxSharedMemoryPerBlockOptin).
    std::size_t shared_bytes_per_block = 0;
    // Largest gridDim.x.
    unsigned max_grid_blocks = 0;
    // L2 cache (cudaDevAttrL2CacheSize): state_loads_for weighs the output against it.
    std::uint64_t l2_bytes = 0;
    // One multiprocessor's share of the peak memory bandwidth, bytes per
    // microsecond (0 where the memory clock or bus width is not reported):
    // BinStationaryAtomic's merge rule weighs its blocks against it
    // (MergeDevice in src/marginal_atomic_merge.hpp).
    double multiprocessor_bytes_per_us = 0;
};

// Queries the current device (throws CudaError when that fails).
MarginalDeviceLimits query_marginal_device_limits();

// SharedPrivatized: one copy of the 2^k bins per block in shared memory.
std::size_t shared_privatized_bytes(int k);
// The largest k whose bins fit in `shared_bytes_per_block` (0 when not even k = 1 fits).
int shared_privatized_max_qubits(std::size_t shared_bytes_per_block);

// Partitioned: one global-memory partition of 2^k bins per block of the
// one-thread-per-amplitude grid. Bytes as long double, exact for these
// power-of-two products and free of overflow for any n, k <= 58.
unsigned partitioned_partitions(int num_qubits, unsigned max_grid_blocks);
long double partitioned_bytes(int num_qubits, int k, unsigned max_grid_blocks);
// The largest k whose partitions fit in `free_bytes` (0 when not even k = 1 fits).
int partitioned_max_qubits(int num_qubits, unsigned max_grid_blocks, std::size_t free_bytes);

// The strategy Auto runs for this case: never Auto, and never a strategy that
// cannot run it. The rule and the measurements behind it are in marginal_plan.cu.
MarginalStrategy plan_marginal(int num_qubits, const Qubits& qubits, const MarginalDeviceLimits& limits);

}  // namespace gpu
}  // namespace qmarg
