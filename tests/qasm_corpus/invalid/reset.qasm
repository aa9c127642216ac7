// error: 5:1: 'reset' is not supported in exact (marginal) simulation
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
reset q[0];
