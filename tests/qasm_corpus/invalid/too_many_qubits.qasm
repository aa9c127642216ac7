// error: 5:8: qreg 'b[100]' brings the program to 1100 qubits: at most 1024 are supported
OPENQASM 2.0;
include "qelib1.inc";
qreg a[1000];
qreg b[100];
