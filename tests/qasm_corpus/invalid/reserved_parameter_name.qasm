// error: 4:8: 'sin' is a reserved word and cannot name a parameter
OPENQASM 2.0;
include "qelib1.inc";
gate g(sin) a { rx(sin) a; }
