// error: 4:10: expected '{' to begin the body of gate 'g', found 'h'
OPENQASM 2.0;
include "qelib1.inc";
gate g a h a;
