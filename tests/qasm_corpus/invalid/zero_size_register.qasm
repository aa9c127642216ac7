// error: 4:8: register size must be at least 1, found '0'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[0];
