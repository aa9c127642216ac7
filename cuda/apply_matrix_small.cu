// Dense gates on k <= kMaxSmallTargets (5) targets. Each thread owns whole
// groups (a group: the 2^k amplitudes one matrix-vector product mixes), loads a
// group into registers, multiplies it by the matrix and writes it back. Groups
// are disjoint, so the product needs neither atomics nor barriers.
//
// The matrix travels as a kernel parameter (2^2k complex values, at most 16 KiB
// in double): nothing to upload or free, and concurrent gates cannot see each
// other's matrices. Every loop over it is unrolled, so up to 2 KiB each
// multiply-add reads its matrix entry straight from the constant bank. Larger
// matrices (float k = 5, double k = 4 and 5) are copied to shared memory once
// per block and read from there, 16 bytes per load, the same address in every
// lane (a broadcast): see matrix_operands. At 8 * 2^k flops per amplitude this
// stays below the FP64 rate needed to keep up with memory for k <= 5, so both
// kernels aim at the copy roofline.
//
// Two kernels, chosen by where the targets are (and a form of the staged one
// for targets on the lowest qubits: apply_matrix_small_lowest_kernel):
//  direct  no target among the lowest bits that share a 128-byte line (3 bits
//          for double, 4 for float). The group number is spread over the free
//          qubits lowest first, so neighbouring threads hold neighbouring
//          addresses and every warp load or store covers whole lines. No
//          shared memory but the matrix's copy, where it has one.
//  staged  a target among those bits. A group is then a few neighbouring
//          amplitudes, and threads side by side would stride through memory.
//          So a block loads a whole tile (TileLayout: the targets and the
//          lowest free qubits) into shared memory in local order (whole lines
//          again), each thread multiplies its groups there, and the block
//          writes the tile back in local order.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "apply_matrix.cuh"
#include "apply_matrix_tile.cuh"
#include "check.cuh"
#include "device_complex.cuh"
#include "qmarg/bits.hpp"

