// error: 4:1: the 'OPENQASM' header may appear only once, at the start
OPENQASM 2.0;
include "qelib1.inc";
OPENQASM 2.0;
