// FP64 tensor-core products (DMMA) for the gate kernels: the one instruction,
// and where each lane's fragment elements sit in the matrices it multiplies.
// Every kernel that uses DMMA goes through these helpers, and
// dmma_fragment_product (cuda/apply_matrix_mma.cu) runs them on known integer
// matrices, so a layout mistake shows up as one clear test failure instead of
// as wrong amplitudes somewhere in a gate.
//
// A 16 x 8 x 16 block product: D (16 x 8) = A (16 x 16) * B (16 x 8) + C,
// fragments as for mma.sync.aligned.m16n8k16.row.col.f64 (PTX ISA, "Matrix
// Fragments for mma.m16n8k16 with floating point type", .f64), with groupID
// g = lane >> 2 and t = lane % 4:
//   A: a[i], i = 0..7: row g (i even) or g + 8 (i odd), column 4 * (i / 2) + t
//   B: b[i], i = 0..3: row t + 4 * i, column g
//   C, D: c[i], i = 0..3: row g (i < 2) or g + 8 (i >= 2), column 2 * t + (i & 1)
// This is eight m8n8k4 .f64 products (PTX ISA, "Matrix Fragments for
// mma.m8n8k4 with .f64 floating point type": A: row g, col t; B: row t, col g;
// C: row g, cols 2t, 2t+1) side by side along k, upper and lower 8 rows
// stacked; the kernels think in 16 x 8 x 16 blocks and run them as m8n8k4.
#pragma once

#include <cuda_runtime.h>

namespace qmarg {
namespace gpu {

constexpr int kDmmaRows = 16;  // M of one product
constexpr int kDmmaCols = 8;   // N
constexpr int kDmmaDepth = 16; // K

__device__ __forceinline__ int dmma_group(int lane) { return lane >> 2; }
__device__ __forceinline__ int dmma_thread_in_group(int lane) { return lane & 3; }

// Row and column of A element a[i] held by `lane`.
__device__ __forceinline__ int dmma_a_row(int lane, int i) { return dmma_group(lane) + 8 * (i & 1); }
__device__ __forceinline__ int dmma_a_col(int lane, int i) { return 4 * (i >> 1) + dmma_thread_in_group(lane); }
// Row (k) and column of B element b[i].
__device__ __forceinline__ int dmma_b_row(int lane, int i) { return dmma_thread_in_group(lane) + 4 * i; }
__device__ __forceinline__ int dmma_b_col(int lane) { return dmma_group(lane); }
// Row and column of accumulator element c[i].
__device__ __forceinline__ int dmma_c_row(int lane, int i) { return dmma_group(lane) + 8 * (i >> 1); }
__device__ __forceinline__ int dmma_c_col(int lane, int i) { return 2 * dmma_thread_in_group(lane) + (i & 1); }

// (d0, d1) += a * b, one m8n8k4 .f64 product (sm_80 and later).
__device__ __forceinline__ void dmma_8x8x4(double& d0, double& d1, double a, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
#else
    // Older targets never launch the kernels that call this (the dispatch
    // checks the device); the trap makes a wrong dispatch loud, not silent.
    (void)d0;
    (void)d1;
    (void)a;
    (void)b;
    __trap();
#endif
}
// d += a * b over the warp (every lane must call it, converged), as eight
// m8n8k4 products: for each k block j, the upper rows take a[2j] (row g,
// column 4j + t) and the lower rows a[2j + 1] (row g + 8), both with b[j]
// (row 4j + t, column g), which is exactly the m8n8k4 fragment layout. The
// native m16n8k16 .f64 instruction of sm_90 computes the same product, but
// ptxas needed 180 to 216 registers per thread for it here (spilling at the
// 128 that two blocks per multiprocessor allow), against 120 to 160 this way.
__device__ __forceinline__ void dmma_16x8x16(double (&d)[4], const double (&a)[8], const double (&b)[4]) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        dmma_8x8x4(d[0], d[1], a[2 * j], b[j]);
        dmma_8x8x4(d[2], d[3], a[2 * j + 1], b[j]);
    }
}

}  // namespace gpu
}  // namespace qmarg
