// gpu::conditional_marginal_probabilities and gpu::outcome_probability: sums of
// |a_i|^2 over only the amplitudes whose condition qubits hold given values,
// so that a condition on m qubits reads 2^(n-m) amplitudes, not 2^n.
//
// Conditional marginal. Each bin b of the k listed qubits owns 2^f amplitudes
// (f = n - k - m free qubits), numbered by a counter r whose bits are deposited
// at the free qubits' positions. Two shapes, chosen from (n, k, m) alone so the
// order of every addition is fixed (no floating-point atomics: bitwise
// repeatable):
//  - f >= 8: blocks of 256 threads, one block per (bin, chunk of r). The low 8
//    bits of r are the thread id, so a warp reads 32 amplitudes that differ
//    only in the lowest free qubits (contiguous when qubits 0..4 are free); the
//    rest of r is walked by a subset counter, 4 loads in flight. The block sums
//    in a fixed tree (block_sum of reduce.cuh); chunks of one bin are summed by
//    a second kernel in chunk order. Chunks bring the grid to about 2^12 blocks.
//  - f < 8 (a bin has under 256 amplitudes, so k is close to n - m): one thread
//    per bin sums its amplitudes in order.
// A condition on low qubits, or listed low qubits, leaves the lowest free
// qubits high in the index: a warp's 32 loads are then strided and the read
// slows accordingly (documented in qmarg/marginal_queries.hpp).
//
// Outcome probability: the tree reduction of reduce.cuh over the 2^(n-k)
// amplitudes of the outcome; item j maps to its index by inserting the fixed
// bits (insert_zero_bits of qmarg/bits.hpp, as the CPU reference does).
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "backend/gpu.hpp"
#include "check.cuh"
#include "device_array.cuh"
#include "device_complex.cuh"
#include "marginal_common.cuh"
#include "qmarg/bits.hpp"
#include "reduce.cuh"

