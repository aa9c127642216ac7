// What a program means: the symbol table (registers and gates share one
// namespace, as in OpenQASM 2.0), gate definitions, and the circuit being
// built as statements are read. Gate uses are expanded here: broadcast over
// registers, checked (distinct qubits, nothing after a measurement), and
// flattened through user definitions down to the built-in gates.
//
// Expansion is bounded before it starts: every definition knows how many
// operations and steps one use of it produces (saturating counts), so a short
// program with exponentially nested definitions is rejected, not run.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "qasm/expression.hpp"
#include "qasm/qelib1.hpp"
#include "qasm/token_stream.hpp"
#include "qmarg/circuit.hpp"
#include "qmarg/qasm.hpp"

namespace qmarg {
namespace qasm {

// One statement in a gate body: a gate applied to some of the enclosing gate's
// qubit arguments, or a barrier (which does nothing).
struct GateStatement {
    int gate = -1;  // index into the gate table; -1 for a barrier
    std::vector<Expression> params;
    std::vector<int> args;  // positions in the enclosing gate's qubit list
    SourceLocation location;
};

struct Gate {
    std::string name;
    SourceLocation location;
    int num_params = 0;
    int num_qubits = 0;
    const StandardGate* standard = nullptr;  // built in; otherwise `body` defines it
    std::vector<std::string> param_names;
    std::vector<std::string> qubit_names;
    std::vector<GateStatement> body;
    // Per use: operations emitted, statements visited, and how deep user
    // definitions nest inside it (0 for a built-in gate).
    std::uint64_t operations = 1;
    std::uint64_t steps = 1;
    int depth = 0;
};

// A qubit or classical argument as written at top level: a whole register
// (index -1) or one element.
struct Argument {
    int reg = -1;
    int index = -1;
    Token token;  // the register name, for messages
};

class CircuitBuilder {
public:
    enum class SymbolKind { QuantumRegister, ClassicalRegister, Gate };
    struct Symbol {
        SymbolKind kind;
        int index;
        SourceLocation location;
        bool from_qelib1;
    };

    CircuitBuilder(const TokenStream& stream, const QasmLimits& limits);

    const Symbol* find(std::string_view name) const;
    const Gate& gate(int index) const { return gates_[index]; }
    const Register& reg(bool quantum, int index) const;
    bool qelib1_included() const { return qelib1_included_; }

    // Fails unless `name` may name something new (`what`: "qreg", "gate", ...).
    void check_new_name(const Token& name, const char* what) const;

    void declare_register(bool quantum, const Token& name, const Token& size);
    void include_qelib1(const Token& at);
    void define_gate(Gate gate, const Token& name);

    // Applies gate `gate` with constant `params` to `args` (broadcast over
    // whole registers); `at` is the gate's name in the statement.
    void apply(const Token& at, int gate, const std::vector<double>& params, const std::vector<Argument>& args);
    void measure(const Token& at, const Argument& qubit, const Argument& bit);

    Circuit finish();

private:
    void add_symbol(const std::string& name, SymbolKind kind, int index, SourceLocation at, bool from_qelib1);
    void add_standard_gate(const StandardGate& standard, bool from_qelib1);
    void expand(int gate, const double* params, const int* qubits, const std::string& context);
    int size_of(const Argument& arg, bool quantum) const;
    int element(const Argument& arg, bool quantum, int i) const;

    const TokenStream& ts_;
    QasmLimits limits_;
    std::unordered_map<std::string, Symbol> symbols_;
    std::vector<Gate> gates_;
    bool qelib1_included_ = false;
    Circuit circuit_;
    std::vector<SourceLocation> measured_at_;  // per qubit; line 0 if not measured
    std::vector<SourceLocation> written_at_;   // per classical bit
    std::vector<int> seen_;                    // per qubit: last statement instance that used it
    int instance_ = 0;
    std::uint64_t steps_ = 0;
    SourceLocation current_;  // the top-level statement being expanded
};

// Words that cannot name registers, gates, parameters or qubit arguments.
bool is_reserved(std::string_view word);

}  // namespace qasm
}  // namespace qmarg
