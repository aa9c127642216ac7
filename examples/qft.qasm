// Quantum Fourier transform of the basis state |5> on 4 qubits (qubit 0 is the
// least significant bit). QFT|x> = sum_y exp(2 pi i x y / 16) |y> / 4, so every
// outcome has probability 1/16 and amplitude y has phase 2 pi * 5 * y / 16.
// The circuit is the textbook one: Hadamards and controlled phases from the
// highest qubit down, then swaps that reverse the qubit order.
OPENQASM 2.0;
include "qelib1.inc";
qreg q[4];
creg c[4];
// |5> = |0101>
x q[0];
x q[2];
h q[3];
cp(pi/2) q[2], q[3];
cp(pi/4) q[1], q[3];
cp(pi/8) q[0], q[3];
h q[2];
cp(pi/2) q[1], q[2];
cp(pi/4) q[0], q[2];
h q[1];
cp(pi/2) q[0], q[1];
h q[0];
swap q[0], q[3];
swap q[1], q[2];
measure q -> c;
