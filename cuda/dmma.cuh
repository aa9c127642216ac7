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
// On sm_90 this runs as two m16n8k8 .f64 products, one per half of the k
// range; on sm_80 and sm_89, which lack that shape, as eight m8n8k4 .f64
// products side by side along k, upper and lower 8 rows stacked. Kernels may
// also call the 16 x 8 x 8 halves themselves (dmma_16x8x8). Measured on
// an H100 (eight independent accumulators per warp, every multiprocessor
// busy):
//   m8n8k4   33 TFLOP/s  (half rate on sm_90: the sm_80 shape)
//   m16n8k4  66 TFLOP/s with 8 warps per multiprocessor, 60 with 4 (a
//            native DMMA.16x8x4 on sm_90; m16n8k8 64 with 4 in that run),
//            but the gate kernels with each m16n8k8 split into two ran 6 to
//            20 % slower, in either order of the halves (x_real_slot in
//            apply_matrix_mma_common.cuh), so none uses it
//   m16n8k8  66 TFLOP/s
//   m16n8k16 66 TFLOP/s, but ptxas needed 180 to 216 registers per thread for
//            it in the gate kernel (spilling at the 128 that two blocks per
//            multiprocessor allow), so the kernels use two m16n8k8 instead.
//            With the former real-form fragments (a product's k index over
//            the real and imaginary parts of 4 rows) it needed 128 to 170
//            registers and more register moves, and the gates ran 0 to 4 %
//            slower at k = 6..9 and 13 % at k = 10.
// One warp per scheduler reaches these rates (m16n8k8: 65.6 TFLOP/s with 4
// warps per multiprocessor, 66.3 with 8): ptxas paces a warp's DMMAs with
// two NOPs each (four after m16n8k16) at about the pipe's rate, so more warps
// only help to hide the rest of a kernel's stream. DADDs run on the same
// pipe: one independent DADD after each of 12 DMMAs brought m16n8k8 to 48 to
// 50 TFLOP/s, one after every third to 58 to 61 (about 9 to 11 cycles of the
// pipe a DADD, a third of a DMMA), while FADDs cost nothing. Gauss's sums
// (multiply_chunk) are such DADDs.
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

// (d0, d1) += a * b, one m8n8k4 .f64 product: A row g, col t; B row t,
// col g; C row g, cols 2t, 2t + 1.
__device__ __forceinline__ void dmma_8x8x4(double& d0, double& d1, double a, double b) {
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(d0), "+d"(d1)
        : "d"(a), "d"(b));
}

// d += a * b over the warp (every lane must call it, converged) for a 16 x 8 x
// 8 block: the first or second half of the k range of a 16 x 8 x 16 block,
// a = a[0..3] or a[4..7] and b = b[0..1] or b[2..3] of the layout above (PTX
// ISA, "Matrix Fragments for mma.m16n8k8", .f64: a0 (g, t), a1 (g + 8, t),
// a2 (g, t + 4), a3 (g + 8, t + 4); b0 (t, g), b1 (t + 4, g); c as above).
// One m16n8k8 product on sm_90, four m8n8k4 products on sm_80 and sm_89.
__device__ __forceinline__ void dmma_16x8x8(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    dmma_8x8x4(d[0], d[1], a[0], b[0]);
    dmma_8x8x4(d[2], d[3], a[1], b[0]);
    dmma_8x8x4(d[0], d[1], a[2], b[1]);
    dmma_8x8x4(d[2], d[3], a[3], b[1]);
#else
    // Older targets never launch the kernels that call this (the dispatch
    // checks the device); the trap makes a wrong dispatch loud, not silent.
    (void)d;
    (void)a;
    (void)b;
    __trap();
#endif
}

// d += a * b over the warp for a whole 16 x 8 x 16 block, as two 16 x 8 x 8
// products.
__device__ __forceinline__ void dmma_16x8x16(double (&d)[4], const double (&a)[8], const double (&b)[4]) {
    dmma_16x8x8(d, reinterpret_cast<const double(&)[4]>(a[0]), reinterpret_cast<const double(&)[2]>(b[0]));
    dmma_16x8x8(d, reinterpret_cast<const double(&)[4]>(a[4]), reinterpret_cast<const double(&)[2]>(b[2]));
}

}  // namespace gpu
}  // namespace qmarg
