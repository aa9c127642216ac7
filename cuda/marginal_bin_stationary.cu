// The bin-stationary marginal engine (MarginalStrategy::BinStationary).
//
// Each thread walks amplitudes along index bits that are NOT selected, so the
// bin it adds into never changes while it streams: it accumulates in two
// registers (the two amplitudes of one vector load), with no atomics. Bits are
// assigned to roles by the host planner below (docs/marginal_engine.md has the
// full argument):
//
//   bit 0           the two amplitudes of one 16-byte (float) / 32-byte (double) load
//   bits 1..5       lane id: a warp reads 64 contiguous amplitudes, coalesced
//   3 more bits     warp id: selected bits first, so a warp owns fixed bins
//   unselected rest inner loop ("tasks" of a segment): the thread's bins are fixed
//   selected rest   outer loop: one segment per value; bins change between segments
//
// At the end of a segment the threads that share a bin are combined in a fixed
// tree (shuffles over unselected lane bits, shared memory over unselected warp
// bits) and each bin is written once: directly to the output, or to a partial
// array that a second kernel sums in a fixed tree when a segment is split over
// several blocks. There are no floating-point atomics, and the launch shape is
// a function of (n, k, qubits) alone, so results are bitwise identical on
// every run and every GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "check.cuh"
#include "device_array.cuh"
#include "marginal_bin_stationary.cuh"
#include "qmarg/bits.hpp"
#include "qmarg/error.hpp"
#include "reduce.cuh"

namespace qmarg {
namespace gpu {
namespace {

constexpr int kLaneBits = 5;
constexpr int kWarpBits = 3;
constexpr int kWarps = 1 << kWarpBits;
constexpr int kThreads = 32 * kWarps;
constexpr int kIdentityBits = 1 + kLaneBits + kWarpBits;  // bits fixed by a thread's identity
constexpr int kUnroll = 8;                                // independent loads in flight per thread
constexpr int kMaxOuterBits = 64;

// Everything the kernel needs, built on the host; passed by value (< 4 KiB).
struct Plan {
    std::uint64_t lane_bin[32];      // bin bits set by each lane's index bits 1..5
    std::uint64_t warp_offset[kWarps];  // index bits set by each warp id
    std::uint64_t warp_bin[kWarps];     // bin bits set by each warp id
    std::uint64_t bit0_bin;          // bin bit of index bit 0 (0 when qubit 0 is not selected)
    std::uint64_t inner_mask;        // index bits of the inner (unselected) task bits
    // Outer (selected) task bits, ascending index position: flip_*[t] is what
    // changes in the index / the bin when a segment counter's lowest t+1 bits flip.
    std::uint64_t flip_index[kMaxOuterBits];
    std::uint64_t flip_bin[kMaxOuterBits];
    std::uint64_t bins;              // 2^k
    unsigned nonselected_lane_mask;  // lane-id bits whose index bit is not selected
    unsigned nonselected_warp_mask;  // warp-id bits whose index bit is not selected
    int bit0_selected;
    int outer_bits;                  // s
    int inner_bits;                  // u
    int log_segment_tasks;           // tasks a block runs per segment: min(u, log tau)
    int log_segments_per_block;      // M
    int log_parts;                   // P: blocks sharing one segment (then M = 0)
};

template <class Real>
struct Vec2;  // two interleaved complex amplitudes in one load
template <>
struct Vec2<float> {
    using type = float4;
};
template <>
struct Vec2<double> {
    using type = double4_32a;  // 32-byte aligned: two double-complex amplitudes
};

// Inserts `value`'s bits, lowest first, at the set bits of `mask`.
__host__ __device__ inline std::uint64_t deposit(std::uint64_t value, std::uint64_t mask) {
    std::uint64_t out = 0;
    for (std::uint64_t bit = 1; mask != 0; bit <<= 1) {
        const std::uint64_t lowest = mask & (~mask + 1);
        if (value & bit) out |= lowest;
        mask ^= lowest;
    }
    return out;
}

// The index and bin offsets of segment `segment` (outer bits deposited).
__device__ inline void segment_offsets(const Plan& plan, std::uint64_t segment, std::uint64_t& index,
                                       std::uint64_t& bin) {
    index = 0;
    bin = 0;
    for (int t = 0; t < plan.outer_bits; ++t) {
        if ((segment >> t) & 1u) {
            index ^= plan.flip_index[t] ^ (t ? plan.flip_index[t - 1] : 0);
            bin ^= plan.flip_bin[t] ^ (t ? plan.flip_bin[t - 1] : 0);
        }
    }
}

template <class Real>
__global__ void __launch_bounds__(kThreads) bin_stationary_kernel(const typename Vec2<Real>::type* amps2, Plan plan,
                                                                  double* out, double* partials) {
    __shared__ double warp_values[kWarps][2][32];
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    const std::uint64_t thread_index = (static_cast<std::uint64_t>(lane) << 1) | plan.warp_offset[warp];
    const std::uint64_t thread_bin = plan.lane_bin[lane] | plan.warp_bin[warp];
    const bool writer_lane = (lane & plan.nonselected_lane_mask) == 0;

    const std::uint64_t unit = blockIdx.x;
    const int log_parts = plan.log_parts;
    const std::uint64_t part = unit & ((std::uint64_t{1} << log_parts) - 1);
    std::uint64_t segment = (unit >> log_parts) << plan.log_segments_per_block;
    const std::uint64_t segments = std::uint64_t{1} << plan.log_segments_per_block;
    const std::uint64_t tasks = std::uint64_t{1} << plan.log_segment_tasks;
    double* dest = log_parts ? partials + part * plan.bins : out;
    // The first inner offset of this block's part of its segment.
    const std::uint64_t inner_first = deposit(part << plan.log_segment_tasks, plan.inner_mask);
    const std::uint64_t not_inner = ~plan.inner_mask;

    std::uint64_t segment_index, segment_bin;
    segment_offsets(plan, segment, segment_index, segment_bin);

    for (std::uint64_t m = 0; m < segments; ++m) {
        const std::uint64_t base = thread_index | segment_index;
        double acc0 = 0, acc1 = 0;
        std::uint64_t inner = inner_first;
        for (std::uint64_t task = 0; task < tasks; task += kUnroll) {
            typename Vec2<Real>::type v[kUnroll];
            // Offsets first, then all loads, then the arithmetic: kUnroll loads in flight.
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) {
                if (task + j < tasks) {
                    v[j] = amps2[(base | inner) >> 1];
                    inner = ((inner | not_inner) + 1) & plan.inner_mask;  // next subset of inner_mask
                }
            }
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) {
                if (task + j < tasks) {
                    acc0 += static_cast<double>(v[j].x) * v[j].x + static_cast<double>(v[j].y) * v[j].y;
                    acc1 += static_cast<double>(v[j].z) * v[j].z + static_cast<double>(v[j].w) * v[j].w;
                }
            }
        }

