// operations: 3
// Measurements in any order and into several registers; gates on qubits not
// yet measured may follow.
OPENQASM 2.0;
include "qelib1.inc";
qreg q[4];
creg low[2];
creg high[2];
h q[0];
measure q[0] -> high[1];
cx q[1], q[2];
measure q[2] -> low[0];
x q[3];
measure q[3] -> low[1];
