// error: 4:1: qelib1.inc defines gate 'cx', which is already defined (a gate at 3:6)
OPENQASM 2.0;
gate cx a, b { CX a, b; }
include "qelib1.inc";
