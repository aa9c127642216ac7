// BinStationaryAtomic's rule (cuda/marginal_bin_stationary.cu): where it adds
// the bins of a split segment with atomics instead of BinStationary's partial
// rows and second pass. A plain C++ header, so that the tests can ask.
#pragma once

#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

// True when BinStationaryAtomic merges this case with atomics: it runs on the
// streaming kernel, splits a segment over several blocks, and the measured
// rule (atomic_merge_pays, next to its definition) says atomics pay. False
// means it runs exactly what BinStationary runs, with the same bits.
bool bin_stationary_merges_with_atomics(int num_qubits, const Qubits& qubits, bool single_precision);

}  // namespace gpu
}  // namespace qmarg
