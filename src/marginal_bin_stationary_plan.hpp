// BinStationary's plan (host code, src/marginal_bin_stationary_plan.cpp):
// which index bits the streaming kernel of cuda/marginal_bin_stationary.cu
// gives to the lanes, the warps, a segment's tasks and the segments; how long
// segments are cut into parts and how their bins are merged; and the levels
// of the second pass that adds partial rows. The rules sit here, apart from
// the kernels, so that they are tested on machines without a GPU; the kernel
// gets the Plan by value.
// Plain C++ (no CUDA types): QMARG_HOST_DEVICE makes the helpers the kernels
// share callable from them when nvcc reads this header.
#pragma once

#include <cstdint>
#include <vector>

#include "marginal_atomic_merge.hpp"
#include "marginal_fixed_bits.hpp"
#include "qmarg/bits.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {
namespace bin_stationary {

constexpr int kLaneBits = 5;
constexpr int kWarpBits = 3;
constexpr int kWarps = 1 << kWarpBits;
constexpr int kThreads = 32 * kWarps;
constexpr int kIdentityBits = 1 + kLaneBits + kWarpBits;  // bits fixed by a thread's identity
// Independent loads in flight per thread: 4, and 8 for float states of up to
// 2^28 amplitudes (run_streaming in cuda/marginal_bin_stationary.cu has the
// measurements).
constexpr int kLoadsInFlight = 4;
constexpr int kFloatLoadsInFlight = 8;
constexpr int kFloatLoadsMaxQubits = 28;
constexpr int loads_in_flight(int num_qubits, bool single_precision) {
    return single_precision && num_qubits <= kFloatLoadsMaxQubits ? kFloatLoadsInFlight : kLoadsInFlight;
}
constexpr int kMaxOuterBits = 64;
// The segments of a batch that one reduce-scatter takes in the step form
// (Plan::step_scatter): 4, so a lane keeps one of them after two levels.
constexpr int kLogScatterSegments = 2;
constexpr int kScatterSegments = 1 << kLogScatterSegments;
// A thread's load: two amplitudes (index bit 0), 16 bytes of a float state,
// 32 of a double one (AmpPair in cuda/marginal_common.cuh).
constexpr int kLogFloatLoadBytes = 4;
constexpr int kLogDoubleLoadBytes = 5;

// Everything the kernel needs, built on the host; passed by value (< 4 KiB).
struct Plan {
    // Index bits set by each lane id: the lane's bits at index bits 1..5 (on
    // a compact state's plan spread onto the full index, marginal_fixed_bits.hpp).
    std::uint64_t lane_offset[32];
    std::uint64_t lane_bin[32];      // bin bits set by each lane's index bits 1..5
    std::uint64_t warp_offset[kWarps];  // index bits set by each warp id
    std::uint64_t warp_bin[kWarps];     // bin bits set by each warp id
    std::uint64_t bit0_bin;          // bin bit of index bit 0 (0 when qubit 0 is not selected)
    // The inner (unselected) task bits: part_mask picks a block's part of a
    // split segment (0 where no segment is split), and the block's tasks in
    // a segment walk the subsets of task_mask, lowest bit first.
    std::uint64_t part_mask;
    std::uint64_t task_mask;
    // Outer (selected) task bits in the order a block counts its segments
    // (outer_bit_before: the lowest bins first, then ascending index position):
    // flip_*[t] is what changes in the index / the bin when a segment
    // counter's lowest t+1 bits flip.
    std::uint64_t flip_index[kMaxOuterBits];
    std::uint64_t flip_bin[kMaxOuterBits];
    std::uint64_t bins;              // 2^k
    unsigned nonselected_lane_mask;  // lane-id bits whose index bit is not selected
    unsigned nonselected_warp_mask;  // warp-id bits whose index bit is not selected
    int bit0_selected;
    int outer_bits;                  // s
    int log_segment_tasks;           // tasks a block runs per segment: the bits of task_mask
    int log_segments_per_block;      // M
    int log_parts;                   // P: blocks sharing one segment (then M = 0)
    // Atomic merge only: part p adds into copy (p & copy_mask) of the bins,
    // copy_stride doubles apart (0 and 0 where the blocks add into `out`
    // itself; choose_merge sets them for the copies of the output).
    std::uint64_t copy_mask = 0;
    std::uint64_t copy_stride = 0;
    // Atomic merge only, where gather_atomics: a block's bins are the bins of
    // its segment with any values of gather_mask, the bin bits that index
    // bit 0, the lane bits and the warp bits select. Its writer lanes store
    // their sums in shared memory at their bins' ranks (the gather_mask bits
    // of the bin, packed: lane_rank | warp_rank, | bit0_rank for acc1), and
    // thread r adds rank r's sum, so that each warp's atomics cover 32
    // neighbouring ranks in one instruction (gather_atomics_pay).
    int gather_atomics = 0;
    std::uint64_t gather_mask = 0;
    std::uint16_t lane_rank[32];
    std::uint16_t warp_rank[kWarps];
    std::uint16_t bit0_rank;
    // Whether warp bits 0 and 1 hold bin bits 0 and 1, every lane bit is
    // selected and no segment is split (make_plan): then each sector of four
    // bins is held by four warps of a block, and the general loop's
    // kSectorStores form writes it whole (bin_stationary_kernel).
    int sector_stores = 0;
    // Whether, on a double state, segments are one task long, no warp bit is
    // unselected, lane bits 0 and 1 are unselected and bins 0 and 1 are the
    // lowest outer bits (make_plan): then the step form's four segments of a
    // batch are the four bins of a sector, and 4 neighbouring lanes hold them
    // all (kSectorStores with kSegmentTasks = 1).
    int step_sector_stores = 0;
    // Whether, on a float state of 2^24 to 2^28 amplitudes, segments run the
    // step form with 8 loads in flight and at least two lane bits are
    // unselected (make_plan, step_scatter_pays): then the step form ends its
    // segments as a reduce-scatter over the lanes (kScatter).
    int step_scatter = 0;
};

// The second pass's tree kernel (sum_rows_tree_kernel): its block, and the
// rows one thread adds in a full chain.
constexpr int kTreeThreads = 256;
constexpr std::uint64_t kTreeSerialRows = 8;

// The bins of a tree block's tile: 32, or all of them when there are fewer.
QMARG_HOST_DEVICE constexpr std::uint64_t tree_tile_bins(std::uint64_t bins) { return bins < 32 ? bins : 32; }
// S, the slices of a tree block, and the rows one level adds when every
// thread adds kTreeSerialRows of them (8 S, a power of two).
QMARG_HOST_DEVICE constexpr std::uint64_t tree_slices(std::uint64_t bins) {
    return kTreeThreads / tree_tile_bins(bins);
}
constexpr std::uint64_t tree_level_rows(std::uint64_t bins) { return kTreeSerialRows * tree_slices(bins); }

// Smaller states (fewer amplitudes than one block's identity bits and three
// tasks cover) run the small-state kernel, a thread per bin.
constexpr int kMinQubits = kIdentityBits + 3;

// The plans of split segments: many parts (about 2^12 blocks), few parts
// (one wave), or few parts with four to a segment where few would cut it in
// two (marginal_bin_stationary_plan.cpp has the rules and measurements).
enum class Parts { Many, Few, FewInFours };

// A plan and its grid.
struct Launch {
    Plan plan;
    std::uint64_t blocks;
    // Host only, for choose_merge: with atomics into the output itself, the
    // 32-byte sectors that all blocks of the plan add into, counted once
    // per instruction, in the KiB of the output that receives the most
    // (atomic_sectors_per_kib).
    std::uint64_t atomic_sectors_per_kib;
    // Host only: whether gathering halves a block's sector requests
    // (gather_halves_sectors), counted once with the plan rather than on
    // every call (about 0.15 us of host time).
    bool gathering_halves_sectors;
};

// One level of the second pass: how many groups of rows it leaves, and which
// kernel adds them.
struct Level {
    std::uint64_t groups;
    bool tree;
};

// The levels that add 2^log_parts rows of `bins` partial sums into one.
std::vector<Level> second_pass_levels(int log_parts, std::uint64_t bins);

// Whether a plan runs bin_stationary_kernel's grouped form with `unroll`
// loads in flight (segments of one or two tasks).
bool step_segments_apply(const Plan& plan, int unroll);

// The plan a call runs, and how it merges split segments.
struct MergePlan {
    Launch launch;
    Parts parts;
    bool atomic;
};

// The plan and merge for a case: BinStationary's where `atomics_allowed` is
// false (whatever the device), BinStationaryAtomic's on `device` where it is
// true.
MergePlan choose_merge(int num_qubits, const Qubits& qubits, bool single_precision, bool atomics_allowed,
                       const MergeDevice& device);

// The plan of a compact state (marginal_fixed_bits.hpp) on the full index.
Launch spread_onto_full_index(Launch launch, const FixedBits& fixed);

// Whether a case runs the streaming kernel with a plan (not the transposed
// path, not the small-state kernel): only then is there a merge to choose.
bool has_merge(int num_qubits, const Qubits& qubits, bool single_precision);

}  // namespace bin_stationary

// Whether the streaming kernel, on BinStationary's plan for this case, stores
// whole sectors (kSectorStores in cuda/marginal_bin_stationary.cu: the sums of
// four warps in the general loop, those of four segments in the step form):
// for the tests.
bool streaming_stores_whole_sectors(int num_qubits, const Qubits& qubits, bool single_precision);

// Whether the streaming kernel, on BinStationary's plan for this case, ends
// its segments as a reduce-scatter over the lanes (Plan::step_scatter): for
// the tests.
bool streaming_scatters_segments(int num_qubits, const Qubits& qubits, bool single_precision);

}  // namespace gpu
}  // namespace qmarg
