// error: 3:9: unterminated string: a string ends with '"' on the line it starts
OPENQASM 2.0;
include "qelib1.inc;
