// A dense reference for circuit tests: applies Operations to a plain vector of
// complex<double> amplitudes one basis state at a time, independent of the
// library's backends, and builds the full 2^n x 2^n unitary of a circuit.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "qmarg/circuit.hpp"

namespace qmarg_test {

using Amplitudes = std::vector<std::complex<double>>;

// amps <- (op on the whole register) amps, written out index by index.
inline void apply_dense(Amplitudes& amps, const qmarg::Operation& op) {
    const std::uint64_t size = amps.size();
    const int k = static_cast<int>(op.targets.size());
    Amplitudes out(size, 0.0);
    for (std::uint64_t col = 0; col < size; ++col) {
        bool active = true;
        for (int c : op.controls) active = active && ((col >> c) & 1u);
        if (!active) {
            out[col] += amps[col];
            continue;
        }
        int in_bits = 0;
        for (int j = 0; j < k; ++j) in_bits |= static_cast<int>((col >> op.targets[j]) & 1u) << j;
        std::uint64_t base = col;
        for (int t : op.targets) base &= ~(std::uint64_t{1} << t);
        for (int r = 0; r < (1 << k); ++r) {
            std::uint64_t row = base;
            for (int j = 0; j < k; ++j) row |= static_cast<std::uint64_t>((r >> j) & 1) << op.targets[j];
            out[row] += op.matrix(r, in_bits) * amps[col];
        }
    }
    amps.swap(out);
}

// The circuit applied to |0...0>.
inline Amplitudes dense_state(const qmarg::Circuit& circuit) {
    Amplitudes amps(std::size_t{1} << circuit.num_qubits, 0.0);
    amps[0] = 1.0;
    for (const auto& op : circuit.operations) apply_dense(amps, op);
    return amps;
}

// Column c of the result is the circuit applied to basis state c.
inline std::vector<Amplitudes> dense_unitary(const qmarg::Circuit& circuit) {
    const std::size_t size = std::size_t{1} << circuit.num_qubits;
    std::vector<Amplitudes> columns(size, Amplitudes(size, 0.0));
    for (std::size_t c = 0; c < size; ++c) {
        columns[c][c] = 1.0;
        for (const auto& op : circuit.operations) apply_dense(columns[c], op);
    }
    return columns;
}

// Marginal probabilities of `qubits` (bit j of the index = qubits[j]).
inline std::vector<double> dense_marginal(const Amplitudes& amps, const qmarg::Qubits& qubits) {
    std::vector<double> p(std::size_t{1} << qubits.size(), 0.0);
    for (std::uint64_t i = 0; i < amps.size(); ++i) {
        std::uint64_t bin = 0;
        for (std::size_t j = 0; j < qubits.size(); ++j) bin |= ((i >> qubits[j]) & 1u) << j;
        p[bin] += std::norm(amps[i]);
    }
    return p;
}

}  // namespace qmarg_test
