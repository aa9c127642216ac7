// The GPU gate application inside: how one gate's qubits are described to the
// kernels, and the launcher of each path. cuda/apply_matrix.cu checks the
// gate, reads the matrix's structure and picks a path:
//
//   apply_matrix_diagonal     diagonal matrices (Z, S, T, Rz, Phase, CZ, ...):
//                             each amplitude is multiplied in place, no product.
//   apply_matrix_permutation  one nonzero per row and column (X, Y, SWAP, CX,
//                             CCX, ...): amplitudes move, times a phase.
//   apply_matrix_small        dense, k <= kMaxSmallTargets: each thread owns
//                             whole groups of 2^k amplitudes in registers.
//   apply_matrix_tiled        dense, k > kMaxSmallTargets: a block owns
//                             several groups staged in shared memory and
//                             streams the matrix through it in tiles.
//   apply_matrix_mma          dense, on FP64 tensor cores (DMMA): the tiled
//                             product with DMMA micro-kernels (a float state
//                             is widened to double on chip); double k = 6
//                             with no control among qubits 0..2, on sm_90,
//                             as warp streams: each warp owns a group a
//                             round, teams of two warps copy theirs together
//                             (apply_matrix_mma_stream.cu).
//
// Which path a dense gate takes (dense_path below), on a GPU with FP64 tensor
// cores (float states are widened to double on chip: no lower-precision
// tensor-core format is as exact as float FMAs):
//   double: apply_matrix_mma for k >= 5, where 8 * 2^k flops per amplitude
//     outrun FMAs (k = 5 in registers also runs out of them), and for k = 4
//     with a target among the three lowest qubits, where the staged register
//     kernel is level on an H100 and behind on an H200 (1.05 against 1.16;
//     against the ring kernel, on an H200, double n = 30, ms, two runs each:
//     low 10.41-10.43 against 9.39, descending 10.29-10.52 against 9.39, high
//     9.44-9.45 against 9.40-9.45, scattered (20, 26, 12, 4) 9.93-10.09
//     against 10.47-10.53; again at aa933bc, five processes each,
//     alternating: low 10.05-10.18 against 9.39-9.45, high 9.15-9.24
//     against 9.23-9.29, scattered 9.96-10.54 against 10.30-10.47);
//   float: apply_matrix_mma for k >= 6, and for k = 5 with a target among the
//     four lowest qubits (the staged register kernel's cases), where the raw
//     tensor-core kernel (apply_matrix_mma.cu) ran at 0.75-1.00 of the floor
//     against 0.60-0.67 (low and scattered targets; 0.69-0.83 against
//     0.73-0.87 on high ones); and for k = 4 on exactly qubits 0..3 (the
//     register kernel's form for the lowest qubits) where one
//     multiprocessor's share of the memory bandwidth is under
//     kLowestFloatK4MmaMaxSpeedup times the H100's (unknown counts as the
//     H100's). That form scales with the memory and the tensor-core kernel
//     does not: at ea435eb, n = 28, lowest and descending targets, ms, two
//     runs each alternating in one process, the H100 ran it in 1.664-1.691
//     against 1.482-1.508 on tensor cores (0.85 against 0.94 of a
//     device-to-device copy), the H200 in 1.24 against 1.37-1.40 (the
//     H100's high and scattered targets 1.496-1.579 against 1.695-1.792:
//     they stay on the FMA kernels everywhere).
// Everything else keeps its FMA path: k <= 3, k <= 4 in float, k = 5 with
// high targets in float, and k = 4 with high targets in double run at or
// near the copy roofline (the figures below are fractions of a copy kernel's
// time, which a device-to-device copy beats by about 1.25 times: see
// bench/results/README.md, "The copy floor"). On an H200 (float, n = 28,
// fractions of that kernel's time, low / high / scattered / descending): k
// = 5 on tensor cores 0.66 / 0.60 / 0.62 / 0.70 against 0.53 / 0.62 / 0.53 /
// 0.54 on the FMA kernels, as the rule picks; k = 4 0.96 / 0.74 / 0.75 / 0.90
// against 0.91 / 1.16 / 1.05 / 0.91, the FMA kernels 6 % behind on the
// lowest qubits, where on the H100 they were 1.8 times ahead; since the
// staged kernel's form for the lowest qubits (apply_matrix_small.cu) they run
// 1.15 there (1.24 ms, against 1.37-1.40 ms on tensor cores in another run
// on the same GPU, lowest and descending targets). Measured on an
// H100 (fraction of the floor; tensor cores forced with apply_matrix_bench
// --tensor_cores=1, the FMA paths with --fma_paths=1), with the Gauss-form
// kernels: float, n = 28: k = 4 low 0.67 against 1.23, high and scattered
// 0.55 against 1.19-1.25; k = 5 on the one-block kernel, before the raw
// one, 0.49-0.57 against 0.72-0.80 (low, high and
// scattered; bench/results/apply_matrix_{tensor_cores,fma_paths}_H100.json;
// high targets 0.98 in the apply_matrix_H100.json of that time since the
// direct kernel's rows run 4 a turn, 0.72 to 0.73 in the sweeps since the
// floor is the fastest copy;
// 0.16 on low targets before the register kernels read matrices over 2 KiB
// from shared memory; on an H200 too the FMA path won, 0.50-0.59 against
// 0.38-0.43, before Gauss's form); k = 6 0.62-0.75 against 0.29-0.42 (tiled);
// k = 7..10 0.67-0.89 against 0.32-0.45. Double, n = 30: k = 4 low 1.12
// against 1.14 (level; 0.32 from the constant bank), high and scattered 1.02
// against 1.13-1.14, k = 5 1.02-1.16 against 0.77 (high). (The FMA paths'
// figures for k >= 6 are from an earlier run.)
//
// Controls never reach a kernel as a test: they are folded into the index
// mapping (their bits are inserted with the required values), so a gate with
// c controls touches only 2^(n-c) amplitudes.
//
// Precision: on the FMA paths a float state gets a float copy of the matrix
// and float arithmetic (at k = 5 in Gauss's form: apply_matrix_small.cu,
// qmarg/gates.hpp). The state keeps only 24 bits per component anyway; the
// accumulated rounding of a 2^k-term sum (about sqrt(2^k) * 6e-8 relative, 2e-6
// at k = 10) stays far below what the stored result can hold, while double
// arithmetic would halve the speed of every compute-bound gate (k >= 5).
//
// Plain C++ without CUDA types (the structs travel into kernels by value).
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

