// error: 5:4: expected an expression, found ','
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
u2(, 1) q[0];
