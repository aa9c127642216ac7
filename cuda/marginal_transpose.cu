// The transposed path of MarginalStrategy::BinStationary: marginals of
// k >= n - 4 qubits (transpose_applies), where the output is 1/16 to all of
// the amplitudes' count and the way it is written decides the speed.
// BinStationary takes it where takes_transposed_path says so
// (src/marginal_transpose_plan.cpp has the rule and its measurements).
//
// The streaming engine (cuda/marginal_bin_stationary.cu) gives each lane the
// bins of its own amplitudes; with few unselected bits the lane bits map to
// bin bits, and in any order but ascending to high ones, so a warp's 8-byte
// stores land in 32 different sectors that L2 must read, merge and write back
// (measured on an H100 at n = 30: 0.13 of the roofline counting the output at
// k = n descending, 0.36 random). Here a block instead owns a tile of 2^11
// amplitudes (src/marginal_transpose_plan.hpp says which bits and why):
//   1. loads: each thread reads 8 vectors of two amplitudes, lanes along the
//      lowest index bits (runs of >= 16 amplitudes), and stores their
//      probabilities (in double) in shared memory at their staged position,
//      swizzled so that each half-warp's 16 stores hit 16 distinct banks;
//   2. sums: thread p adds the 2^u staged values of output position p in the
//      fixed order v = 0, 1, ..., 2^u - 1 of the unselected bits, and writes
//      the bin; lanes take consecutive positions, i.e. consecutive bins for the
//      tile's lowest bin bits (runs of >= 8 doubles).
// Shared-memory reads in step 2 are conflict-free for any swizzle that only
// XORs a slot's low 4 bits with a function of its higher bits, as this one does.
//
// Expected on an H100 (double, n = 26..30): the traffic of a copy of 16 B read
// and 8 x 2^(k-n) B written per amplitude, in full sectors: >= 0.9 of the read
// roofline counting both (a plain copy reaches 0.98); float similar.
//
// Determinism: no atomics; each bin is the sum of its 2^u probabilities in the
// order above, and the launch shape (2^(n-11) blocks of 128 threads) and the
// tile depend only on (n, qubits): results are bitwise identical on every run
// and every GPU.
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "check.cuh"
#include "marginal_common.cuh"
#include "marginal_transpose_plan.hpp"
#include "qmarg/error.hpp"

