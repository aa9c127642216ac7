// error: 5:1: 'q' is a qreg, not a gate
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
q q[0];
