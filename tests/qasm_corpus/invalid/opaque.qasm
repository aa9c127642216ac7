// error: 4:1: 'opaque' gates are not supported in exact (marginal) simulation: qmarg needs the matrix of every gate
OPENQASM 2.0;
include "qelib1.inc";
opaque magic(a) q;
