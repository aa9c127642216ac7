// operations: 5
// Angles far beyond 2 pi: every gate must stay unitary to rounding (a fuzzing
// finding: u2's e^{i(phi + lambda)} from the rounded sum was not).
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
u2(0.2, 4444444444.3) q[1];
u3(0.1, -7e9, 1e12) q[0];
U(1e15, 3e15, -2e15) q[1];
cu3(0.3, 1e13, 0.4) q[0], q[1];
cu(0.1, 5e12, 6e12, 7e12) q[1], q[0];
