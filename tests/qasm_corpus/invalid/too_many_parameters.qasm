// error: 5:1: gate 'u3' takes 3 parameters, found 4
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
u3(1, 2, 3, 4) q[0];
