// error: 4:12: gate 'g' cannot use itself: recursive definitions are not allowed
OPENQASM 2.0;
include "qelib1.inc";
gate g a { g a; }
