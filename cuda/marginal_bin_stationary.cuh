// Launcher of the bin-stationary marginal engine (cuda/marginal_bin_stationary.cu).
#pragma once

#include <complex>

#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {

// The qubit list as kernels take it: by value, no device allocation.
struct QubitList {
    int count;
    int qubit[64];
};

inline QubitList make_qubit_list(const Qubits& qubits) {
    QubitList list{};
    list.count = static_cast<int>(qubits.size());
    for (int j = 0; j < list.count; ++j) list.qubit[j] = qubits[j];
    return list;
}

// Writes the 2^k marginal probabilities of `qubits` to the device array `out`.
// Deterministic: no floating-point atomics; the launch shape depends only on
// (num_qubits, qubits). Works for every n >= 1 and 1 <= k <= n.
template <class Real>
void bin_stationary_marginal(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits, double* out);

}  // namespace gpu
}  // namespace qmarg
