// error: 4:15: the qubit arguments of a gate are single qubits: 'a' cannot be indexed
OPENQASM 2.0;
include "qelib1.inc";
gate g a { h a[0]; }
