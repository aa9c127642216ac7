// error: 5:9: 1e+300 * 1e+300 is not a finite real number
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
rx(1e300*1e300) q[0];
