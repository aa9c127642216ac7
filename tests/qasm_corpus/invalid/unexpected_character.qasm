// error: 5:9: unexpected character '#'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
h q[0]; # comment
