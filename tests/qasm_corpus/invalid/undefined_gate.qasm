// error: 5:1: undefined gate 'foo'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
foo q[0];
