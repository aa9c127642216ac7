// Statements of OpenQASM 2.0. Each rule consumes its tokens or fails at the
// first token that does not fit, naming what was expected there.
#include "qasm/parser.hpp"

#include <algorithm>
#include <charconv>
#include <string>

namespace qmarg {
namespace qasm {
namespace {

std::string count_text(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

bool is_qelib1_gate(std::string_view name) {
    for (const StandardGate& g : qelib1_gates())
        if (name == g.name) return true;
    return false;
}

}  // namespace

Parser::Parser(TokenStream& stream, const QasmLimits& limits) : ts_(stream), builder_(stream, limits) {}

Circuit Parser::parse_program() {
    header();
    while (!ts_.at(TokenKind::End)) statement();
    return builder_.finish();
}

void Parser::header() {
    if (!ts_.at_word("OPENQASM")) ts_.fail_expected("'OPENQASM 2.0;' at the start of the program");
    ts_.next();
    const Token& version = ts_.peek();
    if (version.kind != TokenKind::Real && version.kind != TokenKind::Integer) ts_.fail_expected("version 2.0");
    if (version.text != "2.0" && version.text != "2") {
        ts_.fail(version, "OpenQASM version " + std::string(version.text) +
                              " is not supported: qmarg reads OpenQASM 2.0");
    }
    ts_.next();
    ts_.expect(TokenKind::Semicolon, "';'");
}

void Parser::statement() {
    const Token& token = ts_.peek();
    if (token.kind != TokenKind::Identifier) ts_.fail_expected("a statement");
    const std::string_view word = token.text;
    if (word == "include") return include();
    if (word == "qreg") return register_declaration(true);
    if (word == "creg") return register_declaration(false);
    if (word == "gate") return gate_definition();
    if (word == "measure") return measure();
    if (word == "barrier") return barrier();
    if (word == "opaque") {
        ts_.fail(token, "'opaque' gates are not supported in exact (marginal) simulation: "
                        "qmarg needs the matrix of every gate");
    }
    if (word == "reset") ts_.fail(token, "'reset' is not supported in exact (marginal) simulation");
    if (word == "if") ts_.fail(token, "'if' is not supported in exact (marginal) simulation");
    if (word == "OPENQASM") ts_.fail(token, "the 'OPENQASM' header may appear only once, at the start");
    gate_application();
}

void Parser::include() {
    const Token& keyword = ts_.next();
    const Token& file = ts_.expect(TokenKind::String, "a file name in double quotes");
    if (file.text != "qelib1.inc") {
        ts_.fail(file, "cannot include " + quote(file.text, '"') + ": only \"qelib1.inc\" (built in) can be included");
    }
    ts_.expect(TokenKind::Semicolon, "';'");
    builder_.include_qelib1(keyword);
}

void Parser::register_declaration(bool quantum) {
    ts_.next();
    const Token& name = ts_.expect(TokenKind::Identifier, quantum ? "a qreg name" : "a creg name");
    ts_.expect(TokenKind::LBracket, "'['");
    const Token& size = ts_.expect(TokenKind::Integer, "an integer register size");
    ts_.expect(TokenKind::RBracket, "']'");
    ts_.expect(TokenKind::Semicolon, "';'");
    builder_.declare_register(quantum, name, size);
}

void Parser::gate_definition() {
    ts_.next();
    const Token& name = ts_.expect(TokenKind::Identifier, "a gate name");
    builder_.check_new_name(name, "gate");
    Gate gate;
    gate.name = std::string(name.text);
    gate.location = location_of(name);

    auto new_local = [&](const char* role) -> const Token& {
        const Token& local = ts_.expect(TokenKind::Identifier, std::string("a ") + role + " name");
        if (is_reserved(local.text)) {
            ts_.fail(local, describe(local) + " is a reserved word and cannot name a " + role);
        }
        const auto& params = gate.param_names;
        const auto& qubits = gate.qubit_names;
        if (std::find(params.begin(), params.end(), local.text) != params.end() ||
            std::find(qubits.begin(), qubits.end(), local.text) != qubits.end()) {
            ts_.fail(local, describe(local) + " is declared twice in gate '" + gate.name + "'");
        }
        return local;
    };

    if (ts_.accept(TokenKind::LParen)) {
        if (!ts_.accept(TokenKind::RParen)) {
            for (;;) {
                gate.param_names.emplace_back(new_local("parameter").text);
                if (ts_.accept(TokenKind::RParen)) break;
                ts_.expect(TokenKind::Comma, "',' or ')'");
            }
        }
    }
    do {
        gate.qubit_names.emplace_back(new_local("qubit argument").text);
    } while (ts_.accept(TokenKind::Comma));
    gate.num_params = static_cast<int>(gate.param_names.size());
    gate.num_qubits = static_cast<int>(gate.qubit_names.size());

    ts_.expect(TokenKind::LBrace, "'{' to begin the body of gate '" + gate.name + "'");
    while (!ts_.accept(TokenKind::RBrace)) {
        if (ts_.at(TokenKind::End)) ts_.fail_expected("'}' to end the body of gate '" + gate.name + "'");
        gate_body_statement(gate);
    }
    builder_.define_gate(std::move(gate), name);
}

void Parser::gate_body_statement(Gate& gate) {
    const Token& name = ts_.peek();
    if (name.kind != TokenKind::Identifier) ts_.fail_expected("a gate operation or '}'");
    for (const char* word : {"measure", "reset", "if", "opaque", "gate", "qreg", "creg", "include", "OPENQASM"}) {
        if (name.text == word) ts_.fail(name, "'" + std::string(word) + "' is not allowed in a gate body");
    }
    ts_.next();
    GateStatement s;
    s.location = location_of(name);
    const bool is_barrier = name.text == "barrier";
    const Gate* callee = nullptr;
    if (!is_barrier) {
        s.gate = gate_named(name, &gate);
        callee = &builder_.gate(s.gate);
        if (ts_.accept(TokenKind::LParen) && !ts_.accept(TokenKind::RParen)) {
            for (;;) {
                s.params.push_back(Expression::parse(ts_, gate.param_names, gate.name));
                if (ts_.accept(TokenKind::RParen)) break;
                ts_.expect(TokenKind::Comma, "',' or ')'");
            }
        }
    }
    do {
        const Token& arg = ts_.expect(TokenKind::Identifier, "a qubit argument of gate '" + gate.name + "'");
        const auto it = std::find(gate.qubit_names.begin(), gate.qubit_names.end(), arg.text);
        if (it == gate.qubit_names.end()) {
            ts_.fail(arg, describe(arg) + " is not a qubit argument of gate '" + gate.name + "'");
        }
        if (ts_.at(TokenKind::LBracket)) {
            ts_.fail(ts_.peek(), "the qubit arguments of a gate are single qubits: " + describe(arg) +
                                     " cannot be indexed");
        }
        const int position = static_cast<int>(it - gate.qubit_names.begin());
        if (!is_barrier && std::find(s.args.begin(), s.args.end(), position) != s.args.end()) {
            ts_.fail(arg, "gate '" + callee->name + "' is applied to qubit " + describe(arg) +
                              " more than once (its qubit arguments must be distinct)");
        }
        s.args.push_back(position);
    } while (ts_.accept(TokenKind::Comma));
    if (!is_barrier) check_counts(name, *callee, s.params.size(), s.args.size());
    ts_.expect(TokenKind::Semicolon, "';'");
    gate.body.push_back(std::move(s));
}

int Parser::gate_named(const Token& name, const Gate* being_defined) {
    const CircuitBuilder::Symbol* symbol = builder_.find(name.text);
    if (symbol == nullptr) {
        if (being_defined != nullptr && name.text == being_defined->name) {
            ts_.fail(name, "gate '" + being_defined->name + "' cannot use itself: recursive definitions are not allowed");
        }
        std::string message = "undefined gate " + describe(name);
        if (!builder_.qelib1_included() && is_qelib1_gate(name.text)) {
            message += " (it is defined in qelib1.inc: add 'include \"qelib1.inc\";' after the header)";
        }
        ts_.fail(name, message);
    }
    if (symbol->kind != CircuitBuilder::SymbolKind::Gate) {
        ts_.fail(name, describe(name) + " is a " +
                           (symbol->kind == CircuitBuilder::SymbolKind::QuantumRegister ? "qreg" : "creg") +
                           ", not a gate");
    }
    return symbol->index;
}

void Parser::check_counts(const Token& name, const Gate& gate, std::size_t params, std::size_t qubits) {
    if (params != static_cast<std::size_t>(gate.num_params)) {
        ts_.fail(name, "gate '" + gate.name + "' takes " + count_text(gate.num_params, "parameter", "parameters") +
                           ", found " + std::to_string(params));
    }
    if (qubits != static_cast<std::size_t>(gate.num_qubits)) {
        ts_.fail(name, "gate '" + gate.name + "' takes " +
                           count_text(gate.num_qubits, "qubit argument", "qubit arguments") + ", found " +
                           std::to_string(qubits));
    }
}

void Parser::gate_application() {
    const Token& name = ts_.next();
    const int index = gate_named(name, nullptr);
    const Gate& gate = builder_.gate(index);
    std::vector<double> params;
    if (ts_.accept(TokenKind::LParen) && !ts_.accept(TokenKind::RParen)) {
        static const std::vector<std::string> no_params;
        for (;;) {
            params.push_back(Expression::parse(ts_, no_params, std::string()).constant_value());
            if (ts_.accept(TokenKind::RParen)) break;
            ts_.expect(TokenKind::Comma, "',' or ')'");
        }
    }
    std::vector<Argument> args;
    do {
        args.push_back(argument(true));
    } while (ts_.accept(TokenKind::Comma));
    check_counts(name, gate, params.size(), args.size());
    ts_.expect(TokenKind::Semicolon, "';'");
    builder_.apply(name, index, params, args);
}

void Parser::measure() {
    const Token& keyword = ts_.next();
    const Argument qubit = argument(true);
    ts_.expect(TokenKind::Arrow, "'->'");
    const Argument bit = argument(false);
    ts_.expect(TokenKind::Semicolon, "';'");
    builder_.measure(keyword, qubit, bit);
}

void Parser::barrier() {
    ts_.next();
    do {
        argument(true);
    } while (ts_.accept(TokenKind::Comma));
    ts_.expect(TokenKind::Semicolon, "';'");
}

Argument Parser::argument(bool quantum) {
    const char* kind = quantum ? "qreg" : "creg";
    const Token& name = ts_.expect(TokenKind::Identifier, quantum ? "a qubit argument" : "a classical bit argument");
    const CircuitBuilder::Symbol* symbol = builder_.find(name.text);
    if (symbol == nullptr) ts_.fail(name, std::string("undefined ") + kind + " " + describe(name));
    const auto wanted =
        quantum ? CircuitBuilder::SymbolKind::QuantumRegister : CircuitBuilder::SymbolKind::ClassicalRegister;
    if (symbol->kind != wanted) {
        const char* is = symbol->kind == CircuitBuilder::SymbolKind::Gate
                             ? "a gate"
                             : (symbol->kind == CircuitBuilder::SymbolKind::QuantumRegister ? "a qreg" : "a creg");
        ts_.fail(name, describe(name) + " is " + is + ", not a " + kind);
    }
    Argument arg;
    arg.reg = symbol->index;
    arg.token = name;
    if (ts_.accept(TokenKind::LBracket)) {
        const Token& index = ts_.expect(TokenKind::Integer, "an integer index");
        const Register& r = builder_.reg(quantum, arg.reg);
        const int i = integer(index);
        if (i >= r.size) {
            ts_.fail(index, "index " + std::string(index.text) + " is out of range for " + kind + " " + r.name +
                                "[" + std::to_string(r.size) + "] (valid indices are 0.." +
                                std::to_string(r.size - 1) + ")");
        }
        arg.index = i;
        ts_.expect(TokenKind::RBracket, "']'");
    }
    return arg;
}

int Parser::integer(const Token& token) {
    int value = 0;
    const auto result = std::from_chars(token.text.data(), token.text.data() + token.text.size(), value);
    if (result.ec != std::errc() || result.ptr != token.text.data() + token.text.size()) {
        ts_.fail(token, "integer " + describe(token) + " is too large");
    }
    return value;
}

}  // namespace qasm
}  // namespace qmarg
