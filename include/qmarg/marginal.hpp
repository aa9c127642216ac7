// Marginal probabilities over an ordered subset of qubits.
//
// marginal_probabilities(state, qubits) returns 2^k doubles, k = qubits.size():
// entry b is the total probability of the amplitudes whose bit qubits[j] equals
// bit j of b (qubits[0] is the least significant bit of b). Any order of qubits
// is allowed and permutes the output; duplicates, out-of-range qubits and an
// empty list are errors. Probabilities are accumulated in double, also for a
// single-precision state.
#pragma once

#include <vector>

#include "qmarg/device_buffer.hpp"
#include "qmarg/state_vector.hpp"
#include "qmarg/types.hpp"

namespace qmarg {

// How the GPU computes a marginal. The CPU backend has one algorithm
// (per-thread bins merged in a fixed order) and accepts only Auto.
enum class MarginalStrategy {
    // Picks a strategy from (n, k, which qubits); see cuda/marginal_plan.cu.
    Auto,
    // Seed B: one thread per amplitude, one atomicAdd to the output in global
    // memory each. Works for every k. Slow where many threads hit one bin.
    // Not deterministic (atomic order varies between runs).
    GlobalAtomic,
    // Seed C: each block keeps a private copy of all 2^k bins in shared memory,
    // threads add into it with shared atomics, and the block adds its copy to
    // the output with global atomics. Needs 2^k doubles of shared memory per
    // block. Not deterministic.
    SharedPrivatized,
    // Seed A: each block owns a partition of 2^k bins in global memory, threads
    // add into their block's partition with atomics, and a second kernel sums
    // the partitions. Needs (blocks x 2^k) doubles of free device memory.
    // Not deterministic (atomic order within a partition varies).
    Partitioned,
};

const char* to_string(MarginalStrategy strategy);

struct MarginalOptions {
    MarginalStrategy strategy = MarginalStrategy::Auto;
};

template <class Real>
std::vector<double> marginal_probabilities(const StateVector<Real>& state, const Qubits& qubits,
                                           const MarginalOptions& options = {});

// The same, leaving the 2^k results in GPU memory (the state must be on the GPU).
// `out` is resized to 2^k.
template <class Real>
void marginal_probabilities(const StateVector<Real>& state, const Qubits& qubits,
                            DeviceBuffer<double>& out, const MarginalOptions& options = {});

}  // namespace qmarg
