// operations: 9
OPENQASM 2.0;
include "qelib1.inc";
qreg a[3];
qreg b[3];
creg c[3];
h a;
cx a, b;
cz a[0], b;
barrier a, b[1];
measure b -> c;
