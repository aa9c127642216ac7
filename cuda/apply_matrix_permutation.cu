// Permutation gates (X, Y, SWAP, CX, CCX, or any matrix with one nonzero per
// row and column, with any controls): output row r of a group is
// phase[r] * input row source[r]. Amplitudes only move, so the kernel is a
// copy through shared memory at the memory roofline.
//
// In place, a thread may not read an amplitude another thread has already
// overwritten, and a permutation of 2^k rows is too irregular to give each
// thread a closed cycle. So each block owns whole tiles (TileLayout: the
// targets plus the lowest free qubits, at most 32 KiB): it loads a tile into
// shared memory in local order (whole cache lines), waits, and writes every
// amplitude of the tile back, in the same order, from its source position.
//
// Where local index l takes its value from (its source position and its
// phase's row) is the same in every tile, so each block tabulates it once in
// shared memory and then walks its tiles (a grid-stride loop).
#include <cuda_runtime.h>

#include "apply_matrix.cuh"
#include "apply_matrix_tile.cuh"
#include "check.cuh"
#include "device_complex.cuh"

namespace qmarg {
namespace gpu {
namespace {

constexpr int kThreads = 256;

// 32 KiB tiles: 2^11 double or 2^12 float amplitudes.
template <class Real>
constexpr int tile_bits() {
    return sizeof(Real) == 8 ? 11 : 12;
}

template <class Real>
struct PermutationEntries {
    DeviceComplex<Real> phase[1 << kMaxGateTargets];
    unsigned short source[1 << kMaxGateTargets];
};

template <class Real>
__global__ void __launch_bounds__(kThreads)
    apply_matrix_permutation_kernel(DeviceComplex<Real>* amps, const __grid_constant__ TileLayout layout,
                                    const __grid_constant__ PermutationEntries<Real> entries) {
    using C = DeviceComplex<Real>;
    const unsigned threads = blockDim.x;  // a power of two, at most the tile size
    const int thread_bits = __ffs(threads) - 1;
    const unsigned tile_size = 1u << layout.tile_bits;
    const int per_thread = static_cast<int>(tile_size >> thread_bits);
    const int k = layout.tile_bits - layout.num_free;
    const int dim = 1 << k;

    // Shared memory: the tile, the phases, the per-element offsets, the moves.
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    C* tile = reinterpret_cast<C*>(shared_bytes);
    C* phases = tile + tile_size;
    Index* outer_offsets = reinterpret_cast<Index*>(phases + dim);
    unsigned* moves = reinterpret_cast<unsigned*>(outer_offsets + per_thread);

    const Index thread_offset = thread_tile_offsets(layout, thread_bits, per_thread, outer_offsets);
    for (int r = threadIdx.x; r < dim; r += threads) phases[r] = entries.phase[r];
    unsigned target_mask = 0;
    for (int j = 0; j < k; ++j) target_mask |= 1u << layout.target_local[j];
    for (unsigned l = threadIdx.x; l < tile_size; l += threads) {
        unsigned row = 0;
        for (int j = 0; j < k; ++j) row |= ((l >> layout.target_local[j]) & 1u) << j;
        const unsigned source_row = entries.source[row];
        unsigned source = l & ~target_mask;
        for (int j = 0; j < k; ++j) source |= ((source_row >> j) & 1u) << layout.target_local[j];
        moves[l] = swizzle<C>(source) | (row << 16);
    }
    __syncthreads();  // the tables are complete before any thread reads an entry another thread wrote

    for (Index t = blockIdx.x; t < layout.num_tiles; t += gridDim.x) {
        const Index base = tile_base(layout, t) + thread_offset;
        // By cp.async (load_tile_async), against loads through registers
        // four at a time (measured on an H100, n = 28, X, SWAP, CX, CCX on
        // low, high and mixed qubits, the two forms alternating, two runs
        // each): float X and SWAP 1.79 -> 1.53 ms (15 % faster), CX and CCX
        // 3 % faster; double CX and CCX 3 to 4 % faster, X and SWAP 1.5 to
        // 2.7 % slower (3.0 ms for the 8 GiB they move, above the copy
        // roofline either way).
        load_tile_async(tile, amps + base, outer_offsets, per_thread);
        __syncthreads();  // the whole tile is loaded before threads read amplitudes other threads loaded
#pragma unroll 4
        for (int j = 0; j < per_thread; ++j) {
            const unsigned move = moves[j * threads + threadIdx.x];
            amps[base + outer_offsets[j]] = complex_mul(phases[move >> 16], tile[move & 0xffffu]);
        }
        __syncthreads();  // every source has been read before the next tile overwrites the shared tile
    }
}

}  // namespace

template <class Real>
void apply_matrix_permutation(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    using C = DeviceComplex<Real>;
    const int k = gate.num_targets;
    const int dim = matrix.dim();
    PermutationEntries<Real> entries{};
    for (int r = 0; r < dim; ++r) {
        for (int c = 0; c < dim; ++c) {
            const auto value = matrix(r, c);
            if (value == Matrix::value_type(0.0, 0.0)) continue;
            entries.source[r] = static_cast<unsigned short>(c);
            entries.phase[r] =
                make_device_complex<Real>(static_cast<Real>(value.real()), static_cast<Real>(value.imag()));
        }
    }
    const TileLayout layout = make_tile_layout(gate, tile_bits<Real>() - k);
    const unsigned tile_size = 1u << layout.tile_bits;
    const unsigned threads = std::min<unsigned>(kThreads, tile_size);
    const unsigned per_thread = tile_size / threads;
    const std::size_t shared = tile_size * sizeof(C) + dim * sizeof(C) + per_thread * sizeof(Index) +
                               tile_size * sizeof(unsigned);
    const auto kernel = apply_matrix_permutation_kernel<Real>;
    allow_shared_memory(kernel, shared, "the permutation kernel");
    const unsigned blocks = resident_grid(kernel, static_cast<int>(threads), shared, layout.num_tiles);
    kernel<<<blocks, threads, shared>>>(as_device(amps), layout, entries);
    QMARG_CHECK_LAUNCH(apply_matrix_permutation_kernel);
}

template void apply_matrix_permutation<float>(std::complex<float>*, const GateQubits&, const Matrix&);
template void apply_matrix_permutation<double>(std::complex<double>*, const GateQubits&, const Matrix&);

}  // namespace gpu
}  // namespace qmarg
