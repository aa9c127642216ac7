// error: 6:1: expected '}' to end the body of gate 'g', found end of file
OPENQASM 2.0;
include "qelib1.inc";
gate g a {
  h a;
