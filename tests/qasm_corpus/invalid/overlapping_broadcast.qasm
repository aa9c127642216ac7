// error: 5:1: gate 'cx' is applied to qubit q[1] more than once (its qubit arguments must be distinct)
OPENQASM 2.0;
include "qelib1.inc";
qreg q[3];
cx q[1], q;
