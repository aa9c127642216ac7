// error: 6:14: measure needs as many classical bits as qubits: 'q' gives 2 qubits, 'c' gives 1 bit
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
creg c[2];
measure q -> c[0];
