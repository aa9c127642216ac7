// error: 7:1: qubit q[0] is measured again (first at 6:1): repeated measurements are not supported in exact (marginal) simulation
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
creg c[2];
measure q[0] -> c[0];
measure q[0] -> c[1];
