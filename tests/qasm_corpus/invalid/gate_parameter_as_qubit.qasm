// error: 4:11: 'a' is declared twice in gate 'g'
OPENQASM 2.0;
include "qelib1.inc";
gate g(a) a { }
