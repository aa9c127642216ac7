// run(): a circuit's operations, one apply_matrix each, on the state's device;
// with RunOptions::fuse_qubits, the operations of fuse_gates() instead.
// A failing operation is reported with its place in the source
// (src/operation_name.hpp).
#include <string>

#include "operation_name.hpp"
#include "qmarg/circuit.hpp"
#include "qmarg/error.hpp"
#include "qmarg/fusion.hpp"
#include "qmarg/gates.hpp"

namespace qmarg {
namespace {

template <class Real>
void check_state_fits(const StateVector<Real>& state, const Circuit& circuit) {
    if (state.num_qubits() != circuit.num_qubits) {
        throw Error("cannot run a " + std::to_string(circuit.num_qubits) + "-qubit circuit on a " +
                    std::to_string(state.num_qubits()) + "-qubit state");
    }
}

}  // namespace

template <class Real>
void run(StateVector<Real>& state, const Circuit& circuit, const RunProgress& progress) {
    check_state_fits(state, circuit);
    const std::size_t total = circuit.operations.size();
    for (std::size_t i = 0; i < total; ++i) {
        const Operation& op = circuit.operations[i];
        try {
            apply_matrix(state, op.targets, op.matrix, op.controls);
        } catch (const CudaError& e) {
            throw CudaError(describe_operation(circuit, i) + ": " + e.what());
        } catch (const Error& e) {
            throw Error(describe_operation(circuit, i) + ": " + e.what());
        }
        if (progress) progress(i + 1, total);
    }
}

template <class Real>
void run(StateVector<Real>& state, const Circuit& circuit, const RunOptions& options, const RunProgress& progress) {
    check_state_fits(state, circuit);
    if (options.fuse_qubits < 0 || options.fuse_qubits > kMaxFusedQubits) {
        throw Error("fuse_qubits " + std::to_string(options.fuse_qubits) + " is out of range: 0 (no fusion) or 1.." +
                    std::to_string(kMaxFusedQubits) + " qubits per fused gate");
    }
    if (options.fuse_qubits == 0) {
        run(state, circuit, progress);
    } else {
        run(state, fuse_gates(circuit, options.fuse_qubits), progress);
    }
}

template void run(StateVector<float>&, const Circuit&, const RunProgress&);
template void run(StateVector<double>&, const Circuit&, const RunProgress&);
template void run(StateVector<float>&, const Circuit&, const RunOptions&, const RunProgress&);
template void run(StateVector<double>&, const Circuit&, const RunOptions&, const RunProgress&);

}  // namespace qmarg
