// The index -> bin mapping, shared by the CPU and the GPU backends so that they
// cannot disagree about which output bin an amplitude belongs to.
//
// The functions are plain inline C++ that nvcc also compiles for the device
// (QMARG_HOST_DEVICE expands to __host__ __device__ only under nvcc); no CUDA
// type appears here, so host compilers read this header as ordinary C++.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define QMARG_HOST_DEVICE __host__ __device__
#else
#define QMARG_HOST_DEVICE
#endif

namespace qmarg {

// The value of bit `bit` of `index` (0 or 1).
QMARG_HOST_DEVICE inline std::uint64_t bit_of(std::uint64_t index, int bit) {
    return (index >> bit) & 1u;
}

// Gathers the bits of `index` named by qubits[0..k) into a k-bit number whose
// bit j is bit qubits[j] of index. This is the marginal bin of an amplitude and
// the row of a k-qubit gate matrix that the amplitude feeds (the seed's
// bitInds -> outInd mapping).
QMARG_HOST_DEVICE inline std::uint64_t gather_bits(std::uint64_t index, const int* qubits, int k) {
    std::uint64_t out = 0;
    for (int j = 0; j < k; ++j) out |= bit_of(index, qubits[j]) << j;
    return out;
}

// The inverse scatter: places bit j of `value` at bit qubits[j] of the result
// (all other bits zero). index = base | scatter_bits(row, targets, k) walks the
// 2^k amplitudes a k-qubit gate mixes.
QMARG_HOST_DEVICE inline std::uint64_t scatter_bits(std::uint64_t value, const int* qubits, int k) {
    std::uint64_t out = 0;
    for (int j = 0; j < k; ++j) out |= ((value >> j) & 1u) << qubits[j];
    return out;
}

// The parity (0 or 1) of the set bits of `bits`. parity(index & mask) is the
// exponent of the sign that a product of Pauli Z on the qubits of `mask` gives
// amplitude `index`: (-1)^parity.
QMARG_HOST_DEVICE inline int parity(std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
    return __popcll(bits) & 1;
#else
    bits ^= bits >> 32;
    bits ^= bits >> 16;
    bits ^= bits >> 8;
    bits ^= bits >> 4;
    bits ^= bits >> 2;
    bits ^= bits >> 1;
    return static_cast<int>(bits & 1u);
#endif
}

// Deposits `value`'s bits, lowest first, at the set bits of `mask` (x86's
// PDEP): the mask form of scatter_bits, for bit sets kept as masks.
QMARG_HOST_DEVICE inline std::uint64_t deposit_bits(std::uint64_t value, std::uint64_t mask) {
    std::uint64_t out = 0;
    for (std::uint64_t bit = 1; mask != 0; bit <<= 1) {
        const std::uint64_t lowest = mask & (~mask + 1);
        if (value & bit) out |= lowest;
        mask ^= lowest;
    }
    return out;
}

// The inverse of deposit_bits: the bits of `value` at the set bits of `mask`,
// lowest first, packed into the low bits (x86's PEXT).
QMARG_HOST_DEVICE inline std::uint64_t extract_bits(std::uint64_t value, std::uint64_t mask) {
    std::uint64_t out = 0;
    for (std::uint64_t bit = 1; mask != 0; bit <<= 1) {
        const std::uint64_t lowest = mask & (~mask + 1);
        if (value & lowest) out |= bit;
        mask ^= lowest;
    }
    return out;
}

// Inserts a zero bit at each position in `sorted_qubits` (ascending) into
// `compact`: maps a counter over the 2^(n-k) assignments of the other qubits to
// the amplitude index whose listed qubits are all 0.
QMARG_HOST_DEVICE inline std::uint64_t insert_zero_bits(std::uint64_t compact, const int* sorted_qubits, int k) {
    for (int j = 0; j < k; ++j) {
        const std::uint64_t low = compact & ((std::uint64_t{1} << sorted_qubits[j]) - 1);
        compact = ((compact ^ low) << 1) | low;
    }
    return compact;
}

}  // namespace qmarg
