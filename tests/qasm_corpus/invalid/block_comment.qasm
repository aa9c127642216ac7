// error: 4:1: block comments '/* */' are not part of OpenQASM 2.0: use '//'
OPENQASM 2.0;
include "qelib1.inc";
/* comment */
qreg q[1];
