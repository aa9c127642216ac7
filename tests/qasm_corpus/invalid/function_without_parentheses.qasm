// error: 5:8: expected '(' after sin, found 'pi'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
rx(sin pi) q[0];
