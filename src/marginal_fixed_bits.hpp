// Fixed index bits: how BinStationary runs a conditional marginal (the
// condition qubits hold given values) over only the amplitudes that match.
//
// Those amplitudes form a state of their own, of n - m qubits (m fixed bits):
// its "compact" index bit j lies at the j-th free position of the full index.
// BinStationary plans that compact state as it plans any state (the plans are
// a function of the compact n and qubit list), then maps every index image of
// the plan onto the full index with spread() and offsets the state pointer by
// the fixed values. Every map the kernels evaluate on an index is an OR or XOR
// of such images (cuda/marginal_bin_stationary.cu, marginal_transpose_plan.hpp),
// and deposit_bits maps each bit on its own, so the kernels read exactly the
// amplitudes that match, in the order they read the compact state: the bins
// are the compact state's marginal, bit for bit.
//
// Bit 0 is never fixed: both paths load amplitudes in pairs (index bit 0
// varies within a load). A condition on qubit 0 is a listed qubit whose half
// of the bins is dropped (cuda/marginal_conditional.cu).
#pragma once

#include <cstdint>
#include <string>

#include "qmarg/bits.hpp"
#include "qmarg/error.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

struct FixedBits {
    std::uint64_t mask = 0;    // the fixed index bits
    std::uint64_t values = 0;  // their values (bits of mask only)

    // The compact state's number of qubits.
    int compact_qubits(int num_qubits) const { return num_qubits - __builtin_popcountll(mask); }
    // A full-index position outside mask as a compact one.
    int compact_position(int qubit) const {
        return qubit - __builtin_popcountll(mask & ((std::uint64_t{1} << qubit) - 1));
    }
    Qubits compact(const Qubits& qubits) const {
        Qubits out;
        out.reserve(qubits.size());
        for (int q : qubits) out.push_back(compact_position(q));
        return out;
    }
    // A compact index image (a bit, a mask, an offset) on the full index.
    std::uint64_t spread(std::uint64_t compact_image) const { return deposit_bits(compact_image, ~mask); }
};

// Throws qmarg::Error unless `fixed` is one BinStationary can run: bit 0
// free, values within mask, and no listed qubit fixed.
inline void check_fixed_bits(const FixedBits& fixed, int num_qubits, const Qubits& qubits) {
    const std::uint64_t all = num_qubits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << num_qubits) - 1;
    if ((fixed.mask & 1u) != 0 || (fixed.mask & ~all) != 0 || (fixed.values & ~fixed.mask) != 0) {
        throw Error("BinStationary: fixed bits mask " + std::to_string(fixed.mask) + " / values " +
                    std::to_string(fixed.values) + " do not fit a " + std::to_string(num_qubits) +
                    "-qubit state with bit 0 free");
    }
    for (int q : qubits) {
        if ((fixed.mask >> q) & 1u) {
            throw Error("BinStationary: qubit " + std::to_string(q) + " is both listed and fixed");
        }
    }
}

}  // namespace gpu
}  // namespace qmarg
