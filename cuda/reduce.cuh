// A deterministic sum over n terms, term(i) computed on the fly in double.
//
// Pass 1: a fixed grid of blocks; each thread adds its grid-stride terms in
// order, the block combines its threads with warp shuffles in a fixed tree and
// writes one partial. Pass 2: one block sums the partials in the same fixed
// tree. No floating-point atomics, so the same input on the same GPU gives the
// same bits on every run.
#pragma once

#include <cuda_runtime.h>

#include "check.cuh"
#include "device_array.cuh"
#include "launch.cuh"

namespace qmarg {
namespace gpu {

constexpr int kReduceThreads = 256;

// Sum of `value` over the threads of a block in a fixed order; the result is
// valid in thread 0. Needs blockDim.x == kReduceThreads (a multiple of 32).
__device__ inline double block_sum(double value) {
    __shared__ double warp_sums[kReduceThreads / 32];
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();  // warp_sums complete before warp 0 reads them
    value = 0;
    if (warp == 0) {
        value = lane < kReduceThreads / 32 ? warp_sums[lane] : 0.0;
        for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    return value;
}

template <class Term>
__global__ void __launch_bounds__(kReduceThreads) sum_partials_kernel(Index n, Term term, double* partials) {
    double sum = 0;
    const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
    for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) sum += term(i);
    sum = block_sum(sum);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void __launch_bounds__(kReduceThreads) sum_final_kernel(const double* partials, int count, double* out) {
    double sum = 0;
    for (int i = threadIdx.x; i < count; i += blockDim.x) sum += partials[i];
    sum = block_sum(sum);
    if (threadIdx.x == 0) *out = sum;
}

// Returns sum_{i<n} term(i). `term` is a device-callable functor taking Index.
template <class Term>
double deterministic_sum(Index n, Term term) {
    const unsigned blocks = grid_stride_blocks(n, kReduceThreads, 4);
    DeviceArray<double> partials(blocks + 1, "reduction partials");
    sum_partials_kernel<<<blocks, kReduceThreads>>>(n, term, partials.data());
    QMARG_CHECK_LAUNCH(sum_partials_kernel);
    sum_final_kernel<<<1, kReduceThreads>>>(partials.data(), static_cast<int>(blocks), partials.data() + blocks);
    QMARG_CHECK_LAUNCH(sum_final_kernel);
    double result = 0;
    copy_to_host(&result, partials.data() + blocks, sizeof(double));
    return result;
}

}  // namespace gpu
}  // namespace qmarg
