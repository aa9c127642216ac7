// Circuit: an ordered list of gate operations on n qubits, and which qubits are
// measured at the end (their marginal is what a run reports).
//
// An operation keeps its matrix, targets and controls apart, as written: a
// Toffoli is X on one target with two controls, not an 8x8 matrix, because the
// backends apply a controlled gate to the 2^-c fraction of the state it
// touches. Circuits come from OpenQASM (qmarg/qasm.hpp) or are built in code.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "qmarg/matrix.hpp"
#include "qmarg/state_vector.hpp"
#include "qmarg/types.hpp"

namespace qmarg {

// A position in a source text, both 1-based; 0:0 for operations built in code.
struct SourceLocation {
    int line = 0;
    int column = 0;
};

struct Operation {
    std::string name;         // the gate as written ("h", "cx", "U", ...), for messages
    Qubits targets;           // targets[0] is the least significant bit of the matrix index
    Qubits controls;          // the gate acts where all controls are 1
    Matrix matrix;            // 2^k x 2^k for k targets
    SourceLocation location;  // the statement that produced it
};

// A named block of consecutive qubits (or classical bits): the register's
// element i is qubit (or bit) offset + i of the circuit.
struct Register {
    std::string name;
    int offset = 0;
    int size = 0;
};

// A terminal measurement of `qubit` into classical bit `bit`.
struct Measurement {
    int qubit = 0;
    int bit = 0;
    SourceLocation location;
};

struct Circuit {
    std::string source_name;  // the file it was read from, for messages
    int num_qubits = 0;
    int num_clbits = 0;
    std::vector<Register> quantum_registers;
    std::vector<Register> classical_registers;
    std::vector<Operation> operations;
    std::vector<Measurement> measurements;  // in order of classical bit

    // The measured qubits in order of their classical bits: element j is the
    // qubit stored in the j-th lowest measured bit, so that
    // marginal_probabilities(state, measured_qubits()) indexes outcomes the way
    // the classical register reads them (highest bit printed on the left).
    Qubits measured_qubits() const;

    // "q[3]" for qubit 3 of the circuit (register and index), or "3" when the
    // circuit has no registers; the same for classical bits.
    std::string qubit_name(int qubit) const;
    std::string clbit_name(int bit) const;
};

// Called after each operation with (operations applied, total operations).
using RunProgress = std::function<void(std::size_t, std::size_t)>;

// Applies the circuit's operations in order to `state` (which the caller has
// prepared, normally |0...0>) on whichever device the state lives on. The state
// must have exactly circuit.num_qubits qubits. Measurements are not applied:
// they only name the qubits whose marginal a caller reports.
template <class Real>
void run(StateVector<Real>& state, const Circuit& circuit, const RunProgress& progress = {});

struct RunOptions {
    // 0: apply the operations as written; m in 1..10: apply
    // fuse_gates(circuit, m) (qmarg/fusion.hpp) instead, and report progress
    // in fused operations.
    int fuse_qubits = 0;
};

template <class Real>
void run(StateVector<Real>& state, const Circuit& circuit, const RunOptions& options,
         const RunProgress& progress = {});

}  // namespace qmarg
