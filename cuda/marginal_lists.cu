// gpu::marginal_probabilities_of_lists: many marginals from one read of the
// state where that is possible (the plan is in qmarg/marginal_queries.hpp).
//
// Three pieces, each adding in a fixed order with no floating-point atomics,
// with shapes that depend only on n and the lists (bitwise repeatable):
//
//  - fold: when the union U of a group's qubits is small (2^|U| doubles, at
//    most 512 KiB and 1/32 of the state's bytes), the U-marginal (U ascending)
//    comes from one BinStationary pass, and each list's marginal is summed out
//    of it: a block of 128 threads per output bin (block_sum of reduce.cuh)
//    when a bin gathers 128 or more U-bins, else a thread per bin. The fold
//    reads L x 2^|U| doubles, mostly from L2: microseconds.
//
//  - qubit masses: all single-qubit marginals in one read, for any n >= 17.
//    A block reads a contiguous 2^17-amplitude chunk; thread t reads, at step
//    s (0..255), the two amplitudes of pair 256 s + t of the chunk with one
//    16/32-byte load, so a warp reads 1 KiB (double) contiguously. Index bit 0
//    varies within the load, bits 1..8 are the thread id (fixed for its walk),
//    bits 9..16 are the step, bits 17.. the block id (fixed for the block). So
//    a thread keeps, in registers, its total, the mass with bit 0 set and the
//    mass with each step bit set (10 accumulators); the mass with a thread-id
//    bit set is the total of the threads with that bit set, and with a block-id
//    bit set the total of those blocks: both credited from totals, not per
//    amplitude. Blocks write 18 partials (bits 0..16 and the total); a second
//    kernel sums them over blocks per qubit in a fixed tree. p(q = 0) is then
//    total - p(q = 1) (exact to about 1e-16 of the total).
//
//  - groups: any other list goes, greedily in the order given, into a group
//    whose union meets the fold rule; a group of one list (or a list too long
//    for any fold) is one BinStationary pass straight into its output.
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "backend/gpu.hpp"
#include "check.cuh"
#include "device_array.cuh"
#include "marginal_common.cuh"
#include "qmarg/bits.hpp"
#include "reduce.cuh"

