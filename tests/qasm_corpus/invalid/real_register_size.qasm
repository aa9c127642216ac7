// error: 4:8: expected an integer register size, found '2.0'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2.0];
