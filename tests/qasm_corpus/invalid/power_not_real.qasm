// error: 5:8: (-8) ^ 0.333333 is not a finite real number
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
rx((-8)^(1/3)) q[0];
