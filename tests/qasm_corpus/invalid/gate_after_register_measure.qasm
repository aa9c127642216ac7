// error: 8:1: gate 'x' acts on qubit q[0] after its measurement at 6:1: gates after a measurement are not supported in exact (marginal) simulation
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
creg c[2];
measure q -> c;
barrier q;
x q[0];
