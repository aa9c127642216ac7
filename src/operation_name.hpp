// How an error names a circuit's operation: its place in the list and, for
// operations read from a file, its place in the source, since a backend's
// message alone ("qubit 7 is out of range") would not say which line of a long
// circuit caused it. Shared by run() and fuse_gates().
#pragma once

#include <cstddef>
#include <string>

#include "qmarg/circuit.hpp"

namespace qmarg {

// "operation 3 ('cx' at bell.qasm:5:1)"; `index` is 0-based.
inline std::string describe_operation(const Circuit& circuit, std::size_t index) {
    const Operation& op = circuit.operations[index];
    std::string where = "operation " + std::to_string(index + 1) + " ('" + op.name + "'";
    if (op.location.line > 0) {
        where += " at " + (circuit.source_name.empty() ? std::string() : circuit.source_name + ":") +
                 std::to_string(op.location.line) + ":" + std::to_string(op.location.column);
    }
    return where + ")";
}

}  // namespace qmarg
