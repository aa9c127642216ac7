// error: 4:6: 'pi' is a reserved word and cannot name a qreg
OPENQASM 2.0;
include "qelib1.inc";
qreg pi[1];
