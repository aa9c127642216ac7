// How BinStationary's kernels (the streaming path, cuda/marginal_bin_stationary.cu,
// and the transposed path, cuda/marginal_transpose.cu) load the state, and the
// rule that chooses. A plain C++ header, so that the tests can ask.
#pragma once

#include <cstdint>

namespace qmarg {
namespace gpu {

enum class StateLoads {
    // ld.global: the state's lines take their place in L2 like any others.
    Normal,
    // ld.global.cs (cache streaming): the state's lines are the first that L2
    // evicts, so that the output's lines can stay while the state streams past.
    EvictFirst,
};

// The loads for an n-qubit state of float (single_precision) or double
// amplitudes and a k-qubit marginal on a GPU with `l2_bytes` of L2 (0 when
// unknown: Normal). EvictFirst where the state is at least twice the L2 and
// the output (2^k doubles) at most half of it. It changes no addition, so
// the bins are the same bits either way. The measurements are next to the
// definition (src/marginal_state_loads.cpp).
StateLoads state_loads_for(int num_qubits, int k, bool single_precision, std::uint64_t l2_bytes);

// state_loads_for on the current device's L2 (cuda/marginal_plan.cu; throws
// CudaError when the device cannot be asked).
StateLoads state_loads_for_device(int num_qubits, int k, bool single_precision);

}  // namespace gpu
}  // namespace qmarg
