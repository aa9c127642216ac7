// Bernstein-Vazirani: one query to the oracle f(x) = s.x (mod 2) reveals the
// hidden 6-bit string s. Here s = 101101 (bit 5 on the left): the oracle has a
// CX from each input qubit i with s_i = 1 onto the ancilla, which starts in |->.
// Expected: the measured register reads 101101 with probability 1.
OPENQASM 2.0;
include "qelib1.inc";
qreg q[6];
qreg ancilla[1];
creg c[6];
x ancilla[0];
h ancilla[0];
h q;
// the oracle for s = 101101: s_0 = s_2 = s_3 = s_5 = 1
cx q[0], ancilla[0];
cx q[2], ancilla[0];
cx q[3], ancilla[0];
cx q[5], ancilla[0];
h q;
measure q -> c;
