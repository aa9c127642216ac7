// error: 5:6: 'q' is already defined (a qreg at 4:6)
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
creg q[2];