#include "qmarg/matrix.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

// The most targets any GPU path applies. A dense 2^10 x 2^10 matrix already
// does 8192 flops per amplitude; a larger block would not fit the tiled
// kernel's shared memory with enough groups to reuse each matrix tile.
constexpr int kMaxGateTargets = 10;
// Dense gates up to this many targets keep a group in registers: 2^5 complex
// values are 64 registers in either precision.
constexpr int kMaxSmallTargets = 5;
// Room for every qubit of any state (StateVector::kMaxQubits is 58).
constexpr int kMaxQubitSlots = 64;
// The most local bits (targets plus free bits) of a shared-memory tile.
constexpr int kMaxTileBits = 16;

// One gate's qubits, checked and sorted on the host.
struct GateQubits {
    int num_qubits = 0;
    int num_targets = 0;                         // k
    int num_controls = 0;                        // c
    int num_fixed = 0;                           // k + c
    int min_target = 0;
    Index control_mask = 0;                      // every control qubit's bit set to its required value
    int targets[kMaxGateTargets] = {};           // targets[j] is bit j of the matrix row/column index
    int controls_sorted[kMaxQubitSlots] = {};    // ascending
    int fixed_sorted[kMaxQubitSlots] = {};       // targets and controls, ascending
    Index target_stride[kMaxGateTargets] = {};   // 1 << targets[j]
};

// `control_values` is empty (every control must be 1) or holds one 0/1 per control.
GateQubits describe_gate(int num_qubits, const Qubits& targets, const Qubits& controls,
                         const std::vector<int>& control_values);

// A tile is 2^tile_bits amplitudes that one block moves between global and
// shared memory: every amplitude whose target bits and `num_free` lowest free
// bits (qubits that are neither targets nor controls) take any value, for one
// value of the remaining free bits, with the controls at their values. So a
// tile holds 2^num_free whole groups (a group: the 2^k amplitudes one matrix
// product mixes), and tiles are disjoint: a block that owns a tile may
// overwrite it in place.
//
// Local index l of a tile: bit p of l is global bit local_bits[p], with
// local_bits ascending, so consecutive local indices are as close in memory as
// the gate allows and a warp walking l in order reads whole cache lines.
struct TileLayout {
    int tile_bits = 0;                           // m = k + num_free
    int num_free = 0;
    int num_outer_fixed = 0;                     // m + c
    Index num_tiles = 0;                         // 2^(n - c - m)
    Index control_mask = 0;
    int outer_fixed[kMaxQubitSlots] = {};        // local bits and control bits, ascending
    int local_bits[kMaxTileBits] = {};           // global bit of local bit p
    int local_role[kMaxTileBits] = {};           // j >= 0: local bit p carries targets[j]; -1 - i: free bit i
    int target_local[kMaxGateTargets] = {};      // local bit that carries targets[j]
    int target_local_sorted[kMaxGateTargets] = {};
    Index target_stride[kMaxGateTargets] = {};   // 1 << targets[j]
    Index free_stride[kMaxTileBits] = {};        // 1 << (global bit of free bit i), free bits ascending
};

