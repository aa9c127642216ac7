// error: 5:6: division by zero
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
rx(pi/(2-2)) q[0];
