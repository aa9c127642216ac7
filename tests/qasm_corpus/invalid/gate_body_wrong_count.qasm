// error: 4:15: gate 'cx' takes 2 qubit arguments, found 1
OPENQASM 2.0;
include "qelib1.inc";
gate g a, b { cx a; }