        // Combine the threads that share a bin, in a fixed order.
        if (!plan.bit0_selected) {
            acc0 += acc1;
            acc1 = 0;
        }
#pragma unroll
        for (int b = 0; b < kLaneBits; ++b) {
            if ((plan.nonselected_lane_mask >> b) & 1u) {
                acc0 += __shfl_xor_sync(0xffffffffu, acc0, 1 << b);
                acc1 += __shfl_xor_sync(0xffffffffu, acc1, 1 << b);
            }
        }
        if (plan.nonselected_warp_mask != 0) {
            // Lanes that hold their warp's bins publish them; the warps whose
            // unselected warp bits are zero then sum over those bits in order.
            if (writer_lane) {
                warp_values[warp][0][lane] = acc0;
                warp_values[warp][1][lane] = acc1;
            }
            __syncthreads();  // all warps published before any reads
            if (writer_lane && (warp & plan.nonselected_warp_mask) == 0) {
                acc0 = 0;
                acc1 = 0;
                for (unsigned w = 0; w < kWarps; ++w) {
                    if ((w & ~plan.nonselected_warp_mask) == static_cast<unsigned>(warp)) {
                        acc0 += warp_values[w][0][lane];
                        acc1 += warp_values[w][1][lane];
                    }
                }
            }
            __syncthreads();  // reads done before the next segment overwrites warp_values
        }
        if (writer_lane && (warp & plan.nonselected_warp_mask) == 0) {
            const std::uint64_t bin = thread_bin | segment_bin;
            dest[bin] = acc0;
            if (plan.bit0_selected) dest[bin | plan.bit0_bin] = acc1;
        }

