// error: 5:7: division by zero (in gate 'g' applied at 8:1)
OPENQASM 2.0;
include "qelib1.inc";
gate g(a) x {
  rx(1/a) x;
}
qreg q[1];
g(0) q[0];
