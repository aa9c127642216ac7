// error: 5:1: gate 'h' takes 1 qubit argument, found 2
OPENQASM 2.0;
include "qelib1.inc";
qreg q[3];
h q[0], q[1];
