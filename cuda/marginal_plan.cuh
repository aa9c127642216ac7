// The marginal planner: what each strategy needs to run a case, and the rule
// that MarginalStrategy::Auto follows. The rule is a pure function of
// (n, qubits, device limits) so that it can be read, tested and re-derived from
// a benchmark without a GPU in the loop; its thresholds sit in one policy
// struct. The rule itself and the measurements behind it are documented next to
// plan_marginal in cuda/marginal_plan.cu.
#pragma once

#include <cstddef>

#include "qmarg/marginal.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

// What the planner and the limit checks need to know about the current device.
struct MarginalDeviceLimits {
    // Dynamic shared memory one block may opt into (cudaDevAttrMaxSharedMemoryPerBlockOptin).
    std::size_t shared_bytes_per_block = 0;
    // Threads resident at once: multiprocessors x max threads per multiprocessor.
    Index resident_threads = 0;
    // Largest gridDim.x.
    unsigned max_grid_blocks = 0;
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

// The thresholds of the Auto rule (see plan_marginal in cuda/marginal_plan.cu
// for where each number comes from). Change them here when the benchmark says so.
struct MarginalPlanPolicy {
    // GlobalAtomic once the amplitudes in flight at one time spread over at
    // least 2^this many distinct bins (its atomics then rarely collide).
    int global_atomic_min_live_bins_log2 = 10;
    // SharedPrivatized only up to this k: each block adds all 2^k of its bins
    // to the output, 2^k / 128 global atomics per amplitude.
    int shared_privatized_max_k = 12;
};

// log2 of the number of distinct bins among the amplitudes resident at one
// time: the qubits below log2(resident_threads) vary inside that window.
int live_bins_log2(const Qubits& qubits, Index resident_threads);

// The strategy Auto runs for this case. Never Auto, and never a strategy that
// cannot run it: GlobalAtomic runs every case; SharedPrivatized is chosen only
// when its bins fit; Partitioned is never chosen (it lost every measured cell).
MarginalStrategy plan_marginal(int num_qubits, const Qubits& qubits, const MarginalDeviceLimits& limits,
                               const MarginalPlanPolicy& policy = {});

}  // namespace gpu
}  // namespace qmarg
