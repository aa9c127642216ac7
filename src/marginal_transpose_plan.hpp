// The index mapping of the transposed marginal path of BinStationary
// (cuda/marginal_transpose.cu), for marginals of k >= n - 4 qubits.
//
// With u = n - k unselected bits the marginal is a bit permutation of |a|^2
// followed by sums over 2^u values; in any order of the qubits but ascending,
// the lowest index bits map to high bin bits, so a thread that writes its own
// bins scatters 8-byte stores over the output. The transposed path stages a
// tile of 2^11 probabilities in shared memory, like a matrix transpose: the
// tile's index bits are the u unselected bits, the lowest index bits (so a warp
// reads contiguous amplitudes) and the bits of qubits[0], qubits[1], ... (so a
// warp writes contiguous bins), taken alternately until there are 11; every
// other index bit is fixed per block by the block id.
//
// Every map the kernel evaluates is linear over GF(2) in the bits of its
// argument (an index bit, a bin bit, a shared-memory slot bit per argument
// bit), so the kernel XORs per-bit images from the plan, splitting each
// argument into a per-thread and a per-step part. The helpers below are those
// maps, written once for the kernel and for the host-side test that emulates
// the kernel's index math (tests/marginal_transpose_plan_test.cpp): both cannot
// disagree about which amplitude lands in which slot and bin.
//
// Plain C++ (no CUDA types): QMARG_HOST_DEVICE makes the helpers callable from
// the kernel when nvcc reads this header.
#pragma once

#include <complex>
#include <cstdint>

#include "marginal_fixed_bits.hpp"
#include "marginal_state_loads.hpp"
#include "qmarg/bits.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

// A tile is 2^11 amplitudes: 16 KiB of staged double probabilities, so
// twelve blocks fit in an H100 multiprocessor's shared memory. Why not 2^12:
// kTransposeBlocksPerSm in cuda/marginal_transpose.cu.
constexpr int kTransposeTileBits = 11;
constexpr int kTransposeThreadBits = 7;  // 128 threads per block
constexpr int kTransposeThreads = 1 << kTransposeThreadBits;
// Vector v of a tile (two amplitudes: tile bit 0) is loaded by thread
// v % 128 in step v / 128; 8 steps.
constexpr int kTransposeLoadSteps = 1 << (kTransposeTileBits - 1 - kTransposeThreadBits);
// The path runs k >= n - kTransposeMaxUnselected (and n >= kTransposeTileBits);
// beyond it the streaming engine writes one bin per 2^u >= 16 amplitudes read
// and its scattered stores cost little. See transpose_applies.
constexpr int kTransposeMaxUnselected = 4;
// Slots of 8 bytes whose banks differ: 32 four-byte banks hold 16 doubles.
constexpr int kTransposeSwizzleBits = 4;
constexpr int kTransposeMaxBlockBits = 58 - kTransposeTileBits;

// Everything the kernel needs, passed by value (about 1 KiB).
//
// Compact tile index c (11 bits): bit i of c is index bit tile_bit[i], tile
// bits in ascending index order (tile_bit[0] = 0: the two amplitudes of a load).
// Staged position s (11 bits): bits 0..o-1 (o = 11 - u) are the tile's selected
// bits ordered by their bin bit, bits o..10 the unselected bits in ascending
// index order; so s = (unselected value << o) | output position. A position's
// shared-memory slot is s with its low 4 bits XORed with images of its higher
// bits (a swizzle that keeps the loads' stores free of bank conflicts).
struct TransposePlan {
    std::uint64_t load_index[kTransposeTileBits];  // index bit of compact bit i
    std::uint32_t load_slot[kTransposeTileBits];   // slot image of compact bit i
    std::uint32_t staged_slot[kTransposeTileBits];  // slot image of staged bit j
    std::uint64_t out_bin[kTransposeTileBits];     // bin bit of staged bit j < o (0 above)
    std::uint64_t block_index[kTransposeMaxBlockBits];  // index bit of block-id bit i
    std::uint64_t block_bin[kTransposeMaxBlockBits];    // its bin bit (block bits are all selected)
    int block_bits;       // n - 11
    int unselected_bits;  // u
    int output_bits;      // o = 11 - u
    // Reported and tested, not used by the kernel: the lowest index bits and
    // the lowest bin bits that the tile holds whole (reads and writes come in
    // runs of 2^read_run_bits amplitudes and 2^write_run_bits bins).
    int read_run_bits;
    int write_run_bits;
};

// True when the transposed path can run an n-qubit state and k qubits:
// n >= 11 and k >= n - 4.
bool transpose_applies(int num_qubits, int k);

// The qubit list starts 0, 1, ..., kStreamingStorePrefix - 1: the streaming
// kernel's bit 0 and its five lane bits (cuda/marginal_bin_stationary.cu) then
// write neighbouring bins, so its stores are coalesced.
constexpr int kStreamingStorePrefix = 6;
bool streaming_stores_coalesce(const Qubits& qubits);

// BinStationary's rule: true when it runs the case on the transposed path,
// false for the streaming one. A function of (n, qubits, precision) alone;
// the measurements behind it are next to its definition.
bool takes_transposed_path(int num_qubits, const Qubits& qubits, bool single_precision);

