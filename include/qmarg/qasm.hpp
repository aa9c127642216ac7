// OpenQASM 2.0 input: reads a program into a Circuit qmarg can run.
//
// Supported: the `OPENQASM 2.0;` header, `include "qelib1.inc";` (built in: every
// gate of the standard library as Qiskit ships it), qreg/creg, U and CX, gate
// definitions with parameters (expanded where they are used), parameter
// expressions (pi, + - * / ^, sin cos tan exp ln sqrt), register broadcasting,
// barrier (ignored), and terminal measure (names the reported qubits).
// Rejected, because an exact marginal of a pure state cannot express them:
// reset, if, opaque, and gates on a qubit after it was measured.
//
// Every problem is a QasmError whose message reads
// "file:line:column: what was expected, and what was found" (or what is wrong).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "qmarg/circuit.hpp"
#include "qmarg/error.hpp"

namespace qmarg {

class QasmError : public Error {
public:
    QasmError(std::string file, int line, int column, const std::string& message);

    const std::string& file() const { return file_; }
    int line() const { return line_; }
    int column() const { return column_; }
    // The message without the "file:line:column: " prefix.
    const std::string& detail() const { return detail_; }

private:
    std::string file_;
    int line_;
    int column_;
    std::string detail_;
};

// Bounds on what a program may expand to, so that a short file with nested
// gate definitions cannot ask for unbounded time or memory.
struct QasmLimits {
    // Operations in the expanded circuit (each takes a few hundred bytes).
    std::size_t max_operations = std::size_t{1} << 24;
    // Qubits declared over all qregs. A state of n qubits holds 2^n amplitudes;
    // programs beyond what memory holds are still read, so that running them
    // can say how much memory they would need.
    int max_qubits = 1024;
    // Classical bits declared over all cregs.
    int max_clbits = 1 << 16;
};

// Reads an OpenQASM 2.0 program. `filename` only names the source in messages.
Circuit parse_qasm(std::string_view source, std::string filename = "<input>", const QasmLimits& limits = {});

// Reads the file at `path` (an Error naming the path if it cannot be read).
Circuit load_qasm(const std::string& path, const QasmLimits& limits = {});

}  // namespace qmarg