namespace qmarg {
namespace gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kLaneCounterBits = 8;  // log2(kThreads): the bits of r a thread's id fixes
constexpr int kUnroll = 4;
constexpr int kLogTargetBlocks = 12;
constexpr int kLogMinSteps = 2;  // aim for at least kUnroll loads per thread

struct ConditionalPlan {
    QubitList qubits;           // the marginal's qubits, for the bin's index bits
    std::uint64_t fixed = 0;    // index bits the condition sets to 1
    std::uint64_t free_mask = 0;  // index bits of the free qubits
    std::uint64_t lane_mask = 0;  // the lowest kLaneCounterBits free bits (the thread id)
    std::uint64_t step_mask = 0;  // the other free bits (walked)
    int log_chunks = 0;         // chunks of one bin, each its own block
    int log_steps = 0;          // loads per thread
};

// The next subset of `mask` after `subset`, in counting order.
__device__ __forceinline__ std::uint64_t next_subset(std::uint64_t subset, std::uint64_t mask) {
    return ((subset | ~mask) + 1) & mask;
}

template <class Real>
__global__ void __launch_bounds__(kThreads)
    conditional_blocks_kernel(const DeviceComplex<Real>* amps, const __grid_constant__ ConditionalPlan plan,
                              double* dest) {
    const std::uint64_t block = blockIdx.x;
    const std::uint64_t bin = block >> plan.log_chunks;
    const std::uint64_t chunk = block & ((std::uint64_t{1} << plan.log_chunks) - 1);
    const std::uint64_t base =
        scatter_bits(bin, plan.qubits.qubits, plan.qubits.count) | plan.fixed | deposit_bits(threadIdx.x, plan.lane_mask);
    const std::uint64_t steps = std::uint64_t{1} << plan.log_steps;
    std::uint64_t walk = deposit_bits(chunk << plan.log_steps, plan.step_mask);

    double acc[kUnroll] = {};
    for (std::uint64_t s = 0; s < steps; s += kUnroll) {
        DeviceComplex<Real> v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            if (s + u < steps) {
                v[u] = amps[base | walk];
                walk = next_subset(walk, plan.step_mask);
            }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            if (s + u < steps) acc[u] += probability(v[u]);
    }
    const double sum = block_sum<kThreads>((acc[0] + acc[1]) + (acc[2] + acc[3]));
    if (threadIdx.x == 0) dest[block] = sum;
}

// out[bin] = the chunks of `bin` added in a fixed tree: thread t takes chunks
// t, t + kThreads, ... in order, then block_sum.
__global__ void __launch_bounds__(kThreads) sum_chunks_kernel(const double* partials, int log_chunks, double* out) {
    const std::uint64_t chunks = std::uint64_t{1} << log_chunks;
    const double* row = partials + static_cast<std::uint64_t>(blockIdx.x) * chunks;
    double sum = 0;
    for (std::uint64_t c = threadIdx.x; c < chunks; c += kThreads) sum += row[c];
    sum = block_sum<kThreads>(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

// f < 8: one thread per bin over its 2^f amplitudes, in counting order.
template <class Real>
__global__ void conditional_threads_kernel(const DeviceComplex<Real>* amps, const __grid_constant__ ConditionalPlan plan,
                                           double* out) {
    const std::uint64_t bins = std::uint64_t{1} << plan.qubits.count;
    const std::uint64_t bin = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (bin >= bins) return;
    const std::uint64_t base = scatter_bits(bin, plan.qubits.qubits, plan.qubits.count) | plan.fixed;
    double sum = 0;
    std::uint64_t rest = 0;
    do {
        sum += probability(amps[base | rest]);
        rest = next_subset(rest, plan.free_mask);
    } while (rest != 0);
    out[bin] = sum;
}

// The sum of |a|^2 over the amplitudes of one outcome (an Op of reduce.cuh).
template <class Real>
struct OutcomeTerm {
    using Acc = double;
    using Item = DeviceComplex<Real>;
    const Item* amps;
    std::uint64_t base;  // the outcome's bits at the listed qubits
    int k;
    int sorted_qubits[kMaxMarginalQubits];

    __device__ Item load(Index j) const { return __ldg(amps + (base | insert_zero_bits(j, sorted_qubits, k))); }
    __device__ Acc term(const Item& v, Index) const { return probability(v); }
};

}  // namespace

template <class Real>
void conditional_marginal_probabilities(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                        const Qubits& condition_qubits, const std::vector<int>& condition_values,
                                        double* out) {
    ConditionalPlan plan;
    plan.qubits = make_qubit_list(qubits);
    const int k = plan.qubits.count;
    const int m = static_cast<int>(condition_qubits.size());
    const int f = num_qubits - k - m;
    std::uint64_t taken = 0;
    for (int q : qubits) taken |= std::uint64_t{1} << q;
    for (std::size_t j = 0; j < condition_qubits.size(); ++j) {
        taken |= std::uint64_t{1} << condition_qubits[j];
        if (condition_values[j]) plan.fixed |= std::uint64_t{1} << condition_qubits[j];
    }
    plan.free_mask = ((std::uint64_t{1} << num_qubits) - 1) & ~taken;
    const auto* device_amps = reinterpret_cast<const DeviceComplex<Real>*>(amps);
    const std::uint64_t bins = std::uint64_t{1} << k;

    if (f < kLaneCounterBits) {
        const unsigned blocks = static_cast<unsigned>((bins + kThreads - 1) / kThreads);
        conditional_threads_kernel<Real><<<blocks, kThreads>>>(device_amps, plan, out);
        QMARG_CHECK_LAUNCH(conditional_threads_kernel);
        return;
    }
    plan.lane_mask = deposit_bits((std::uint64_t{1} << kLaneCounterBits) - 1, plan.free_mask);
    plan.step_mask = plan.free_mask & ~plan.lane_mask;
    const int step_bits = f - kLaneCounterBits;
    plan.log_chunks = std::max(0, std::min(kLogTargetBlocks - k, step_bits - kLogMinSteps));
    plan.log_steps = step_bits - plan.log_chunks;
    const std::uint64_t blocks = bins << plan.log_chunks;
    if (blocks > 0x7fffffffu) {
        throw Error("conditional marginal: " + std::to_string(blocks) + " blocks exceed the grid limit");
    }
    if (plan.log_chunks == 0) {
        conditional_blocks_kernel<Real><<<static_cast<unsigned>(blocks), kThreads>>>(device_amps, plan, out);
        QMARG_CHECK_LAUNCH(conditional_blocks_kernel);
        return;
    }
    DeviceArray<double> partials(blocks, "conditional marginal chunk sums");
    conditional_blocks_kernel<Real><<<static_cast<unsigned>(blocks), kThreads>>>(device_amps, plan, partials.data());
    QMARG_CHECK_LAUNCH(conditional_blocks_kernel);
    sum_chunks_kernel<<<static_cast<unsigned>(bins), kThreads>>>(partials.data(), plan.log_chunks, out);
    QMARG_CHECK_LAUNCH(sum_chunks_kernel);
    // `partials` returns to the stream-ordered pool after the kernels that use it.
}

template <class Real>
double outcome_probability(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                           std::uint64_t outcome) {
    OutcomeTerm<Real> op{};
    op.amps = reinterpret_cast<const DeviceComplex<Real>*>(amps);
    op.k = static_cast<int>(qubits.size());
    op.base = scatter_bits(outcome, qubits.data(), op.k);
    Qubits sorted_qubits = qubits;
    std::sort(sorted_qubits.begin(), sorted_qubits.end());
    std::copy(sorted_qubits.begin(), sorted_qubits.end(), op.sorted_qubits);
    return tree_reduce(op, Index{1} << (num_qubits - op.k));
}

#define QMARG_INSTANTIATE(Real)                                                                                     \
    template void conditional_marginal_probabilities<Real>(const std::complex<Real>*, int, const Qubits&,          \
                                                           const Qubits&, const std::vector<int>&, double*);       \
    template double outcome_probability<Real>(const std::complex<Real>*, int, const Qubits&, std::uint64_t);
QMARG_INSTANTIATE(float)
QMARG_INSTANTIATE(double)
#undef QMARG_INSTANTIATE

}  // namespace gpu
}  // namespace qmarg
