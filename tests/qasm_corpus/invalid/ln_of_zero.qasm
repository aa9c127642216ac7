// error: 5:4: ln of non-positive value 0
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
rx(ln(1-1)) q[0];
