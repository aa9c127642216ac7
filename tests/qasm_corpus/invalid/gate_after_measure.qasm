// error: 8:1: gate 'cx' acts on qubit q[1] after its measurement at 7:1: gates after a measurement are not supported in exact (marginal) simulation
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
creg c[2];
h q;
measure q[1] -> c[1];
cx q[0], q[1];
