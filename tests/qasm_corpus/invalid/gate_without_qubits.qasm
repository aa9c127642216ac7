// error: 4:8: expected a qubit argument name, found '{'
OPENQASM 2.0;
include "qelib1.inc";
gate g { }