        // Next segment: the counter's trailing ones and the next zero flip.
        if (m + 1 < segments) {
            const int t = __ffsll(static_cast<long long>(~segment)) - 1;
            segment_index ^= plan.flip_index[t];
            segment_bin ^= plan.flip_bin[t];
            ++segment;
        }
    }
}

// out[b] = sum over p of partials[p * bins + b], in a fixed order: a block per
// bin (fixed-tree block_sum) when there are many parts, else a thread per bin.
__global__ void __launch_bounds__(kReduceThreads) sum_parts_by_block(const double* partials, std::uint64_t bins,
                                                                     std::uint64_t parts, double* out) {
    const std::uint64_t bin = blockIdx.x;
    double sum = 0;
    for (std::uint64_t p = threadIdx.x; p < parts; p += blockDim.x) sum += partials[p * bins + bin];
    sum = block_sum(sum);
    if (threadIdx.x == 0) out[bin] = sum;
}

__global__ void sum_parts_by_thread(const double* partials, std::uint64_t bins, std::uint64_t parts, double* out) {
    const std::uint64_t bin = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (bin >= bins) return;
    double sum = 0;
    for (std::uint64_t p = 0; p < parts; ++p) sum += partials[p * bins + bin];
    out[bin] = sum;
}

// Small states (n < kMinQubits): a thread per bin sums its 2^(n-k) amplitudes.
template <class Real>
__global__ void small_state_kernel(const Real* amps, int n, QubitList qubits, double* out) {
    const std::uint64_t bins = std::uint64_t{1} << qubits.count;
    const std::uint64_t bin = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (bin >= bins) return;
    std::uint64_t selected_mask = 0;
    for (int j = 0; j < qubits.count; ++j) selected_mask |= std::uint64_t{1} << qubits.qubit[j];
    const std::uint64_t others = ((std::uint64_t{1} << n) - 1) & ~selected_mask;
    const std::uint64_t base = scatter_bits(bin, qubits.qubit, qubits.count);
    double sum = 0;
    std::uint64_t rest = 0;
    do {
        const std::uint64_t i = base | rest;
        const double re = amps[2 * i], im = amps[2 * i + 1];
        sum += re * re + im * im;
        rest = ((rest | ~others) + 1) & others;
    } while (rest != 0);
    out[bin] = sum;
}

constexpr int kMinQubits = kIdentityBits + 3;
// tau, the tasks per block: 2^(n - 9 - 13) for large n (about 8192 blocks),
// at least 2^2. A function of n alone: the summation order must not depend on
// the GPU the code runs on.
constexpr int kLogTargetBlocks = 13;
constexpr int kLogMinTasks = 2;

struct Launch {
    Plan plan;
    std::uint64_t blocks;
    std::uint64_t parts;
};

Launch make_plan(int n, const Qubits& qubits) {
    const int k = static_cast<int>(qubits.size());
    std::vector<std::uint64_t> bin_of(n, 0);  // bin bit contributed by each index bit
    for (int j = 0; j < k; ++j) bin_of[qubits[j]] = std::uint64_t{1} << j;
    auto selected = [&](int bit) { return bin_of[bit] != 0; };

    Launch launch{};
    Plan& plan = launch.plan;
    plan.bins = std::uint64_t{1} << k;
    plan.bit0_selected = selected(0);
    plan.bit0_bin = bin_of[0];
    for (int b = 0; b < kLaneBits; ++b)
        if (!selected(b + 1)) plan.nonselected_lane_mask |= 1u << b;
    for (int lane = 0; lane < 32; ++lane) {
        plan.lane_bin[lane] = 0;
        for (int b = 0; b < kLaneBits; ++b)
            if ((lane >> b) & 1) plan.lane_bin[lane] |= bin_of[b + 1];
    }

    // Warp bits: the lowest selected bits above the lanes first, then unselected ones.
    std::vector<int> rest_selected, rest_unselected;
    for (int bit = 1 + kLaneBits; bit < n; ++bit) (selected(bit) ? rest_selected : rest_unselected).push_back(bit);
    std::vector<int> warp_bits;
    for (int bit : rest_selected)
        if (static_cast<int>(warp_bits.size()) < kWarpBits) warp_bits.push_back(bit);
    for (int bit : rest_unselected)
        if (static_cast<int>(warp_bits.size()) < kWarpBits) warp_bits.push_back(bit);
    for (int b = 0; b < kWarpBits; ++b)
        if (!selected(warp_bits[b])) plan.nonselected_warp_mask |= 1u << b;
    for (int w = 0; w < kWarps; ++w) {
        plan.warp_offset[w] = 0;
        plan.warp_bin[w] = 0;
        for (int b = 0; b < kWarpBits; ++b) {
            if ((w >> b) & 1) {
                plan.warp_offset[w] |= std::uint64_t{1} << warp_bits[b];
                plan.warp_bin[w] |= bin_of[warp_bits[b]];
            }
        }
    }

    // The remaining bits: unselected ones form the inner loop, selected ones the segments.
    auto is_warp_bit = [&](int bit) { return std::find(warp_bits.begin(), warp_bits.end(), bit) != warp_bits.end(); };
    std::vector<int> outer;
    for (int bit = 1 + kLaneBits; bit < n; ++bit) {
        if (is_warp_bit(bit)) continue;
        if (selected(bit)) {
            outer.push_back(bit);
        } else {
            plan.inner_mask |= std::uint64_t{1} << bit;
            ++plan.inner_bits;
        }
    }
    plan.outer_bits = static_cast<int>(outer.size());
    std::uint64_t flip_index = 0, flip_bin = 0;
    for (int t = 0; t < kMaxOuterBits; ++t) {
        if (t < plan.outer_bits) {
            flip_index |= std::uint64_t{1} << outer[t];
            flip_bin |= bin_of[outer[t]];
        }
        plan.flip_index[t] = flip_index;
        plan.flip_bin[t] = flip_bin;
    }

    const int task_bits = n - kIdentityBits;  // = inner_bits + outer_bits
    const int log_tau = std::max(kLogMinTasks, task_bits - kLogTargetBlocks);
    if (plan.inner_bits >= log_tau) {
        // Long segments: cut each into P parts of tau tasks.
        plan.log_segment_tasks = log_tau;
        plan.log_segments_per_block = 0;
        plan.log_parts = plan.inner_bits - log_tau;
    } else {
        // Short segments: M whole segments per block.
        plan.log_segment_tasks = plan.inner_bits;
        plan.log_segments_per_block = std::min(plan.outer_bits, log_tau - plan.inner_bits);
        plan.log_parts = 0;
    }
    launch.parts = std::uint64_t{1} << plan.log_parts;
    launch.blocks = std::uint64_t{1} << (plan.outer_bits - plan.log_segments_per_block + plan.log_parts);
    return launch;
}

}  // namespace

