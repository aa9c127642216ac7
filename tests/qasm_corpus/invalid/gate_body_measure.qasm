// error: 5:12: 'measure' is not allowed in a gate body
OPENQASM 2.0;
include "qelib1.inc";
creg c[1];
gate g a { measure a -> c[0]; }
