// error: 4:8: qreg size '99999999999' is too large: at most 1024 qubits in all registers together
OPENQASM 2.0;
include "qelib1.inc";
qreg q[99999999999];
