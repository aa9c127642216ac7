// Circuit's queries: measured qubits in classical-bit order and readable names.
// Kept apart from run() (src/circuit_run.cpp) so that the OpenQASM reader links
// without the simulation backends (the fuzz build takes only the reader).
#include "qmarg/circuit.hpp"

#include <string>

namespace qmarg {
namespace {

std::string element_name(const std::vector<Register>& registers, int index) {
    for (const Register& r : registers) {
        if (index >= r.offset && index < r.offset + r.size) {
            return r.name + "[" + std::to_string(index - r.offset) + "]";
        }
    }
    return std::to_string(index);
}

}  // namespace

Qubits Circuit::measured_qubits() const {
    Qubits qubits;
    qubits.reserve(measurements.size());
    for (const Measurement& m : measurements) qubits.push_back(m.qubit);
    return qubits;
}

std::string Circuit::qubit_name(int qubit) const { return element_name(quantum_registers, qubit); }

std::string Circuit::clbit_name(int bit) const { return element_name(classical_registers, bit); }

}  // namespace qmarg
