// error: 3:1: expected ';', found 'qreg'
OPENQASM 2.0
qreg q[1];
