// Parameter expressions: pi, real literals, + - * / ^ (right-associative,
// binding tighter than unary minus), parentheses, sin cos tan exp ln sqrt, and
// inside a gate definition the gate's parameters.
//
// An expression is a small tree kept in a vector (no pointer chains to unwind).
// Subtrees without parameters are folded to numbers while parsing, so a
// top-level expression is a number as soon as it is read, and its errors
// (division by zero, ln of 0, overflow) point at the operator that failed.
// Inside a gate they are checked again with the actual arguments wherever the
// gate is used. No value that is NaN or infinite ever leaves an expression.
#pragma once

#include <string>
#include <vector>

#include "qasm/token_stream.hpp"
#include "qmarg/circuit.hpp"

namespace qmarg {
namespace qasm {

class Expression {
public:
    // Parses one expression at the stream's position. `params` names the
    // parameters in scope (empty outside a gate definition); `gate` names the
    // gate being defined, for messages.
    static Expression parse(TokenStream& stream, const std::vector<std::string>& params, const std::string& gate);

    bool is_constant() const;
    // The value of a constant expression.
    double constant_value() const;

    // The value with params[i] bound to parameter i. Failures are QasmErrors at
    // the failing operator in `file`, with `context` appended to the message.
    double evaluate(const std::vector<double>& params, const std::string& file, const std::string& context) const;

private:
    enum class Op { Number, Param, Neg, Add, Sub, Mul, Div, Pow, Sin, Cos, Tan, Exp, Ln, Sqrt };
    struct Node {
        Op op = Op::Number;
        double value = 0;  // Number
        int param = 0;     // Param
        int lhs = -1;      // operand of unary ops and functions
        int rhs = -1;
        SourceLocation location;  // the operator, function name or literal
        int depth = 1;
    };
    friend class ExpressionParser;

    double eval(int node, const std::vector<double>& params, const std::string& file,
                const std::string& context) const;
    // The checked result of an operation on finite operands.
    static double compute(Op op, double a, double b, SourceLocation at, const std::string& file,
                          const std::string& context);

    std::vector<Node> nodes_;
    int root_ = -1;
};

}  // namespace qasm
}  // namespace qmarg
