// error: 5:5: index 2 is out of range for qreg q[2] (valid indices are 0..1)
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
h q[2];
