// BinStationaryAtomic's rule (src/marginal_bin_stationary_plan.cpp): where it adds
// the bins of a split segment with atomics instead of BinStationary's partial
// rows and second pass. A plain C++ header, so that the tests can ask.
#pragma once

#include "device_bandwidth.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

// How BinStationaryAtomic merges a case's split segments (the rule is
// choose_merge, atomic_merge_pays, whole_segments_pay, partial_rows_pay,
// segments_interleave_finely, small_state_many_parts_merge and
// copies_of_output_pay, next to their definitions).
enum class AtomicMerge {
    // No atomics: no segment is split (or the case takes the transposed
    // path or the small-state kernel), or atomics do not pay on either plan,
    // or few parts split no segment and each of their blocks reads at least
    // 512 KiB, or the state is double with 2^24 to 2^26 amplitudes and the
    // merge would be many parts or copies of the output: in those two cases
    // BinStationary ran faster. It runs exactly what BinStationary runs,
    // with the same bits, unless bin_stationary_atomic_plan_differs (its
    // plan of few parts with the warps side by side).
    None,
    // Atomics on the plan of many parts (more than 2^10 blocks).
    ManyParts,
    // Atomics on the plan of few parts (BinStationary's, or its own where
    // bin_stationary_atomic_plan_differs), where they do not pay on
    // many parts, many parts are at most 2^10 blocks, or (float) many parts
    // would interleave their segments finely; and on states of up to 2^26
    // amplitudes where many parts would meet in too many requests on one KiB
    // of the output and few parts would meet often enough to take copies
    // (the lowest 6 qubits of a float state of 2^24 to 2^26 amplitudes).
    FewParts,
    // Atomics into 8 copies of the output, which a last kernel adds up, on
    // the plan of few parts: where its one segment's parts would meet too
    // often on the output itself, and many parts are at most 2^10 blocks or
    // meet in no more requests than the output itself allows.
    FewPartsIntoCopies,
};

// What the rule asks of the GPU: one multiprocessor's share of the peak
// memory bandwidth, in bytes per microsecond (the memory clock times the bus
// width, over the multiprocessors). 0 where the driver does not report them:
// then the rule is the one measured on an H100, many parts wherever they
// paid there (many_parts_blocks_long_enough has the measurements).
struct MergeDevice {
    double multiprocessor_bytes_per_us = 0;
};
// A GPU's MergeDevice from what its driver reports (src/device_bandwidth.hpp).
constexpr MergeDevice merge_device_of(double memory_clock_mhz, int bus_width_bits, int multiprocessors) {
    return MergeDevice{multiprocessor_bytes_per_us(memory_clock_mhz, bus_width_bits, multiprocessors)};
}
// The current GPU's (cuda/marginal_plan.cu; throws CudaError when it cannot
// be asked).
MergeDevice merge_device();

AtomicMerge bin_stationary_atomic_merge(int num_qubits, const Qubits& qubits, bool single_precision,
                                        const MergeDevice& device);
// Whether BinStationaryAtomic's plan of few parts is not BinStationary's:
// on GPUs whose memory is faster than the H100's, its warps side by side
// on unselected bits where BinStationary's hold selected ones
// (side_by_side_warps_pay). Without atomics (AtomicMerge::None) its bins
// are then the same on every run but not BinStationary's bits.
bool bin_stationary_atomic_plan_differs(int num_qubits, const Qubits& qubits, bool single_precision,
                                        const MergeDevice& device);
// Whether, merging with atomics, each block gathers its bins in shared
// memory first and adds them from consecutive threads (gather_atomics_pay,
// gather_halves_sectors).
bool bin_stationary_atomics_gathered(int num_qubits, const Qubits& qubits, bool single_precision,
                                     const MergeDevice& device);

}  // namespace gpu
}  // namespace qmarg