namespace qmarg {
namespace gpu {
namespace {

constexpr int kDirectThreads = 128;
constexpr int kStagedThreads = 128;

// Lowest qubits sharing a 128-byte line.
template <class Real>
constexpr int line_bits() {
    return sizeof(Real) == 8 ? 3 : 4;
}

// Staged tiles of 32 KiB: 2^11 double or 2^12 float amplitudes.
template <class Real>
constexpr int staged_tile_bits() {
    return sizeof(Real) == 8 ? 11 : 12;
}

template <class Real, int K>
struct alignas(16) SmallMatrix {
    DeviceComplex<Real> entry[(1 << K) * (1 << K)];  // row-major
};

// Matrices up to this size are read from the constant bank, larger ones from
// shared memory. Every warp walks the whole matrix once per group. From the
// constant bank, a walk of 2 KiB (float k = 4) keeps up with memory, but the
// staged kernel, whose multiplies all run between the same two barriers, fell
// far behind with 4 and 8 KiB matrices (the constant cache missing, we think;
// not measured directly). Measured on an H100 (fraction of the copy roofline,
// n = 28 float / 30 double, forced onto this kernel with apply_matrix_bench
// --fma_paths=1, the two forms alternating, two runs each), constant bank ->
// shared memory: float k = 5 low 0.16 -> 0.68-0.69, scattered 0.16 -> 0.70,
// high 0.71 -> 0.80; double k = 4 low 0.33 -> 1.14, high and scattered
// 1.12-1.13, level; double k = 5 high 0.15 -> 0.77 (and on an H200 low and
// scattered 0.07 -> 0.64). Not kept, float k = 5: a second tile buffer per
// staged block, so that the next tile arrives while one is multiplied (1 to
// 3 % slower, and 10 % at double k = 5, on an H200); two groups per thread,
// each matrix load feeding both (210 to 255 registers, 3 times slower); a
// register cap for four or five blocks per multiprocessor (4 to 23 % slower);
// staged tiles of 2^11 or 2^10 amplitudes, two warps or one per block, so
// that fewer warps wait at each barrier (low and scattered targets 3 and 15 %
// slower, in Gauss's form). Float k = 6 on these kernels, in Gauss's form
// with each group split over two threads (32 amplitudes and their sums each,
// a row's halves added by a shuffle; the image from global memory into
// dynamic shared memory): 0.28 to 0.36 of the floor with every row unrolled,
// 0.42 to 0.57 with 1 to 4 rows a turn, against 0.65 to 0.71 on the tensor
// cores in the same runs. Not kept, float k = 4 on the staged kernel (H200,
// n = 28, ms low / descending, alternating with this form in one command,
// two or three runs each; this form 1.487-1.496 / 1.504-1.611): two tiles a
// block, the next loading while one is multiplied, of 2^11 amplitudes (four
// blocks a multiprocessor) 1.662 / 1.690-1.713, of 2^12 (three blocks)
// 1.545-1.559 / 1.583-1.626; the matrix from shared memory, 16 bytes a load
// (88 registers instead of 122) 1.587-1.614 / 1.633-1.698, in Gauss's form
// 1.557-1.580 / 1.639-1.664; Gauss's form from the constant bank (3 KiB)
// 1.756-1.766 / 1.745-1.802, and 7.87-7.91 ms in the direct kernel (high
// targets, against 1.164-1.165; the constant cache missing, we think). ncu
// saw this form's staged kernel (low targets) with its issue slots 75 %
// busy, 1.9 eligible warps per scheduler and DRAM at 61 %.
constexpr std::size_t kConstantMatrixBytes = 2048;

template <class Real, int K>
constexpr bool matrix_in_shared() {
    return sizeof(SmallMatrix<Real, K>) > kConstantMatrixBytes;
}

// Float matrices in shared memory (k = 5) are applied by Gauss's three real
// products, as on the tensor cores: Re y = Mr vr - Mi vi and Im y = (Mr + Mi)
// (vr + vi) - Mr vr - Mi vi, three multiply-adds per complex term instead of
// four, with vr + vi formed once per group. That kernel is bound by its
// multiply-adds as much as by memory (128 per amplitude in the direct form,
// 3.8 ps at the H100's FP32 rate against 5.3 ps for the copy). The matrix's
// three planes are row-major; re + im is summed in float. The imaginary
// parts' error is then float rounding of the terms' size (qmarg/gates.hpp).
// Measured on an H100 (float n = 28, k = 5, fraction of the floor, low /
// high / scattered, three runs each, alternating with the direct form): 0.58
// / 0.69 / 0.62 -> 0.63 / 0.73 / 0.66 with registers capped for three blocks
// per multiprocessor (168: the direct kernel spills 48 bytes), 0.59 / 0.74 /
// 0.61 uncapped (189 and 255 registers, two blocks).
template <int K>
struct alignas(16) GaussMatrix {
    float re[(1 << K) * (1 << K)];
    float im[(1 << K) * (1 << K)];
    float sum[(1 << K) * (1 << K)];  // re + im
};

template <class Real, int K>
constexpr bool gauss_form() {
    return matrix_in_shared<Real, K>() && sizeof(Real) == sizeof(float);
}

// Rows of the product the direct kernel unrolls: all of them, so that each
// constant-bank entry is an operand of its multiply-add, but 4 at a time in
// Gauss's form. Fully unrolled, a group's 32 rows are some 4000 instructions
// per loop turn, and ncu saw the kernels' warps waiting for instructions
// (two threads a group at float k = 6, twice the code: over half the stall
// cycles). Measured on an H100 (float n = 28, k = 5, three runs each, the
// variants alternating): high targets 0.79 -> 0.83 of the floor with 4 rows
// a turn, 0.81 with 1 (register kernel forced, in a build with float k = 6
// on this kernel); this form against the fully unrolled one, through
// apply_matrix, 0.74 -> 0.78 (medians). The staged kernel keeps every row
// unrolled: on low and scattered targets 4 rows a turn lost 5 %.
template <class Real, int K>
constexpr int direct_row_unroll() {
    return gauss_form<Real, K>() ? 4 : 1 << K;
}

// Blocks resident per multiprocessor that the register budget must allow.
// Staged: without it the compiler's own heuristic spilled registers at k = 4;
// double k = 5 needs the whole budget (a group alone is 64 doubles). Float
// k = 5 (Gauss's form): three blocks, measured above. Direct kernels name
// one block rather than nothing: ptxas then gives the float k = 4 one 96
// registers instead of 72, which measured 3 to 4 % faster on high and
// scattered targets (H100, three runs each, alternating).
template <class Real, int K>
constexpr int staged_min_blocks() {
    return K < 5 ? 4 : gauss_form<Real, K>() ? 3 : 1;
}
template <class Real, int K>
constexpr int direct_min_blocks() {
    return gauss_form<Real, K>() ? 3 : 1;
}

// The matrix the multiply-adds read: the parameter itself, or its copy in
// shared memory (matrix_in_shared; a GaussMatrix where gauss_form). Every
// thread of the block calls it once, before its first group.
template <class Real, int K>
__device__ __forceinline__ const auto& matrix_operands(const SmallMatrix<Real, K>& param) {
    if constexpr (gauss_form<Real, K>()) {
        __shared__ GaussMatrix<K> copy;
        for (int i = threadIdx.x; i < (1 << K) * (1 << K); i += blockDim.x) {
            const float2 entry = param.entry[i];
            copy.re[i] = entry.x;
            copy.im[i] = entry.y;
            copy.sum[i] = entry.x + entry.y;
        }
        __syncthreads();  // the copy is complete before any thread reads it
        return copy;
    } else if constexpr (matrix_in_shared<Real, K>()) {
        __shared__ SmallMatrix<Real, K> copy;
        constexpr int kUnits = sizeof(copy) / sizeof(uint4);
        const uint4* from = reinterpret_cast<const uint4*>(&param);
        uint4* to = reinterpret_cast<uint4*>(&copy);
        for (int i = threadIdx.x; i < kUnits; i += blockDim.x) to[i] = from[i];
        __syncthreads();  // the copy is complete before any thread reads it
        return copy;
    } else {
        return param;
    }
}

// Offset of row r of a group from the group's row 0: bit j of r moves by stride[j].
template <int K, class Stride>
__device__ __forceinline__ Stride row_offset(int r, const Stride* stride) {
    Stride offset = 0;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        if ((r >> j) & 1) offset += stride[j];
    }
    return offset;
}

// 16 bytes of shared memory at `address` (a shared-window address). The
// load is volatile because the shared copy of the matrix never changes while
// a kernel runs: ordinary loads are hoisted out of the loop over groups, all
// 2^2k entries at once, and spilled (measured with ptxas: 13 KiB of stack
// for the float k = 5 direct kernel).
__device__ __forceinline__ float4 load_shared_16(unsigned address, float) {
    float4 out;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(out.x), "=f"(out.y), "=f"(out.z), "=f"(out.w)
                 : "r"(address));
    return out;
}
__device__ __forceinline__ double2 load_shared_16(unsigned address, double) {
    double2 out;
    asm volatile("ld.shared.v2.f64 {%0, %1}, [%2];" : "=d"(out.x), "=d"(out.y) : "r"(address));
    return out;
}

// Row r of (matrix * v), `matrix` from matrix_operands. r is a compile-time
// constant after unrolling, so the matrix entries are constant-bank operands
// of the multiply-adds, or (double matrices in shared memory) loads at fixed
// offsets, one 16-byte entry each, into two sums (even and odd columns) for
// twice the independent multiply-adds per row.
template <class Real, int K>
__device__ __forceinline__ DeviceComplex<Real> row_times(const SmallMatrix<Real, K>& matrix, int r,
                                                         const DeviceComplex<Real> (&v)[1 << K]) {
    using C = DeviceComplex<Real>;
    constexpr int kDim = 1 << K;
    if constexpr (matrix_in_shared<Real, K>()) {
        static_assert(!gauss_form<Real, K>(), "float matrices in shared memory are applied in Gauss's form");
        const unsigned row = static_cast<unsigned>(__cvta_generic_to_shared(matrix.entry + r * kDim));
        C even = make_device_complex<Real>(0, 0), odd = even;
#pragma unroll
        for (int c = 0; c < kDim; c += 2) {
            even = complex_fma(load_shared_16(row + c * sizeof(C), Real()), v[c], even);
            odd = complex_fma(load_shared_16(row + (c + 1) * sizeof(C), Real()), v[c + 1], odd);
        }
        return make_device_complex<Real>(even.x + odd.x, even.y + odd.y);
    } else {
        C acc = make_device_complex<Real>(0, 0);
#pragma unroll
        for (int c = 0; c < kDim; ++c) acc = complex_fma(matrix.entry[r * kDim + c], v[c], acc);
        return acc;
    }
}

// Row r of (matrix * v) in Gauss's form (GaussMatrix): three sums, each
// split over even and odd columns for more independent multiply-adds. The
// sums vr + vi are the same for every row; after unrolling, the compiler
// forms them once per group.
template <int K>
__device__ __forceinline__ float2 row_times(const GaussMatrix<K>& matrix, int r, const float2 (&v)[1 << K]) {
    constexpr int kDim = 1 << K;
    const unsigned re = static_cast<unsigned>(__cvta_generic_to_shared(matrix.re + r * kDim));
    const unsigned im = static_cast<unsigned>(__cvta_generic_to_shared(matrix.im + r * kDim));
    const unsigned sum = static_cast<unsigned>(__cvta_generic_to_shared(matrix.sum + r * kDim));
    float rr[2] = {0.0f, 0.0f}, ii[2] = {0.0f, 0.0f}, ss[2] = {0.0f, 0.0f};
#pragma unroll
    for (int c = 0; c < kDim; c += 4) {
        const float4 a = load_shared_16(re + c * sizeof(float), float());
        const float4 b = load_shared_16(im + c * sizeof(float), float());
        const float4 m = load_shared_16(sum + c * sizeof(float), float());
        const float mr[4] = {a.x, a.y, a.z, a.w}, mi[4] = {b.x, b.y, b.z, b.w}, ms[4] = {m.x, m.y, m.z, m.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const float2 x = v[c + j];
            rr[j & 1] = fmaf(mr[j], x.x, rr[j & 1]);
            ii[j & 1] = fmaf(mi[j], x.y, ii[j & 1]);
            ss[j & 1] = fmaf(ms[j], x.x + x.y, ss[j & 1]);
        }
    }
    const float real = rr[0] + rr[1], imag = ii[0] + ii[1];
    return make_float2(real - imag, (ss[0] + ss[1]) - real - imag);
}

template <class Real, int K>
__global__ void __launch_bounds__(kDirectThreads, direct_min_blocks<Real, K>())
    apply_matrix_small_direct_kernel(DeviceComplex<Real>* amps, const __grid_constant__ SmallMatrix<Real, K> param,
                                     const __grid_constant__ GateQubits gate, Index num_groups) {
    using C = DeviceComplex<Real>;
    constexpr int kDim = 1 << K;
    constexpr int kRowUnroll = direct_row_unroll<Real, K>();
    const auto& matrix = matrix_operands(param);
    const Index step = static_cast<Index>(gridDim.x) * blockDim.x;
    for (Index g = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; g < num_groups; g += step) {
        const Index base = insert_zero_bits(g, gate.fixed_sorted, gate.num_fixed) | gate.control_mask;
        C v[kDim];
#pragma unroll
        for (int r = 0; r < kDim; ++r) v[r] = amps[base + row_offset<K>(r, gate.target_stride)];
#pragma unroll kRowUnroll
        for (int r = 0; r < kDim; ++r) amps[base + row_offset<K>(r, gate.target_stride)] = row_times(matrix, r, v);
    }
}

template <class Real, int K>
__global__ void __launch_bounds__(kStagedThreads, staged_min_blocks<Real, K>())
    apply_matrix_small_staged_kernel(DeviceComplex<Real>* amps, const __grid_constant__ SmallMatrix<Real, K> param,
                                     const __grid_constant__ TileLayout layout) {
    using C = DeviceComplex<Real>;
    constexpr int kDim = 1 << K;
    const auto& matrix = matrix_operands(param);
    const unsigned threads = blockDim.x;  // a power of two, at most the tile's number of groups
    const int thread_bits = __ffs(threads) - 1;
    const unsigned tile_size = 1u << layout.tile_bits;
    const int per_thread = static_cast<int>(tile_size >> thread_bits);
    const unsigned groups = tile_size >> K;

    extern __shared__ __align__(16) unsigned char shared_bytes[];
    C* tile = reinterpret_cast<C*>(shared_bytes);
    Index* outer_offsets = reinterpret_cast<Index*>(tile + tile_size);
    const Index thread_offset = thread_tile_offsets(layout, thread_bits, per_thread, outer_offsets);
    unsigned target_step[K];  // local offset that target j's bit adds
#pragma unroll
    for (int j = 0; j < K; ++j) target_step[j] = 1u << layout.target_local[j];
    __syncthreads();  // outer_offsets is complete before any thread reads it

    for (Index t = blockIdx.x; t < layout.num_tiles; t += gridDim.x) {
        const Index base = tile_base(layout, t) + thread_offset;
        // Load by cp.async (load_tile_async) the positions this thread will
        // store from. Against loads through registers, four at a time
        // (measured on an H100, fraction of the copy roofline, targets on
        // the lowest qubits, the two forms alternating, two runs each): float
        // n = 28, k = 1..3 0.96-1.00 -> 1.28-1.29, k = 4 0.65 -> 1.23; double
        // n = 30, k = 1..3 1.00-1.07 -> 1.14-1.16.
        load_tile_async(tile, amps + base, outer_offsets, per_thread);
        __syncthreads();  // the whole tile is in shared memory before any thread reads a group others loaded

        // Multiply: a group is read and written by its owner only, so its
        // writes need no barrier against other threads' reads.
        for (unsigned g = threadIdx.x; g < groups; g += threads) {
            const unsigned first = static_cast<unsigned>(insert_zero_bits(g, layout.target_local_sorted, K));
            C v[kDim];
#pragma unroll
            for (int r = 0; r < kDim; ++r) v[r] = tile[swizzle<C>(first + row_offset<K>(r, target_step))];
#pragma unroll
            for (int r = 0; r < kDim; ++r) {
                tile[swizzle<C>(first + row_offset<K>(r, target_step))] = row_times(matrix, r, v);
            }
        }
        __syncthreads();  // every group is multiplied before threads store elements other threads computed

        // Store the same positions this thread loaded: the next tile's load
        // overwrites only those, so it needs no barrier after the store.
#pragma unroll 4
        for (int j = 0; j < per_thread; ++j) {
            amps[base + outer_offsets[j]] = tile[swizzle<C>(j * threads + threadIdx.x)];
        }
    }
}

// The staged kernel's case where the targets are the K lowest qubits, in any
// order, and a tile is one stretch of memory of full size (no control among
// its bits), with K <= line_bits so that a group is part of one swizzled row.
// The host reorders the matrix so that bit j of its index is qubit j
// (small_matrix). Then every shared-memory position is fixed per thread,
// with no table and no per-element bit arithmetic: the swizzle is linear over
// XOR, so a tile element's position is the thread's own position XOR a
// compile-time constant, and a group's elements sit at its first position XOR
// their row index; tile element j * kThreads + threadIdx.x is global element
// j * kThreads + threadIdx.x past the tile's base. The general staged kernel
// works these out per element. On float k = 4, counted in the SASS of each
// loop: about 125 instructions an amplitude there (64 multiply-adds, 16
// constant-bank loads, the rest addresses and staging), where ncu saw the
// issue slots 75 % busy; about 94 here.
//
// Where it runs (lowest_kernel_pays), measured on an H200 (apply_matrix_bench,
// float n = 28 / double n = 30, lowest and descending targets, ms, two runs
// each, alternating with the general staged kernel in one command): float
// k = 4 1.487-1.504 -> 1.240-1.246 (0.68 -> 0.81 of the floor), k = 3
// 1.200-1.208 -> 1.125-1.127 (0.84 -> 0.90), k = 1 1.128-1.135 ->
// 1.110-1.111; double k = 3 8.997-9.008 -> 8.953-8.963. Slower, and left to
// the general kernel: float k = 2 1.138-1.146 -> 1.148-1.152, double k = 1
// and 2 8.827-8.879 -> 8.931-8.976. Not kept: two groups of float k = 4 at a
// time, each constant-bank entry feeding both (1.258-1.271; ptxas spills
// about as much at the 128 registers four blocks allow).
// Nor the general staged kernel with a group's elements at swizzle(first)
// XOR a shift per target bit (the same linearity; 2088 -> 2040 SASS instructions
// in the float k = 4 kernel, 114 registers instead of 122): where it runs
// in the benchmark (float k = 2 and double k = 1, 2 on the lowest qubits,
// lowest first and descending; its scattered targets take the direct
// kernel), float 0.7 to 0.9 % faster (1.138-1.142 -> 1.126-1.136 ms), double
// level (n = 28 / 30, two runs each, alternating). Not kept: under 1 %, and
// its racecheck run did not finish within the time it had.
template <class Real, int K>
constexpr bool lowest_kernel_pays() {
    return K <= line_bits<Real>() && (K >= 3 || (sizeof(Real) == sizeof(float) && K == 1));
}
template <class Real, int K>
constexpr unsigned lowest_threads() {
    return std::min<unsigned>(kStagedThreads, 1u << (staged_tile_bits<Real>() - K));
}
template <class Real, int K>
__global__ void __launch_bounds__(kStagedThreads, staged_min_blocks<Real, K>())
    apply_matrix_small_lowest_kernel(DeviceComplex<Real>* amps, const __grid_constant__ SmallMatrix<Real, K> param,
                                     const __grid_constant__ TileLayout layout) {
    using C = DeviceComplex<Real>;
    constexpr int kDim = 1 << K;
    constexpr int kTileBits = staged_tile_bits<Real>();
    constexpr unsigned kThreads = lowest_threads<Real, K>();
    constexpr int kPerThread = (1 << kTileBits) / kThreads;
    constexpr int kGroupsPerThread = (1 << (kTileBits - K)) / kThreads;
    static_assert(K <= line_bits<Real>(), "a group must lie within one swizzled row");
    static_assert(!matrix_in_shared<Real, K>(), "the matrix is read from the constant bank");
    __shared__ C tile[1 << kTileBits];
    const auto& matrix = matrix_operands(param);
    const unsigned own = swizzle<C>(threadIdx.x);
    const int controls = layout.num_outer_fixed - kTileBits;  // outer_fixed: bits 0..kTileBits-1, then the controls

    for (Index t = blockIdx.x; t < layout.num_tiles; t += gridDim.x) {
        const Index base =
            insert_zero_bits(t << kTileBits, layout.outer_fixed + kTileBits, controls) | layout.control_mask;
        C* const mine = amps + base + threadIdx.x;
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
            __pipeline_memcpy_async(tile + (own ^ swizzle<C>(j * kThreads)), mine + j * kThreads, sizeof(C));
        }
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();  // the whole tile is in shared memory before any thread reads a group others loaded

        // A group is read and written by its owner only (as in the general kernel).
#pragma unroll 1
        for (int i = 0; i < kGroupsPerThread; ++i) {
            const unsigned first = swizzle<C>((i * kThreads + threadIdx.x) << K);
            C v[kDim];
#pragma unroll
            for (int r = 0; r < kDim; ++r) v[r] = tile[first ^ r];
#pragma unroll
            for (int r = 0; r < kDim; ++r) tile[first ^ r] = row_times(matrix, r, v);
        }
        __syncthreads();  // every group is multiplied before threads store elements other threads computed

        // The positions this thread loaded, so the next tile's copies need no barrier (load_tile_async).
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) mine[j * kThreads] = tile[own ^ swizzle<C>(j * kThreads)];
    }
}

