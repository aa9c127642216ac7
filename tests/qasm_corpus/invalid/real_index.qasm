// error: 5:5: expected an integer index, found '1.0'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
h q[1.0];
