// error: 5:1: expected a statement, found '}'
OPENQASM 2.0;
include "qelib1.inc";
qreg q[1];
}
