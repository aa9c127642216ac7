// operations: 11
// User gates with parameters, nested definitions, barriers inside bodies.
OPENQASM 2.0;
include "qelib1.inc";
gate rot(theta, phi) a { rz(phi) a; ry(theta) a; rz(-phi) a; }
gate entangle(t) a, b {
  h a;
  barrier a, b;
  cx a, b;
  rot(t / 2, pi / 4) b;
}
gate empty() a { }
gate twice(t) a, b { entangle(t) a, b; entangle(-t) b, a; }
qreg left[2];
qreg right[1];
twice(0.25) left[0], right[0];
empty() left[1];
CX left[1], right[0];
