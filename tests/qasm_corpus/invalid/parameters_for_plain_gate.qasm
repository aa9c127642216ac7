// error: 5:1: gate 'h' takes 0 parameters, found 1
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
h(0.5) q[0];