// The plan for this case; throws qmarg::Error when transpose_applies is false.
// A function of (n, qubits) alone.
TransposePlan make_transpose_plan(int num_qubits, const Qubits& qubits);
// The plan of the compact state of the amplitudes whose bits `fixed` holds
// (marginal_fixed_bits.hpp), its index images (load_index, block_index)
// spread onto the full index; the kernel adds fixed.values to every index.
// transpose_applies and the reported run lengths refer to the compact state.
TransposePlan make_transpose_plan(int num_qubits, const Qubits& qubits, const FixedBits& fixed);

// The transposed path itself (cuda/marginal_transpose.cu): writes the 2^k
// bins to the device array `out`, loading the state as `loads` says
// (BinStationary passes state_loads_for_device). `amps` is a device pointer.
// Throws qmarg::Error outside transpose_applies; BinStationary calls it where
// takes_transposed_path holds, the benchmark and the tests on its whole range.
// With `fixed` bits it reads only the amplitudes that match (the compact
// state of marginal_fixed_bits.hpp, to which transpose_applies then refers).
template <class Real>
void marginal_probabilities_transpose(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                      StateLoads loads, double* out, const FixedBits& fixed = {});

// The other path, BinStationary's streaming kernel (cuda/marginal_bin_stationary.cu),
// alone: any case, whatever takes_transposed_path says. Arguments as above.
template <class Real>
void marginal_probabilities_bin_stationary_streaming(const std::complex<Real>* amps, int num_qubits,
                                                     const Qubits& qubits, StateLoads loads, double* out);

// XOR of images[i] over the set bits i < count of value.
template <class T>
QMARG_HOST_DEVICE inline T xor_images(const T* images, std::uint64_t value, int count) {
    T out = 0;
    for (int i = 0; i < count; ++i)
        if ((value >> i) & 1u) out ^= images[i];
    return out;
}

// The index bits and the bin bits the block id fixes.
QMARG_HOST_DEVICE inline std::uint64_t transpose_block_index(const TransposePlan& plan, std::uint64_t block) {
    return xor_images(plan.block_index, block, plan.block_bits);
}
QMARG_HOST_DEVICE inline std::uint64_t transpose_block_bin(const TransposePlan& plan, std::uint64_t block) {
    return xor_images(plan.block_bin, block, plan.block_bits);
}

// Loads: compact c = 2 * (step * 128 + thread) (+1 for a load's second amplitude).
QMARG_HOST_DEVICE inline std::uint64_t transpose_load_thread_index(const TransposePlan& plan, unsigned thread) {
    return xor_images(plan.load_index + 1, thread, kTransposeThreadBits);
}
QMARG_HOST_DEVICE inline std::uint64_t transpose_load_step_index(const TransposePlan& plan, unsigned step) {
    return xor_images(plan.load_index + 1 + kTransposeThreadBits, step, kTransposeTileBits - 1 - kTransposeThreadBits);
}
QMARG_HOST_DEVICE inline std::uint32_t transpose_load_thread_slot(const TransposePlan& plan, unsigned thread) {
    return xor_images(plan.load_slot + 1, thread, kTransposeThreadBits);
}
QMARG_HOST_DEVICE inline std::uint32_t transpose_load_step_slot(const TransposePlan& plan, unsigned step) {
    return xor_images(plan.load_slot + 1 + kTransposeThreadBits, step, kTransposeTileBits - 1 - kTransposeThreadBits);
}

// Sums: output position p = step * 128 + thread (p < 2^o), summed over the
// unselected value v = 0, 1, ..., 2^u - 1 in that order. o and u are passed
// in rather than read from the plan, so that a kernel compiled for one u
// folds each step's and each value's images at compile time.
QMARG_HOST_DEVICE inline std::uint32_t transpose_sum_thread_slot(const TransposePlan& plan, unsigned thread) {
    return xor_images(plan.staged_slot, thread, kTransposeThreadBits);
}
QMARG_HOST_DEVICE inline std::uint32_t transpose_sum_step_slot(const TransposePlan& plan, unsigned step,
                                                               int output_bits) {
    return xor_images(plan.staged_slot + kTransposeThreadBits, step, output_bits - kTransposeThreadBits);
}
QMARG_HOST_DEVICE inline std::uint32_t transpose_unselected_slot(const TransposePlan& plan, unsigned value,
                                                                 int output_bits, int unselected_bits) {
    return xor_images(plan.staged_slot + output_bits, value, unselected_bits);
}
QMARG_HOST_DEVICE inline std::uint64_t transpose_out_thread_bin(const TransposePlan& plan, unsigned thread) {
    return xor_images(plan.out_bin, thread, kTransposeThreadBits);
}
QMARG_HOST_DEVICE inline std::uint64_t transpose_out_step_bin(const TransposePlan& plan, unsigned step,
                                                              int output_bits) {
    return xor_images(plan.out_bin + kTransposeThreadBits, step, output_bits - kTransposeThreadBits);
}

}  // namespace gpu
}  // namespace qmarg
