// The OpenQASM 2.0 grammar, statement by statement, over a TokenStream; the
// meaning of each statement is handed to a CircuitBuilder.
#pragma once

#include "qasm/circuit_builder.hpp"
#include "qasm/token_stream.hpp"
#include "qmarg/circuit.hpp"
#include "qmarg/qasm.hpp"

namespace qmarg {
namespace qasm {

class Parser {
public:
    Parser(TokenStream& stream, const QasmLimits& limits);
    Circuit parse_program();

private:
    void header();
    void statement();
    void include();
    void register_declaration(bool quantum);
    void gate_definition();
    void gate_body_statement(Gate& gate);
    void gate_application();
    void measure();
    void barrier();

    // A gate name at the current token: its index in the gate table, with a
    // message for names that are undefined or not gates.
    int gate_named(const Token& name, const Gate* being_defined);
    void check_counts(const Token& name, const Gate& gate, std::size_t params, std::size_t qubits);
    Argument argument(bool quantum);
    int integer(const Token& token);

    TokenStream& ts_;
    CircuitBuilder builder_;
};

}  // namespace qasm
}  // namespace qmarg
