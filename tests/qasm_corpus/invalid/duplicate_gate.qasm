// error: 5:6: 'g' is already defined (a gate at 4:6)
OPENQASM 2.0;
include "qelib1.inc";
gate g a { h a; }
gate g a { x a; }
