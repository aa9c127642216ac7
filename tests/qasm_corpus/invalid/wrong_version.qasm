// error: 2:10: OpenQASM version 3.0 is not supported: qmarg reads OpenQASM 2.0
OPENQASM 3.0;
qreg q[1];
