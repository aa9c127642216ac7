// error: 4:6: 'h' is already defined (a gate of qelib1.inc)
OPENQASM 2.0;
include "qelib1.inc";
gate h a { U(pi/2, 0, pi) a; }
