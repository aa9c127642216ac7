// error: 4:22: ln of non-positive value -0.5 (in gate 'outer' applied at 7:1)
OPENQASM 2.0;
include "qelib1.inc";
gate inner(a) x { rz(ln(a)) x; }
gate outer(b) x { inner(b - 1) x; }
qreg q[1];
outer(0.5) q[0];
