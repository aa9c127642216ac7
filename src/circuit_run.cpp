// run(): a circuit's operations, one apply_matrix each, on the state's device.
// A failing operation is reported with its place in the source, since the
// backend's message alone ("qubit 7 is out of range") would not say which
// line of a long circuit caused it.
#include <string>

#include "qmarg/circuit.hpp"
#include "qmarg/error.hpp"
#include "qmarg/gates.hpp"

namespace qmarg {
namespace {

std::string describe(const Circuit& circuit, std::size_t index, const Operation& op) {
    std::string where = "operation " + std::to_string(index + 1) + " ('" + op.name + "'";
    if (op.location.line > 0) {
        where += " at " + (circuit.source_name.empty() ? std::string() : circuit.source_name + ":") +
                 std::to_string(op.location.line) + ":" + std::to_string(op.location.column);
    }
    return where + ")";
}

}  // namespace

template <class Real>
void run(StateVector<Real>& state, const Circuit& circuit, const RunProgress& progress) {
    if (state.num_qubits() != circuit.num_qubits) {
        throw Error("cannot run a " + std::to_string(circuit.num_qubits) + "-qubit circuit on a " +
                    std::to_string(state.num_qubits()) + "-qubit state");
    }
    const std::size_t total = circuit.operations.size();
    for (std::size_t i = 0; i < total; ++i) {
        const Operation& op = circuit.operations[i];
        try {
            apply_matrix(state, op.targets, op.matrix, op.controls);
        } catch (const CudaError& e) {
            throw CudaError(describe(circuit, i, op) + ": " + e.what());
        } catch (const Error& e) {
            throw Error(describe(circuit, i, op) + ": " + e.what());
        }
        if (progress) progress(i + 1, total);
    }
}

template void run(StateVector<float>&, const Circuit&, const RunProgress&);
template void run(StateVector<double>&, const Circuit&, const RunProgress&);

}  // namespace qmarg
