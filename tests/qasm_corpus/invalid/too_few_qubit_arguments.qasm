// error: 5:1: gate 'cx' takes 2 qubit arguments, found 1
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
cx q[0];
