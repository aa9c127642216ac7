// CircuitBuilder: symbols, registers, definitions, and gate expansion.
#include "qasm/circuit_builder.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

namespace qmarg {
namespace qasm {
namespace {

// Definitions nest at most this deep (expansion recurses once per level).
constexpr int kMaxGateDepth = 256;
// Expansion steps allowed per permitted operation: room for barriers and
// nesting, and still a bound linear in max_operations.
constexpr std::uint64_t kStepsPerOperation = 16;

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

std::string at_text(SourceLocation at) { return std::to_string(at.line) + ":" + std::to_string(at.column); }

const char* kind_name(CircuitBuilder::SymbolKind kind) {
    switch (kind) {
        case CircuitBuilder::SymbolKind::QuantumRegister: return "qreg";
        case CircuitBuilder::SymbolKind::ClassicalRegister: return "creg";
        case CircuitBuilder::SymbolKind::Gate: return "gate";
    }
    return "name";
}

std::string plural(std::uint64_t n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

bool is_reserved(std::string_view word) {
    static const char* const words[] = {"OPENQASM", "include", "qreg", "creg", "gate",  "opaque", "measure",
                                        "reset",    "barrier", "if",   "pi",   "U",     "CX",     "sin",
                                        "cos",      "tan",     "exp",  "ln",   "sqrt"};
    for (const char* w : words)
        if (word == w) return true;
    return false;
}

CircuitBuilder::CircuitBuilder(const TokenStream& stream, const QasmLimits& limits) : ts_(stream), limits_(limits) {
    circuit_.source_name = stream.file();
    for (const StandardGate& g : primitive_gates()) add_standard_gate(g, false);
}

const CircuitBuilder::Symbol* CircuitBuilder::find(std::string_view name) const {
    const auto it = symbols_.find(std::string(name));
    return it == symbols_.end() ? nullptr : &it->second;
}

const Register& CircuitBuilder::reg(bool quantum, int index) const {
    return quantum ? circuit_.quantum_registers[index] : circuit_.classical_registers[index];
}

void CircuitBuilder::check_new_name(const Token& name, const char* what) const {
    if (is_reserved(name.text)) {
        ts_.fail(name, describe(name) + " is a reserved word and cannot name a " + what);
    }
    if (const Symbol* old = find(name.text)) {
        if (old->from_qelib1) {
            ts_.fail(name, describe(name) + " is already defined (a gate of qelib1.inc)");
        }
        ts_.fail(name, describe(name) + " is already defined (a " + kind_name(old->kind) + " at " +
                           at_text(old->location) + ")");
    }
}

void CircuitBuilder::add_symbol(const std::string& name, SymbolKind kind, int index, SourceLocation at,
                                bool from_qelib1) {
    symbols_.emplace(name, Symbol{kind, index, at, from_qelib1});
}

void CircuitBuilder::add_standard_gate(const StandardGate& standard, bool from_qelib1) {
    Gate g;
    g.name = standard.name;
    g.num_params = standard.num_params;
    g.num_qubits = standard.num_qubits;
    g.standard = &standard;
    g.depth = 0;
    gates_.push_back(std::move(g));
    add_symbol(standard.name, SymbolKind::Gate, static_cast<int>(gates_.size()) - 1, SourceLocation{},
               from_qelib1);
}

void CircuitBuilder::declare_register(bool quantum, const Token& name, const Token& size_token) {
    check_new_name(name, quantum ? "qreg" : "creg");
    long long size = 0;
    const auto result = std::from_chars(size_token.text.data(), size_token.text.data() + size_token.text.size(), size);
    const int limit = quantum ? limits_.max_qubits : limits_.max_clbits;
    int& total = quantum ? circuit_.num_qubits : circuit_.num_clbits;
    if (result.ec != std::errc() || size > limit) {
        ts_.fail(size_token, std::string(quantum ? "qreg" : "creg") + " size " + describe(size_token) +
                                 " is too large: at most " + std::to_string(limit) + (quantum ? " qubits" : " bits") +
                                 " in all registers together");
    }
    if (size < 1) ts_.fail(size_token, "register size must be at least 1, found " + describe(size_token));
    if (static_cast<long long>(total) + size > limit) {
        ts_.fail(size_token, std::string(quantum ? "qreg" : "creg") + " '" + std::string(name.text) + "[" +
                                 std::to_string(size) + "]' brings the program to " +
                                 std::to_string(total + size) + (quantum ? " qubits" : " classical bits") +
                                 ": at most " + std::to_string(limit) + " are supported");
    }
    Register r{std::string(name.text), total, static_cast<int>(size)};
    auto& registers = quantum ? circuit_.quantum_registers : circuit_.classical_registers;
    registers.push_back(r);
    total += static_cast<int>(size);
    if (quantum) {
        measured_at_.resize(total);
        seen_.resize(total, -1);
    } else {
        written_at_.resize(total);
    }
    add_symbol(r.name, quantum ? SymbolKind::QuantumRegister : SymbolKind::ClassicalRegister,
               static_cast<int>(registers.size()) - 1, location_of(name), false);
}

void CircuitBuilder::include_qelib1(const Token& at) {
    if (qelib1_included_) ts_.fail(at, "qelib1.inc is already included");
    for (const StandardGate& g : qelib1_gates()) {
        if (const Symbol* old = find(g.name)) {
            ts_.fail(at, std::string("qelib1.inc defines gate '") + g.name + "', which is already defined (a " +
                             kind_name(old->kind) + " at " + at_text(old->location) + ")");
        }
    }
    for (const StandardGate& g : qelib1_gates()) add_standard_gate(g, true);
    qelib1_included_ = true;
}

void CircuitBuilder::define_gate(Gate gate, const Token& name) {
    check_new_name(name, "gate");
    gate.operations = 0;
    gate.steps = 1;
    gate.depth = 1;
    for (const GateStatement& s : gate.body) {
        if (s.gate < 0) {
            gate.steps = saturating_add(gate.steps, 1);
            continue;
        }
        const Gate& callee = gates_[s.gate];
        gate.operations = saturating_add(gate.operations, callee.operations);
        gate.steps = saturating_add(gate.steps, callee.steps);
        gate.depth = std::max(gate.depth, callee.depth + 1);
    }
    if (gate.depth > kMaxGateDepth) {
        ts_.fail(name, "gate '" + gate.name + "' nests gate definitions " + std::to_string(gate.depth) +
                           " deep: at most " + std::to_string(kMaxGateDepth) + " levels are supported");
    }
    gates_.push_back(std::move(gate));
    add_symbol(gates_.back().name, SymbolKind::Gate, static_cast<int>(gates_.size()) - 1, location_of(name), false);
}

int CircuitBuilder::size_of(const Argument& arg, bool quantum) const {
    return arg.index >= 0 ? 1 : reg(quantum, arg.reg).size;
}

int CircuitBuilder::element(const Argument& arg, bool quantum, int i) const {
    const Register& r = reg(quantum, arg.reg);
    return r.offset + (arg.index >= 0 ? arg.index : i);
}

void CircuitBuilder::apply(const Token& at, int gate_index, const std::vector<double>& params,
                           const std::vector<Argument>& args) {
    const Gate& g = gates_[gate_index];
    // Broadcasting: whole registers must agree in size; single qubits repeat.
    int instances = 1;
    const Argument* first_register = nullptr;
    for (const Argument& a : args) {
        if (a.index >= 0) continue;
        const int size = size_of(a, true);
        if (first_register == nullptr) {
            first_register = &a;
            instances = size;
        } else if (size != instances) {
            ts_.fail(a.token, "registers of different sizes in one gate: '" + std::string(a.token.text) + "' has " +
                                  plural(size, "qubit") + ", '" + std::string(first_register->token.text) +
                                  "' has " + std::to_string(instances));
        }
    }
    const std::uint64_t operations = saturating_mul(g.operations, static_cast<std::uint64_t>(instances));
    if (saturating_add(circuit_.operations.size(), operations) > limits_.max_operations) {
        ts_.fail(at, "this statement takes the circuit past " + std::to_string(limits_.max_operations) +
                         " operations (QasmLimits::max_operations)");
    }
    const std::uint64_t steps = saturating_mul(g.steps, static_cast<std::uint64_t>(instances));
    const std::uint64_t max_steps = saturating_mul(limits_.max_operations, kStepsPerOperation);
    if (saturating_add(steps_, steps) > max_steps) {
        ts_.fail(at, "expanding this statement takes more than " + std::to_string(max_steps) +
                         " steps through gate definitions (QasmLimits::max_operations x " +
                         std::to_string(kStepsPerOperation) + ")");
    }
    steps_ += steps;

    current_ = location_of(at);
    const std::string context =
        g.standard != nullptr ? std::string() : " (in gate '" + g.name + "' applied at " + at_text(current_) + ")";
    std::vector<int> qubits(args.size());
    for (int i = 0; i < instances; ++i) {
        ++instance_;
        for (std::size_t j = 0; j < args.size(); ++j) {
            const int q = element(args[j], true, i);
            if (seen_[q] == instance_) {
                ts_.fail(at, "gate '" + g.name + "' is applied to qubit " + circuit_.qubit_name(q) +
                                 " more than once (its qubit arguments must be distinct)");
            }
            seen_[q] = instance_;
            if (measured_at_[q].line > 0) {
                ts_.fail(at, "gate '" + g.name + "' acts on qubit " + circuit_.qubit_name(q) +
                                 " after its measurement at " + at_text(measured_at_[q]) +
                                 ": gates after a measurement are not supported in exact (marginal) simulation");
            }
            qubits[j] = q;
        }
        expand(gate_index, params.data(), qubits.data(), context);
    }
}

void CircuitBuilder::expand(int gate_index, const double* params, const int* qubits, const std::string& context) {
    const Gate& g = gates_[gate_index];
    if (g.standard != nullptr) {
        Operation op;
        if (g.standard->build(params, qubits, op)) {
            op.name = g.name;
            op.location = current_;
            circuit_.operations.push_back(std::move(op));
        }
        return;
    }
    const std::vector<double> bound(params, params + g.num_params);
    std::vector<double> values;
    std::vector<int> mapped;
    for (const GateStatement& s : g.body) {
        if (s.gate < 0) continue;
        values.clear();
        for (const Expression& e : s.params) values.push_back(e.evaluate(bound, ts_.file(), context));
        mapped.clear();
        for (int a : s.args) mapped.push_back(qubits[a]);
        expand(s.gate, values.data(), mapped.data(), context);
    }
}

void CircuitBuilder::measure(const Token& at, const Argument& qubit, const Argument& bit) {
    const int qubits = size_of(qubit, true);
    const int bits = size_of(bit, false);
    if (qubits != bits) {
        ts_.fail(bit.token, "measure needs as many classical bits as qubits: '" + std::string(qubit.token.text) +
                                "' gives " + plural(qubits, "qubit") + ", '" + std::string(bit.token.text) +
                                "' gives " + plural(bits, "bit"));
    }
    for (int i = 0; i < qubits; ++i) {
        const int q = element(qubit, true, i);
        const int b = element(bit, false, i);
        if (measured_at_[q].line > 0) {
            ts_.fail(at, "qubit " + circuit_.qubit_name(q) + " is measured again (first at " +
                             at_text(measured_at_[q]) +
                             "): repeated measurements are not supported in exact (marginal) simulation");
        }
        if (written_at_[b].line > 0) {
            ts_.fail(at, "classical bit " + circuit_.clbit_name(b) + " is written again (first at " +
                             at_text(written_at_[b]) + "): each bit may receive one measurement");
        }
        measured_at_[q] = location_of(at);
        written_at_[b] = location_of(at);
        circuit_.measurements.push_back(Measurement{q, b, location_of(at)});
    }
}

Circuit CircuitBuilder::finish() {
    std::stable_sort(circuit_.measurements.begin(), circuit_.measurements.end(),
                     [](const Measurement& a, const Measurement& b) { return a.bit < b.bit; });
    return std::move(circuit_);
}

}  // namespace qasm
}  // namespace qmarg
