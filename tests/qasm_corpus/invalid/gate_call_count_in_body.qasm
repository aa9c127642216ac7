// error: 4:15: gate 'rx' takes 1 parameter, found 0
OPENQASM 2.0;
include "qelib1.inc";
gate g(t) a { rx a; }