// The matrix as the kernels read it. With `index_bits` (for
// apply_matrix_small_lowest_kernel: the local bit of each target, a
// permutation of 0..K-1) bit j of the row and column index moves to bit
// index_bits[j]; entries are only moved, so the product is the same.
template <class Real, int K>
SmallMatrix<Real, K> small_matrix(const Matrix& matrix, const int* index_bits = nullptr) {
    constexpr int kDim = 1 << K;
    const auto moved = [&](int index) {
        if (index_bits == nullptr) return index;
        int out = 0;
        for (int j = 0; j < K; ++j) out |= ((index >> j) & 1) << index_bits[j];
        return out;
    };
    SmallMatrix<Real, K> out;
    for (int r = 0; r < kDim; ++r) {
        for (int c = 0; c < kDim; ++c) {
            const auto value = matrix(r, c);
            out.entry[moved(r) * kDim + moved(c)] =
                make_device_complex<Real>(static_cast<Real>(value.real()), static_cast<Real>(value.imag()));
        }
    }
    return out;
}

// Whether apply_matrix_small_lowest_kernel takes a staged gate: a full tile
// whose local bits are qubits 0..tile_bits-1 (so no control among them), the
// targets the lowest K of them, and a group within one row.
template <class Real, int K>
bool lowest_kernel_applies(const TileLayout& layout) {
    if (K > line_bits<Real>() || layout.tile_bits != staged_tile_bits<Real>()) return false;
    for (int p = 0; p < layout.tile_bits; ++p) {
        if (layout.local_bits[p] != p) return false;
    }
    for (int j = 0; j < K; ++j) {
        if (layout.target_local_sorted[j] != j) return false;
    }
    return true;
}

