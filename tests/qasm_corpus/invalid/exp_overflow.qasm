// error: 5:4: exp(1000) is not a finite real number
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
rx(exp(1000)) q[0];
