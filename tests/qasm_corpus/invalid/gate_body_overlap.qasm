// error: 4:21: gate 'cx' is applied to qubit 'a' more than once (its qubit arguments must be distinct)
OPENQASM 2.0;
include "qelib1.inc";
gate g a, b { cx a, a; }