namespace qmarg {
namespace gpu {
namespace {

// ------------------------------------------------------------------ fold --

constexpr int kFoldThreads = 128;
constexpr int kFoldMaxQubits = 16;  // 2^16 doubles = 512 KiB: stays in L2 while every list is folded
constexpr int kMassMinQubits = 17;  // the qubit-mass kernel's chunk

// Largest union folded from one engine pass. Below 17 qubits every union fits
// (the whole state is at most 2^16 amplitudes, and there is no other one-pass
// kernel for it); above, the U-marginal is kept to 2^(n-4) doubles (1/32 of
// the bytes of a double state) and to kFoldMaxQubits.
int fold_max_qubits(int num_qubits) {
    return num_qubits < kMassMinQubits ? num_qubits : std::min(num_qubits - 4, kFoldMaxQubits);
}

// One list within the union: positions[j] is the bit of the U-marginal's index
// that holds qubits[j]; sorted_positions the same, ascending.
struct FoldList {
    int count = 0;
    int union_count = 0;
    int positions[kMaxMarginalQubits] = {};
    int sorted_positions[kMaxMarginalQubits] = {};
};

__global__ void __launch_bounds__(kFoldThreads)
    fold_blocks_kernel(const double* union_marginal, const __grid_constant__ FoldList list, double* out) {
    const std::uint64_t bin = blockIdx.x;
    const std::uint64_t base = scatter_bits(bin, list.positions, list.count);
    const std::uint64_t items = std::uint64_t{1} << (list.union_count - list.count);
    double sum = 0;
    for (std::uint64_t r = threadIdx.x; r < items; r += kFoldThreads) {
        sum += union_marginal[base | insert_zero_bits(r, list.sorted_positions, list.count)];
    }
    sum = block_sum<kFoldThreads>(sum);
    if (threadIdx.x == 0) out[bin] = sum;
}

__global__ void fold_threads_kernel(const double* union_marginal, const __grid_constant__ FoldList list, double* out) {
    const std::uint64_t bins = std::uint64_t{1} << list.count;
    const std::uint64_t bin = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (bin >= bins) return;
    const std::uint64_t base = scatter_bits(bin, list.positions, list.count);
    const std::uint64_t items = std::uint64_t{1} << (list.union_count - list.count);
    double sum = 0;
    for (std::uint64_t r = 0; r < items; ++r) sum += union_marginal[base | insert_zero_bits(r, list.sorted_positions, list.count)];
    out[bin] = sum;
}

void fold(const double* union_marginal, const Qubits& union_qubits, const Qubits& qubits, double* out) {
    FoldList list;
    list.count = static_cast<int>(qubits.size());
    list.union_count = static_cast<int>(union_qubits.size());
    for (int j = 0; j < list.count; ++j) {
        list.positions[j] = static_cast<int>(std::lower_bound(union_qubits.begin(), union_qubits.end(), qubits[j]) -
                                             union_qubits.begin());
    }
    std::copy(list.positions, list.positions + list.count, list.sorted_positions);
    std::sort(list.sorted_positions, list.sorted_positions + list.count);
    const std::uint64_t bins = std::uint64_t{1} << list.count;
    if (list.union_count - list.count >= 7) {  // at least kFoldThreads U-bins per output bin
        fold_blocks_kernel<<<static_cast<unsigned>(bins), kFoldThreads>>>(union_marginal, list, out);
        QMARG_CHECK_LAUNCH(fold_blocks_kernel);
    } else {
        fold_threads_kernel<<<static_cast<unsigned>((bins + 255) / 256), 256>>>(union_marginal, list, out);
        QMARG_CHECK_LAUNCH(fold_threads_kernel);
    }
}

// --------------------------------------------------------- qubit masses --

constexpr int kMassThreads = 256;
constexpr int kThreadBits = 8;  // index bits 1..8
constexpr int kStepBits = 8;    // index bits 9..16
constexpr int kSteps = 1 << kStepBits;
constexpr int kMassUnroll = 4;
constexpr int kMassValues = kMassMinQubits + 1;  // bits 0..16, then the total
static_assert(kMassThreads == 1 << kThreadBits, "a thread id is index bits 1..8");
static_assert(1 + kThreadBits + kStepBits == kMassMinQubits, "a block's chunk is 2^17 amplitudes");

__device__ __forceinline__ double squared(double re, double im) { return re * re + im * im; }

// partials[block][q]: mass with bit q set (q < 17) of this block's chunk, then its total.
template <class Real>
__global__ void __launch_bounds__(kMassThreads)
    qubit_masses_kernel(const AmpPair<Real>* pairs, double* partials) {
    __shared__ double warp_values[kMassThreads / 32][kMassValues];
    const std::uint64_t first = (static_cast<std::uint64_t>(blockIdx.x) << (kMassMinQubits - 1)) + threadIdx.x;
    double total = 0, bit0 = 0;
    double step[kStepBits] = {};
    for (int s = 0; s < kSteps; s += kMassUnroll) {
        AmpPair<Real> v[kMassUnroll];
#pragma unroll
        for (int u = 0; u < kMassUnroll; ++u) v[u] = pairs[first + static_cast<std::uint64_t>(s + u) * kMassThreads];
#pragma unroll
        for (int u = 0; u < kMassUnroll; ++u) {
            const double p1 = squared(v[u].z, v[u].w);
            const double p = squared(v[u].x, v[u].y) + p1;
            total += p;
            bit0 += p1;
#pragma unroll
            for (int j = 0; j < kStepBits; ++j) {
                if (((s + u) >> j) & 1) step[j] += p;
            }
        }
    }
    // Per value: the warp's fixed shuffle tree, then warps in order.
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
#pragma unroll
    for (int q = 0; q < kMassValues; ++q) {
        double value;
        if (q == 0) {
            value = bit0;
        } else if (q <= kThreadBits) {
            value = ((threadIdx.x >> (q - 1)) & 1u) ? total : 0.0;
        } else if (q < kMassMinQubits) {
            value = step[q - 1 - kThreadBits];
        } else {
            value = total;
        }
        value = warp_sum(value);
        if (lane == 0) warp_values[warp][q] = value;
    }
    __syncthreads();  // every warp's values are stored before they are added
    if (threadIdx.x < kMassValues) {
        double sum = 0;
        for (int w = 0; w < kMassThreads / 32; ++w) sum += warp_values[w][threadIdx.x];
        partials[static_cast<std::uint64_t>(blockIdx.x) * kMassValues + threadIdx.x] = sum;
    }
}

// masses[q] (q < n): the mass with qubit q set; masses[n]: the total. Block q
// adds the blocks' values in a fixed tree (thread t: blocks t, t + 256, ...).
__global__ void __launch_bounds__(kMassThreads)
    qubit_masses_final_kernel(const double* partials, std::uint64_t blocks, int num_qubits, double* masses) {
    const int q = blockIdx.x;
    double sum = 0;
    for (std::uint64_t b = threadIdx.x; b < blocks; b += kMassThreads) {
        const double* row = partials + b * kMassValues;
        if (q < kMassMinQubits) {
            sum += row[q];
        } else if (q == num_qubits || ((b >> (q - kMassMinQubits)) & 1u)) {
            sum += row[kMassMinQubits];
        }
    }
    sum = block_sum<kMassThreads>(sum);
    if (threadIdx.x == 0) masses[q] = sum;
}

// out[offsets[i]..+2] = {total - p(q_i = 1), p(q_i = 1)} for each single-qubit list i.
__global__ void single_qubit_outputs_kernel(const double* masses, int num_qubits, const int* qubits,
                                            const std::uint64_t* offsets, int count, double* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    const double one = masses[qubits[i]];
    out[offsets[i]] = masses[num_qubits] - one;
    out[offsets[i] + 1] = one;
}

template <class Real>
void single_qubit_marginals(const std::complex<Real>* amps, int num_qubits, const std::vector<int>& qubits,
                            const std::vector<std::uint64_t>& offsets, double* out) {
    const std::uint64_t blocks = std::uint64_t{1} << (num_qubits - kMassMinQubits);
    if (blocks > 0x7fffffffu) throw Error("qubit masses: " + std::to_string(blocks) + " blocks exceed the grid limit");
    DeviceArray<double> partials(blocks * kMassValues, "qubit-mass partials");
    DeviceArray<double> masses(num_qubits + 1, "qubit masses");
    DeviceArray<int> device_qubits(qubits.size(), "single-qubit list qubits");
    DeviceArray<std::uint64_t> device_offsets(offsets.size(), "single-qubit list offsets");
    copy_to_device(device_qubits.data(), qubits.data(), qubits.size() * sizeof(int));
    copy_to_device(device_offsets.data(), offsets.data(), offsets.size() * sizeof(std::uint64_t));
    qubit_masses_kernel<Real><<<static_cast<unsigned>(blocks), kMassThreads>>>(
        reinterpret_cast<const AmpPair<Real>*>(amps), partials.data());
    QMARG_CHECK_LAUNCH(qubit_masses_kernel);
    qubit_masses_final_kernel<<<num_qubits + 1, kMassThreads>>>(partials.data(), blocks, num_qubits, masses.data());
    QMARG_CHECK_LAUNCH(qubit_masses_final_kernel);
    const int count = static_cast<int>(qubits.size());
    single_qubit_outputs_kernel<<<(count + 255) / 256, 256>>>(masses.data(), num_qubits, device_qubits.data(),
                                                              device_offsets.data(), count, out);
    QMARG_CHECK_LAUNCH(single_qubit_outputs_kernel);
}

// ---------------------------------------------------------------- groups --

struct Group {
    std::vector<std::size_t> lists;
    Qubits union_qubits;  // ascending
};

Qubits merged(const Qubits& sorted_union, const Qubits& list) {
    Qubits out = sorted_union;
    out.insert(out.end(), list.begin(), list.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

template <class Real>
void run_group(const std::complex<Real>* amps, int num_qubits, const std::vector<Qubits>& lists, const Group& group,
               const std::vector<std::uint64_t>& offsets, double* out) {
    if (group.lists.size() == 1) {
        const std::size_t j = group.lists[0];
        marginal_probabilities_bin_stationary(amps, num_qubits, lists[j], out + offsets[j]);
        return;
    }
    DeviceArray<double> union_marginal(std::size_t{1} << group.union_qubits.size(), "union marginal");
    marginal_probabilities_bin_stationary(amps, num_qubits, group.union_qubits, union_marginal.data());
    for (std::size_t j : group.lists) fold(union_marginal.data(), group.union_qubits, lists[j], out + offsets[j]);
}

}  // namespace

template <class Real>
void marginal_probabilities_of_lists(const std::complex<Real>* amps, int num_qubits, const std::vector<Qubits>& lists,
                                     double* out) {
    std::vector<std::uint64_t> offsets(lists.size());
    std::uint64_t offset = 0;
    Qubits all;
    for (std::size_t j = 0; j < lists.size(); ++j) {
        offsets[j] = offset;
        offset += std::uint64_t{1} << lists[j].size();
        all = merged(all, lists[j]);
    }
    const int fold_max = fold_max_qubits(num_qubits);
    if (static_cast<int>(all.size()) <= fold_max) {
        Group group;
        group.union_qubits = all;
        for (std::size_t j = 0; j < lists.size(); ++j) group.lists.push_back(j);
        run_group(amps, num_qubits, lists, group, offsets, out);
        return;
    }
    // Here n >= kMassMinQubits (below it every union folds).
    std::vector<int> single_qubits;
    std::vector<std::uint64_t> single_offsets;
    std::vector<Group> groups;
    for (std::size_t j = 0; j < lists.size(); ++j) {
        const Qubits& list = lists[j];
        if (list.size() == 1) {
            single_qubits.push_back(list[0]);
            single_offsets.push_back(offsets[j]);
            continue;
        }
        if (!groups.empty()) {
            Qubits joined = merged(groups.back().union_qubits, list);
            if (static_cast<int>(joined.size()) <= fold_max) {
                groups.back().lists.push_back(j);
                groups.back().union_qubits = std::move(joined);
                continue;
            }
        }
        Group group;
        group.lists.push_back(j);
        group.union_qubits = merged({}, list);
        groups.push_back(std::move(group));
    }
    if (!single_qubits.empty()) single_qubit_marginals(amps, num_qubits, single_qubits, single_offsets, out);
    for (const Group& group : groups) run_group(amps, num_qubits, lists, group, offsets, out);
}

template void marginal_probabilities_of_lists<float>(const std::complex<float>*, int, const std::vector<Qubits>&,
                                                     double*);
template void marginal_probabilities_of_lists<double>(const std::complex<double>*, int, const std::vector<Qubits>&,
                                                      double*);

}  // namespace gpu
}  // namespace qmarg
