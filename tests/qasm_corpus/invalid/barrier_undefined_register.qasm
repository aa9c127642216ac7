// error: 5:12: undefined qreg 'r'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
barrier q, r;
