// Pieces shared by the marginal-probability strategies (cuda/marginal_*.cu):
// the qubit list as a kernel argument, an amplitude's bin and probability, the
// one-thread-per-amplitude launch shape, and the per-strategy launchers that
// cuda/marginal.cu dispatches to.
//
// The qubit list travels to the kernels by value, as a __grid_constant__
// parameter: no device allocation, no copy before the launch, and indexing it
// with a runtime j reads the parameter bank directly instead of spilling a
// per-thread copy to local memory.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "device_complex.cuh"
#include "launch.cuh"
#include "marginal_fixed_bits.hpp"
#include "marginal_state_loads.hpp"
#include "qmarg/bits.hpp"
#include "qmarg/error.hpp"
#include "qmarg/state_vector.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

// The seed strategies' block size. They are the baselines users compare
// against, so they keep the seed's launch shape: one thread per amplitude,
// 128 threads per block.
constexpr int kMarginalThreadsPerBlock = 128;

// The longest qubit list a state can have (every qubit of the largest state).
constexpr int kMaxMarginalQubits = StateVector<double>::kMaxQubits;

// The ordered qubit list of a marginal, small enough to pass by value
// (4 + 4 * 58 bytes, far below the kernel-parameter limit).
struct QubitList {
    int count = 0;
    int qubits[kMaxMarginalQubits] = {};
};

inline QubitList make_qubit_list(const Qubits& qubits) {
    if (qubits.size() > static_cast<std::size_t>(kMaxMarginalQubits)) {
        throw Error("marginal qubit list has " + std::to_string(qubits.size()) + " qubits: at most " +
                    std::to_string(kMaxMarginalQubits));
    }
    QubitList list;
    list.count = static_cast<int>(qubits.size());
    std::copy(qubits.begin(), qubits.end(), list.qubits);
    return list;
}

// |a|^2 in double, also for a single-precision amplitude (DESIGN.md: probabilities
// accumulate in double).
__device__ __forceinline__ double probability(double2 a) { return a.x * a.x + a.y * a.y; }
__device__ __forceinline__ double probability(float2 a) {
    const double re = a.x, im = a.y;
    return re * re + im * im;
}

// A pair of amplitudes (AmpPair) loaded cache-streaming (__ldcs,
// ld.global.cs): L2 evicts its lines first. A double pair is 32 bytes, two
// 16-byte loads on sm_90 (as a plain load of it is).
__device__ __forceinline__ float4 load_pair_evict_first(const float4* p) { return __ldcs(p); }
__device__ __forceinline__ double4_32a load_pair_evict_first(const double4_32a* p) {
    const auto* halves = reinterpret_cast<const double2*>(p);
    const double2 low = __ldcs(halves), high = __ldcs(halves + 1);
    double4_32a v;
    v.x = low.x;
    v.y = low.y;
    v.z = high.x;
    v.w = high.y;
    return v;
}

// One load of a pair of amplitudes by BinStationary's kernels, as
// state_loads_for chose (marginal_state_loads.hpp).
template <StateLoads kLoads, class Pair>
__device__ __forceinline__ Pair load_pair(const Pair* p) {
    if constexpr (kLoads == StateLoads::EvictFirst) {
        return load_pair_evict_first(p);
    } else {
        return *p;
    }
}

// Calls f with std::integral_constant<StateLoads, loads>, so that a launcher
// picks the kernel instantiation for a runtime choice of loads in one place.
template <class F>
void with_state_loads(StateLoads loads, F&& f) {
    if (loads == StateLoads::EvictFirst) {
        f(std::integral_constant<StateLoads, StateLoads::EvictFirst>{});
    } else {
        f(std::integral_constant<StateLoads, StateLoads::Normal>{});
    }
}

// The output bin of amplitude `index`: the same gather_bits the CPU backend uses.
__device__ __forceinline__ Index marginal_bin(Index index, const QubitList& qubits) {
    return gather_bits(index, qubits.qubits, qubits.count);
}

// Blocks for one thread per item, as the seed launches. Past the device's grid
// limit (2^31 - 1 blocks, i.e. states beyond 2^38 amplitudes) the grid is
// capped and the kernels' grid-stride loops give a thread several items, so no
// size is ever left half done.
inline unsigned one_thread_per_item_blocks(Index items, unsigned max_grid_blocks) {
    const Index needed = (items + kMarginalThreadsPerBlock - 1) / kMarginalThreadsPerBlock;
    return static_cast<unsigned>(std::max<Index>(1, std::min<Index>(needed, max_grid_blocks)));
}

// The strategy launchers. `out` holds 2^k doubles on the device. Their limits
// are checked by cuda/marginal.cu before they are called; GlobalAtomic and
// SharedPrivatized add into `out`, which the caller has zeroed, and Partitioned
// writes every bin.
template <class Real>
void marginal_probabilities_global_atomic(const std::complex<Real>* amps, int num_qubits, const QubitList& qubits,
                                          double* out, unsigned max_grid_blocks);
template <class Real>
void marginal_probabilities_shared(const std::complex<Real>* amps, int num_qubits, const QubitList& qubits, double* out,
                                   unsigned max_grid_blocks);
// BinStationary (cuda/marginal_bin_stationary.cu) writes every bin, runs every
// case and plans its launch from the qubit list itself. It takes one of two
// paths: the transposed one (cuda/marginal_transpose.cu) where
// takes_transposed_path says so (k >= n - 4, n >= 11, and the measured rule
// next to it), the streaming one elsewhere. Both are callable alone
// (marginal_transpose_plan.hpp declares them), so that the benchmark and the
// tests can set them side by side; the streaming path runs every case, the
// transposed one only its own.
template <class Real>
void marginal_probabilities_bin_stationary(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                           double* out);
// BinStationaryAtomic: the same paths, but where blocks share a segment of the
// state they add their bins into `out` with atomics (it zeroes `out` itself).
template <class Real>
void marginal_probabilities_bin_stationary_atomic(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                                  double* out);
// BinStationary over only the amplitudes whose index bits fixed.mask hold
// fixed.values (a conditional marginal, cuda/marginal_conditional.cu): both
// paths plan the compact state of those amplitudes (marginal_fixed_bits.hpp),
// so a call reads 2^(n - m) amplitudes and its bins repeat bitwise. `qubits`
// are full-state positions. Throws qmarg::Error where check_fixed_bits does
// (bit 0 fixed, a listed qubit fixed).
template <class Real>
void conditional_marginal_bin_stationary(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                         const FixedBits& fixed, double* out);
template <class Real>
void marginal_probabilities_partitioned(const std::complex<Real>* amps, int num_qubits, const QubitList& qubits,
                                        double* out, unsigned max_grid_blocks);

}  // namespace gpu
}  // namespace qmarg
