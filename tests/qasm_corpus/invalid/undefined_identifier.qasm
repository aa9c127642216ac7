// error: 5:4: undefined identifier 'theta' in expression (outside a gate definition only numbers and pi have values)
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
rx(theta) q[0];
