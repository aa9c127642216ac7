// error: 5:3: 'h' is a gate, not a qreg
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
h h;
