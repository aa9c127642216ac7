// error: 5:3: undefined qreg 'r'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
h r[0];