namespace qmarg {
namespace gpu {
namespace {

// Loads per thread issued before their stores to shared memory: all 8 of a
// double thread's, 4 of a float thread's. Every choice takes about 40
// registers (twelve blocks per multiprocessor).
// Measured on an H100 (ratio to the read roofline counting the output, k = n
// .. n - 3, descending, random and scattered, batches of 4 and 8 alternating):
// double n = 28 0.925 -> 0.950 on average, better in every cell (k = n
// scattered 0.885 -> 0.931), and the same gain at n = 26; float n = 26 0.778 /
// 0.780 and n = 28 0.786 / 0.780, so float keeps 4. (Measured before u became
// a template argument below, when float was bound by instructions; not
// measured again since.) The batch does not change which value lands in which
// slot, so the bins are the same bits either way.
template <class Real>
constexpr int transpose_load_batch() {
    return std::is_same<Real, double>::value ? 8 : 4;
}

// Twelve blocks of 16 KiB (17 with the 1 KiB the hardware keeps per block)
// take 204 of an H100 multiprocessor's 228 KiB of shared memory. The kernels
// are held to the registers that leave room for twelve (40 a thread), which
// the double kernels would otherwise exceed by a few; a thirteenth block
// would fit in shared memory but not in the registers.
//
// Why 2^11 amplitudes a tile and not 2^12 (on 256 threads, six blocks of 32
// KiB, as before): a state of n <= 24 qubits is at most a few rounds of tiles
// over the block slots (4096 tiles of 2^12 over 792 slots of an H100 at
// n = 24), and a block stages its whole tile before it sums, so the end of the
// last round runs with few loads in flight. Half a tile is half as long a run
// for the same share of the slots. Measured on an H100 (main kernel alone,
// every run after an L2 flush, the variants and the read roofline
// interleaved, 300 runs, ratios to the read roofline; bitwise the same bins),
// 2^12 -> 2^11, k = n - 4 .. n in descending, high, scattered and three
// random orders (31 cells per n and precision at n = 24, 30 otherwise):
//   n = 24, float: +0.005 to +0.034 in every cell (k = 20: 0.865-0.897 ->
//     0.895-0.925, the sweep's random order 0.865 -> 0.899); double: -0.010
//     to +0.015, median +0.009;
//   n = 22: float +0.012 to +0.046, double -0.017 to +0.046 (median +0.024);
//   n = 26: -0.011 to +0.014, level; n = 28 (k = 24..26): median +0.001
//     (double) and +0.003 (float), -0.028 to +0.012.
// 2^10 amplitudes on 64 threads (24 blocks) gained as much in some orders
// and lost up to 0.19 in others (float n = 24, k = 20, the sweep's order
// 0.676; with u = 4 its reads can come in runs of only 8 amplitudes, as
// they do in that order).
constexpr int kTransposeBlocksPerSm = 12;

template <class Real, int kLoadBatch, int kUnselected, StateLoads kLoads>
__global__ void __launch_bounds__(kTransposeThreads, kTransposeBlocksPerSm)
    transpose_marginal_kernel(const AmpPair<Real>* pairs, const __grid_constant__ TransposePlan plan,
                              double* out) {
    static_assert(kTransposeLoadSteps % kLoadBatch == 0, "the load steps come in whole batches");
    // u is a template argument so that every loop below has a fixed trip
    // count: unrolled, each step's and each value's images are XORs of plan
    // entries chosen at compile time. With u read from the plan every output
    // walked three loops over bits, and the kernel was bound by instructions,
    // not bytes: measured on an H100 (ratio to the read roofline counting the
    // output, n = 26, 28, k = n .. n - 3, four layouts, the two kernels
    // alternating, two runs each) float went from 0.74-0.85 to 0.93-1.00 and
    // double from 0.89-0.98 to 0.94-0.98 (k = n: 0.89-0.94 -> 0.94-0.98).
    constexpr int kOutputBits = kTransposeTileBits - kUnselected;
    constexpr unsigned kSumSteps = 1u << (kOutputBits - kTransposeThreadBits);
    constexpr unsigned kValues = 1u << kUnselected;
    __shared__ double staged[1 << kTransposeTileBits];
    const unsigned thread = threadIdx.x;
    const std::uint64_t block = blockIdx.x;

    const std::uint64_t thread_index = transpose_block_index(plan, block) | transpose_load_thread_index(plan, thread);
    const std::uint32_t thread_slot = transpose_load_thread_slot(plan, thread);
    const std::uint32_t pair_slot = plan.load_slot[0];  // the second amplitude of a load
#pragma unroll
    for (int first = 0; first < kTransposeLoadSteps; first += kLoadBatch) {
        AmpPair<Real> v[kLoadBatch];
#pragma unroll
        for (int j = 0; j < kLoadBatch; ++j) {
            v[j] = load_pair<kLoads>(pairs + ((thread_index | transpose_load_step_index(plan, first + j)) >> 1));
        }
#pragma unroll
        for (int j = 0; j < kLoadBatch; ++j) {
            const std::uint32_t slot = thread_slot ^ transpose_load_step_slot(plan, first + j);
            staged[slot] = static_cast<double>(v[j].x) * v[j].x + static_cast<double>(v[j].y) * v[j].y;
            staged[slot ^ pair_slot] = static_cast<double>(v[j].z) * v[j].z + static_cast<double>(v[j].w) * v[j].w;
        }
    }
    __syncthreads();  // the whole tile is staged before any position is summed

    const std::uint64_t thread_bin = transpose_block_bin(plan, block) | transpose_out_thread_bin(plan, thread);
    const std::uint32_t sum_slot = transpose_sum_thread_slot(plan, thread);
#pragma unroll
    for (unsigned step = 0; step < kSumSteps; ++step) {
        const std::uint32_t slot = sum_slot ^ transpose_sum_step_slot(plan, step, kOutputBits);
        double sum = 0;
#pragma unroll
        for (unsigned value = 0; value < kValues; ++value) {
            sum += staged[slot ^ transpose_unselected_slot(plan, value, kOutputBits, kUnselected)];
        }
        out[thread_bin | transpose_out_step_bin(plan, step, kOutputBits)] = sum;
    }
}

template <class Real, int kUnselected>
void launch_transpose(const AmpPair<Real>* pairs, const TransposePlan& plan, unsigned blocks, StateLoads loads,
                      double* out) {
    with_state_loads(loads, [&](auto chosen) {
        transpose_marginal_kernel<Real, transpose_load_batch<Real>(), kUnselected, decltype(chosen)::value>
            <<<blocks, kTransposeThreads>>>(pairs, plan, out);
    });
    QMARG_CHECK_LAUNCH(transpose_marginal_kernel);
}

}  // namespace

template <class Real>
void marginal_probabilities_transpose(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                      StateLoads loads, double* out, const FixedBits& fixed) {
    const TransposePlan plan = make_transpose_plan(num_qubits, qubits, fixed);
    const std::uint64_t blocks = std::uint64_t{1} << plan.block_bits;
    if (blocks > 0x7fffffffu) {
        throw Error("BinStationary: " + std::to_string(blocks) + " tiles of the transposed path exceed the grid limit");
    }
    const auto* pairs = reinterpret_cast<const AmpPair<Real>*>(amps + fixed.values);
    const auto grid = static_cast<unsigned>(blocks);
    static_assert(kTransposeMaxUnselected == 4, "one kernel per u = 0 .. kTransposeMaxUnselected");
    switch (plan.unselected_bits) {
        case 0: return launch_transpose<Real, 0>(pairs, plan, grid, loads, out);
        case 1: return launch_transpose<Real, 1>(pairs, plan, grid, loads, out);
        case 2: return launch_transpose<Real, 2>(pairs, plan, grid, loads, out);
        case 3: return launch_transpose<Real, 3>(pairs, plan, grid, loads, out);
        case 4: return launch_transpose<Real, 4>(pairs, plan, grid, loads, out);
    }
    throw Error("transposed marginal path: " + std::to_string(plan.unselected_bits) +
                " unselected qubits, beyond its limit of " + std::to_string(kTransposeMaxUnselected));
}

template void marginal_probabilities_transpose<float>(const std::complex<float>*, int, const Qubits&, StateLoads,
                                                      double*, const FixedBits&);
template void marginal_probabilities_transpose<double>(const std::complex<double>*, int, const Qubits&, StateLoads,
                                                       double*, const FixedBits&);

}  // namespace gpu
}  // namespace qmarg