// The tile with the `free_bits` lowest free qubits as local bits (fewer when the
// state has fewer free qubits), free bit i the i-th lowest. The tensor-core
// kernels reorder a double state's lowest three (mma_tile_layout in
// apply_matrix_mma_common.cuh).
TileLayout make_tile_layout(const GateQubits& gate, int free_bits);

// The paths. Inputs are checked; `amps` is a device pointer.
template <class Real>
void apply_matrix_diagonal(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix);
template <class Real>
void apply_matrix_permutation(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix);
template <class Real>
void apply_matrix_small(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix);
template <class Real>
void apply_matrix_tiled(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix);
template <class Real>
void apply_matrix_mma(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix);
// The one-block tensor-core kernel for any k = 4..10: what GPUs before sm_90
// run for every k. On sm_90 apply_matrix_mma runs k = 9 and 10 on
// clusters, so the tests call this one directly to check it on any GPU.
template <class Real>
void apply_matrix_mma_one_block(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix);
// k = 10's companion grid (cuda/apply_matrix_mma_cluster.cu) on every unit
// of the gate by itself, for the tests: apply_matrix_mma gives it only the
// multiprocessors the clusters of four leave idle, none on some GPUs. The
// gate needs 10 targets and at least 5 free qubits (an Error otherwise);
// false, with nothing run, where the GPU cannot hold a cluster of two.
template <class Real>
bool apply_matrix_mma_companion_alone(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix);

// Double k = 6 on sm_90 as warp streams (cuda/apply_matrix_mma_stream.cu),
// what apply_matrix_mma runs for it there. The gate needs 6 targets (an
// Error otherwise); false, with nothing run, where the GPU is older than
// sm_90 or lacks the kernel's 224 KiB of shared memory per block.
bool apply_matrix_mma_streams(std::complex<double>* amps, const GateQubits& gate, const Matrix& matrix);
// Whether apply_matrix_mma gives a double gate to the warp streams: 6
// targets, qubits 0..2 targets or free in any mix (no control among them),
// and qubit 0 a target or one of at least three free qubits, so that the
// kernel's buffers keep each 32-byte sector of the state whole: the layouts
// where they beat the one-block kernel.
bool mma_streams_pay(const GateQubits& gate);

// Whether the current device has FP64 tensor cores (compute capability >= 8.0).
bool mma_available();

enum class DensePath { Small, Tiled, Mma };
// What the rule asks of a GPU.
struct DenseDevice {
    bool mma = false;                        // FP64 tensor cores (mma_available)
    double multiprocessor_bytes_per_us = 0;  // src/device_bandwidth.hpp; 0: not reported
};
// The current device's (asked once per device; throws CudaError when it cannot be asked).
DenseDevice dense_device();
// Memory this much faster per multiprocessor than the H100's keeps float
// k = 4 on qubits 0..3 on the FMA kernels: the H100 is at 1, the H200 at 1.44,
// and the crossing, where the FMA kernel's H100 time scaled down by the
// bandwidth meets the tensor-core kernel's H200 time, is near 1.2.
constexpr double kLowestFloatK4MmaMaxSpeedup = 1.2;
// The path a dense gate with this description takes on `device` for a state
// of `real_bytes` per real component (4 or 8); without `device`, on the current one.
DensePath dense_path(const GateQubits& gate, std::size_t real_bytes, const DenseDevice& device);
DensePath dense_path(const GateQubits& gate, std::size_t real_bytes);
// The FMA path for k targets: the register kernel up to kMaxSmallTargets,
// the tiled one above (what dense_path falls back to without tensor cores).
DensePath fma_path(int num_targets);
const char* to_string(DensePath path);
// Applies a dense matrix on `path` (the kernel's own limits apply).
template <class Real>
void apply_matrix_dense(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix, DensePath path);

// c (16 x 8) = a (16 x 16) * b (16 x 8), row-major, by one DMMA through the
// fragment helpers of cuda/dmma.cuh: a check that the documented fragment
// layout is the one the hardware uses. Needs compute capability 8.0.
std::vector<double> dmma_fragment_product(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace gpu
}  // namespace qmarg
