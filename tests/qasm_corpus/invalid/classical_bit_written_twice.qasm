// error: 7:1: classical bit c[0] is written again (first at 6:1): each bit may receive one measurement
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
creg c[1];
measure q[0] -> c[0];
measure q[1] -> c[0];
