// Grover search over 3 qubits (8 items) for the marked item 101 (= 5).
// With sin(theta) = 1/sqrt(8), k iterations find it with probability
// sin^2((2k + 1) theta); the optimal k = 2 gives 121/128 = 0.9453125, and each
// of the 7 other outcomes has probability 1/128.
OPENQASM 2.0;
include "qelib1.inc";
// Flips the sign of |101> (c b a = 1 0 1): a doubly controlled Z on c,
// controlled by a = 1 and b = 0.
gate oracle a, b, c {
  x b;
  h c; ccx a, b, c; h c;
  x b;
}
// Reflection about the uniform superposition: H, a sign flip of |000>, H.
gate diffuser a, b, c {
  h a; h b; h c;
  x a; x b; x c;
  h c; ccx a, b, c; h c;
  x a; x b; x c;
  h a; h b; h c;
}
qreg q[3];
creg c[3];
h q;
oracle q[0], q[1], q[2];
diffuser q[0], q[1], q[2];
oracle q[0], q[1], q[2];
diffuser q[0], q[1], q[2];
measure q -> c;