template <class Real, int K>
void launch_small(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    using C = DeviceComplex<Real>;
    if (gate.min_target >= line_bits<Real>()) {
        const SmallMatrix<Real, K> entries = small_matrix<Real, K>(matrix);
        const Index groups = Index{1} << (gate.num_qubits - gate.num_fixed);
        const auto kernel = apply_matrix_small_direct_kernel<Real, K>;
        const Index work = (groups + kDirectThreads - 1) / kDirectThreads;
        const unsigned blocks = resident_grid(kernel, kDirectThreads, 0, work);
        kernel<<<blocks, kDirectThreads>>>(as_device(amps), entries, gate, groups);
        QMARG_CHECK_LAUNCH(apply_matrix_small_direct_kernel);
        return;
    }
    const TileLayout layout = make_tile_layout(gate, staged_tile_bits<Real>() - K);
    if constexpr (lowest_kernel_pays<Real, K>()) {
        if (lowest_kernel_applies<Real, K>(layout)) {
            const auto kernel = apply_matrix_small_lowest_kernel<Real, K>;
            constexpr unsigned kThreads = lowest_threads<Real, K>();
            const unsigned blocks = resident_grid(kernel, static_cast<int>(kThreads), 0, layout.num_tiles);
            kernel<<<blocks, kThreads>>>(as_device(amps), small_matrix<Real, K>(matrix, layout.target_local), layout);
            QMARG_CHECK_LAUNCH(apply_matrix_small_lowest_kernel);
            return;
        }
    }
    const unsigned tile_size = 1u << layout.tile_bits;
    const unsigned threads = std::min<unsigned>(kStagedThreads, tile_size >> K);
    const std::size_t shared = tile_size * sizeof(C) + (tile_size / threads) * sizeof(Index);
    const auto kernel = apply_matrix_small_staged_kernel<Real, K>;
    // Above 48 KiB (with the matrix's static copy) the kernel needs the opt-in.
    allow_shared_memory(kernel, shared, ("the register kernel for " + std::to_string(K) + " targets").c_str());
    const unsigned blocks = resident_grid(kernel, static_cast<int>(threads), shared, layout.num_tiles);
    kernel<<<blocks, threads, shared>>>(as_device(amps), small_matrix<Real, K>(matrix), layout);
    QMARG_CHECK_LAUNCH(apply_matrix_small_staged_kernel);
}

}  // namespace

template <class Real>
void apply_matrix_small(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    switch (gate.num_targets) {
        case 1: return launch_small<Real, 1>(amps, gate, matrix);
        case 2: return launch_small<Real, 2>(amps, gate, matrix);
        case 3: return launch_small<Real, 3>(amps, gate, matrix);
        case 4: return launch_small<Real, 4>(amps, gate, matrix);
        case 5: return launch_small<Real, 5>(amps, gate, matrix);
        default:
            throw Error("apply_matrix_small: " + std::to_string(gate.num_targets) + " targets; this path takes 1.." +
                        std::to_string(kMaxSmallTargets));
    }
}

template void apply_matrix_small<float>(std::complex<float>*, const GateQubits&, const Matrix&);
template void apply_matrix_small<double>(std::complex<double>*, const GateQubits&, const Matrix&);

}  // namespace gpu
}  // namespace qmarg
