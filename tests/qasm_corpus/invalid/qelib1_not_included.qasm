// error: 4:1: undefined gate 'h' (it is defined in qelib1.inc: add 'include "qelib1.inc";' after the header)
OPENQASM 2.0;
qreg q[1];
h q[0];
