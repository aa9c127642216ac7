// error: 5:1: gate 'cx' is applied to qubit q[0] more than once (its qubit arguments must be distinct)
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
cx q[0], q[0];
