// error: 5:14: 'q' is not a qubit argument of gate 'g'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
gate g a { h q; }
