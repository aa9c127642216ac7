// error: 5:10: expected ',' or ')', found 'q'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
rx((1+2) q[0];
