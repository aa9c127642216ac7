// error: 5:17: 'q' is a qreg, not a creg
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
measure q[0] -> q[1];
