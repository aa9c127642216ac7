// operations: 6
OPENQASM 2.0;
include "qelib1.inc";
qreg q[2];
rx(-pi/2 + 2*pi/3 - 1.5e-3) q[0];
ry(2^3^0 * sin(pi/6) / cos(0)) q[1];
rz(ln(exp(2)) - sqrt(16) + tan(pi/4)) q[0];
u3(--1, +.5, 3.) q[1];
gate g(a, b) x { U(a^2 - b, (a + b) / 2, -a * -b) x; }
g(0.5, 1E-1) q[0];
g(sqrt(2), 2) q[1];
