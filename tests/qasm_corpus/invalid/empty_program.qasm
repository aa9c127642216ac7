// error: 2:1: expected 'OPENQASM 2.0;' at the start of the program, found end of file
