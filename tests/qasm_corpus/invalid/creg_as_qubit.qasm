// error: 6:3: 'c' is a creg, not a qreg
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
creg c[1];
h c[0];
