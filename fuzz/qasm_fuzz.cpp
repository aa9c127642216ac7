// libFuzzer target for the OpenQASM reader. Any input must end in a Circuit
// that is well formed (every operation runnable: qubits in range and distinct,
// a unitary matrix of the right size, measurements consistent) or in a
// QasmError that points into the input. Anything else is a finding: a crash,
// a sanitizer report, another exception, a malformed circuit, or a hang.
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "qmarg/qasm.hpp"

namespace {

[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "qasm_fuzz: %s\n", what);
    __builtin_trap();
}

bool distinct_in_range(const std::vector<int>& qubits, int n) {
    for (std::size_t i = 0; i < qubits.size(); ++i) {
        if (qubits[i] < 0 || qubits[i] >= n) return false;
        for (std::size_t j = 0; j < i; ++j)
            if (qubits[i] == qubits[j]) return false;
    }
    return true;
}

void check_circuit(const qmarg::Circuit& c) {
    if (c.num_qubits < 0 || c.num_clbits < 0) finding("negative register total");
    for (const qmarg::Operation& op : c.operations) {
        if (op.targets.empty() || op.targets.size() > 5) finding("operation with no or too many targets");
        std::vector<int> all = op.targets;
        all.insert(all.end(), op.controls.begin(), op.controls.end());
        if (!distinct_in_range(all, c.num_qubits)) finding("operation qubits out of range or repeated");
        const int dim = 1 << op.targets.size();
        if (op.matrix.dim() != dim) finding("matrix size does not match the targets");
        for (int r = 0; r < dim; ++r) {
            for (int col = 0; col < dim; ++col) {
                std::complex<double> dot = 0;
                for (int k = 0; k < dim; ++k) dot += op.matrix(r, k) * std::conj(op.matrix(col, k));
                if (!std::isfinite(dot.real()) || !std::isfinite(dot.imag())) finding("matrix entry not finite");
                if (std::abs(dot - (r == col ? 1.0 : 0.0)) > 1e-9) finding("matrix not unitary");
            }
        }
    }
    std::vector<int> qubits, bits;
    for (std::size_t i = 0; i < c.measurements.size(); ++i) {
        qubits.push_back(c.measurements[i].qubit);
        bits.push_back(c.measurements[i].bit);
        if (i > 0 && bits[i] <= bits[i - 1]) finding("measurements not ordered by classical bit");
    }
    if (!distinct_in_range(qubits, c.num_qubits) || !distinct_in_range(bits, c.num_clbits)) {
        finding("measurement out of range or repeated");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view source(reinterpret_cast<const char*>(data), size);
    // Small limits keep every input fast; the limits themselves are tested.
    qmarg::QasmLimits limits;
    limits.max_operations = 1 << 14;
    limits.max_qubits = 64;
    limits.max_clbits = 64;
    try {
        check_circuit(qmarg::parse_qasm(source, "fuzz.qasm", limits));
    } catch (const qmarg::QasmError& e) {
        std::size_t lines = 1;
        for (char ch : source) lines += ch == '\n';
        if (e.file() != "fuzz.qasm" || e.line() < 1 || e.column() < 1 || static_cast<std::size_t>(e.line()) > lines) {
            finding("error location outside the input");
        }
        if (std::string(e.what()).rfind("fuzz.qasm:", 0) != 0 || e.detail().empty()) finding("malformed message");
    } catch (const qmarg::Error&) {
        finding("an Error that is not a QasmError");
    }
    return 0;
}
