// error: 4:22: 'phi' is not a parameter of gate 'g'
OPENQASM 2.0;
include "qelib1.inc";
gate g(theta) a { rx(phi) a; }
