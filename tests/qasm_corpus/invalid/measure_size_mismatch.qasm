// error: 6:14: measure needs as many classical bits as qubits: 'q' gives 3 qubits, 'c' gives 2 bits
OPENQASM 2.0;
include "qelib1.inc";
qreg q[3];
creg c[2];
measure q -> c;