template <class Real>
void bin_stationary_marginal(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits, double* out) {
    const int k = static_cast<int>(qubits.size());
    if (num_qubits < kMinQubits) {
        const QubitList list = make_qubit_list(qubits);
        const std::uint64_t bins = std::uint64_t{1} << k;
        const unsigned blocks = static_cast<unsigned>((bins + 255) / 256);
        small_state_kernel<Real><<<blocks, 256>>>(reinterpret_cast<const Real*>(amps), num_qubits, list, out);
        QMARG_CHECK_LAUNCH(small_state_kernel);
        return;
    }
    const Launch launch = make_plan(num_qubits, qubits);
    if (launch.blocks > 0x7fffffffu) {
        throw Error("BinStationary: " + std::to_string(launch.blocks) + " blocks exceed the grid limit");
    }
    const auto* amps2 = reinterpret_cast<const typename Vec2<Real>::type*>(amps);
    if (launch.parts == 1) {
        bin_stationary_kernel<Real>
            <<<static_cast<unsigned>(launch.blocks), kThreads>>>(amps2, launch.plan, out, nullptr);
        QMARG_CHECK_LAUNCH(bin_stationary_kernel);
        return;
    }
    const std::uint64_t bins = launch.plan.bins;
    DeviceArray<double> partials(launch.parts * bins, "BinStationary partial bins");
    bin_stationary_kernel<Real>
        <<<static_cast<unsigned>(launch.blocks), kThreads>>>(amps2, launch.plan, out, partials.data());
    QMARG_CHECK_LAUNCH(bin_stationary_kernel);
    if (launch.parts >= 64) {
        sum_parts_by_block<<<static_cast<unsigned>(bins), kReduceThreads>>>(partials.data(), bins, launch.parts, out);
        QMARG_CHECK_LAUNCH(sum_parts_by_block);
    } else {
        sum_parts_by_thread<<<static_cast<unsigned>((bins + 255) / 256), 256>>>(partials.data(), bins, launch.parts,
                                                                                 out);
        QMARG_CHECK_LAUNCH(sum_parts_by_thread);
    }
    // `partials` is freed on return; cudaFree waits for the kernels that use it.
}

template void bin_stationary_marginal<float>(const std::complex<float>*, int, const Qubits&, double*);
template void bin_stationary_marginal<double>(const std::complex<double>*, int, const Qubits&, double*);

}  // namespace gpu
}  // namespace qmarg
