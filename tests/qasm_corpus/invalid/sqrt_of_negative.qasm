// error: 5:4: sqrt of negative value -4
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
rx(sqrt(-4)) q[0];
