// The gates qmarg knows without a definition: the primitives U and CX, and the
// standard library qelib1.inc (as Qiskit ships it), each mapped straight to
// one Operation: its matrix, its targets and its controls (a cswap is a SWAP
// on two targets with one control, not an 8x8 matrix).
//
// Matrices follow Qiskit's gate classes, so amplitudes agree with Qiskit's
// simulators. Where qelib1.inc's definition in terms of U and CX differs, it
// differs by a global phase only (rz, sx, sxdg, ch, rxx, rzz). Two gates need
// a word:
// - c3sqrtx: its definition in qelib1.inc is the 3-controlled inverse of
//   sqrt(X) (also a square root of X), and that is what is applied here;
//   Qiskit's reader maps the name to C3SXGate, the 3-controlled sqrt(X).
// - c4x: the body qelib1.inc gives it is not a 4-controlled X (a known defect
//   of the file); c4x is the 4-controlled X its name and comment state, as
//   Qiskit reads it.
// tests/qasm_parser_test.cpp checks every gate against its definition (c4x
// against a correct decomposition into U and CX).
#pragma once

#include <string_view>
#include <vector>

#include "qmarg/circuit.hpp"

namespace qmarg {
namespace qasm {

struct StandardGate {
    const char* name;
    int num_params;
    int num_qubits;
    // Fills op.matrix, op.targets and op.controls for the qubit arguments
    // `qubits` (num_qubits of them) and the parameters `params`. Returns false
    // for the identity gates (id, u0), which need no operation.
    bool (*build)(const double* params, const int* qubits, Operation& op);
};

// U(theta, phi, lambda) and CX: always defined.
const std::vector<StandardGate>& primitive_gates();
// The gates `include "qelib1.inc";` defines.
const std::vector<StandardGate>& qelib1_gates();

}  // namespace qasm
}  // namespace qmarg
