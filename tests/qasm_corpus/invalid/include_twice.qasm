// error: 4:1: qelib1.inc is already included
OPENQASM 2.0;
include "qelib1.inc";
include "qelib1.inc";
