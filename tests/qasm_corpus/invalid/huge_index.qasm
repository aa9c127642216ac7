// error: 5:5: integer '99999999999999999999' is too large
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
h q[99999999999999999999];
