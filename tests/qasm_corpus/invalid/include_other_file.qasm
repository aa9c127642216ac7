// error: 3:9: cannot include "stdgates.inc": only "qelib1.inc" (built in) can be included
OPENQASM 2.0;
include "stdgates.inc";
