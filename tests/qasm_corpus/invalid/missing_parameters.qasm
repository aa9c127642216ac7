// error: 5:1: gate 'rx' takes 1 parameter, found 0
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
rx q[0];
