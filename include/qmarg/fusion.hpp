// Gate fusion: a circuit of many small gates rewritten as fewer gates on at
// most m qubits each, so that it runs as fewer passes over the state.
//
// Every gate of up to a few qubits costs one read and one write of the whole
// state on the GPU (it is bound by memory bandwidth, not arithmetic), so two
// gates multiplied into one 2^m x 2^m matrix on the host cost half as much to
// apply. The product is exact linear algebra in double precision; the only
// difference from running the operations one by one is rounding.
#pragma once

#include "qmarg/circuit.hpp"

namespace qmarg {

// The largest max_qubits fuse_gates accepts: the most targets one gate may
// have on a GPU state (apply_matrix).
constexpr int kMaxFusedQubits = 10;

// The fusion widths that `qmarg run` uses unless told otherwise, on a GPU
// state and on a CPU one. Measured on an H100 with
// bench/circuit_fusion_bench.cu (a random 28-qubit circuit of depth 20, 840
// operations, fused into 271 / 158 / 97 / 81 operations for m = 2 / 3 / 4 /
// 5; bench/results/circuit_fusion_H100.json), ms per circuit:
//   double: unfused 2192, m = 2 811, m = 3 480, m = 4 296, m = 5 247
//   float:  unfused 1102, m = 2 409, m = 3 242, m = 4 150, m = 5 143
// m = 5 is fastest in both precisions (8.9x and 7.7x): every gate on up to 5
// qubits runs at 0.98 to 1.29 of the copy floor, so fewer passes win. (Until
// float 5-qubit gates on low targets moved to the tensor cores, float m = 5
// took 156 ms and m = 4 won.) On the CPU backend (2 cores, a 22-qubit
// circuit of the same kind) m = 4 took 3.04 s against 3.15 s for m = 3 and
// 3.94 s for m = 5.
constexpr int kDefaultFusedQubitsGpu = 5;
constexpr int kDefaultFusedQubitsCpu = 4;

// Returns `circuit` with its operations fused: everything but `operations` is
// copied, and each new operation is either an operation of `circuit`
// unchanged or the product of several of them on the union of their qubits.
//
// Rules:
// - A group never spans more than `max_qubits` qubits, counting targets and
//   controls: a controlled gate joins a group as its full matrix on
//   targets and controls (so it then touches the whole state, not the 2^-c
//   part its controls select; at these sizes every pass costs one copy).
// - The order of operations that share a qubit is kept; operations on
//   disjoint qubits may be moved past each other (they commute).
// - A fused operation has targets ascending (targets[0] the lowest qubit, the
//   least significant bit of its matrix index) and no controls; its matrix is
//   the product of its members' matrices, later ones on the left. It is named
//   "fused(h,cx,...)" and has the source location of its first member.
// - A group of one keeps its operation as written (name, controls, matrix),
//   and an operation on more than `max_qubits` qubits is kept as written and
//   fused with nothing.
// - Structure survives where it is there to keep: a product of diagonal (or
//   permutation) matrices is diagonal (a permutation) with exact zeros, which
//   apply_matrix detects, so fused CZ/S/T/X runs stay on the fast paths.
//   A diagonal gate fused with a dense one becomes dense; on the GPU that
//   costs nothing up to 4 qubits.
// - The circuit holds no operation that needs to stop fusion: the OpenQASM
//   reader rejects reset and gates after a measurement, and measurements are
//   terminal (`measurements` is copied as it is). Non-unitary matrices built in
//   code fuse exactly like unitary ones.
//
// The result never has more operations than `circuit`. The grouping is
// greedy: each operation joins the groups that hold its qubits when their
// union stays within max_qubits; otherwise the largest of those groups are
// closed until it fits (or it starts a group of its own). Then neighbouring
// groups whose union fits are merged. The cost is linear in the number of
// operations, plus O(4^m) per member to build each fused matrix.
//
// Throws Error when max_qubits is outside 1..kMaxFusedQubits, and for an
// invalid operation (qubit out of range, repeated, or a matrix of the wrong
// size), naming the operation.
Circuit fuse_gates(const Circuit& circuit, int max_qubits);

}  // namespace qmarg
