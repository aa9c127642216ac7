// error: 6:7: registers of different sizes in one gate: 'b' has 3 qubits, 'a' has 2
OPENQASM 2.0;
include "qelib1.inc";
qreg a[2];
qreg b[3];
cx a, b;
