// error: 5:4: number '1e999' is out of the range of double precision
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
rx(1e999) q[0];
