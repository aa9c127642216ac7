// error: 4:14: 'b' is not a qubit argument of gate 'g'
OPENQASM 2.0;
include "qelib1.inc";
gate g a { h b; }
