// Expression parsing (recursive descent with a nesting guard) and checked
// evaluation.
#include "qasm/expression.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "qmarg/qasm.hpp"

namespace qmarg {
namespace qasm {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Parentheses, signs and function calls nest at most this deep (each level is
// a few stack frames of the parser), and no expression tree is deeper than
// kMaxTreeDepth (evaluation recurses over it).
constexpr int kMaxNesting = 128;
constexpr int kMaxTreeDepth = 1024;

std::string number_text(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return text;
}

std::string operand_text(double x) { return x < 0 ? "(" + number_text(x) + ")" : number_text(x); }

}  // namespace

class ExpressionParser {
public:
    using Op = Expression::Op;
    using Node = Expression::Node;

    ExpressionParser(TokenStream& stream, const std::vector<std::string>& params, const std::string& gate)
        : ts_(stream), params_(params), gate_(gate) {}

    Expression run() {
        expr_.root_ = parse_sum();
        return std::move(expr_);
    }

private:
    // One level of nesting, opened by `at` (a parenthesis, sign, function or '^').
    struct Nest {
        Nest(ExpressionParser& p, const Token& at) : parser(p) {
            if (++parser.nesting_ > kMaxNesting) {
                parser.ts_.fail(at, "expression nested more than " + std::to_string(kMaxNesting) + " levels deep");
            }
        }
        ~Nest() { --parser.nesting_; }
        ExpressionParser& parser;
    };

    int add(Node node) {
        expr_.nodes_.push_back(node);
        return static_cast<int>(expr_.nodes_.size()) - 1;
    }

    int number(double value, SourceLocation at) {
        Node n;
        n.op = Op::Number;
        n.value = value;
        n.location = at;
        return add(n);
    }

    // An operator node, folded to a number when its operands are numbers.
    int make(Op op, int lhs, int rhs, const Token& at) {
        const Node& a = expr_.nodes_[lhs];
        const bool binary = rhs >= 0;
        const bool constant = a.op == Op::Number && (!binary || expr_.nodes_[rhs].op == Op::Number);
        if (constant) {
            const double b = binary ? expr_.nodes_[rhs].value : 0.0;
            return number(Expression::compute(op, a.value, b, location_of(at), ts_.file(), ""), location_of(at));
        }
        Node n;
        n.op = op;
        n.lhs = lhs;
        n.rhs = rhs;
        n.location = location_of(at);
        n.depth = 1 + std::max(a.depth, binary ? expr_.nodes_[rhs].depth : 0);
        if (n.depth > kMaxTreeDepth) {
            ts_.fail(at, "expression has more than " + std::to_string(kMaxTreeDepth) +
                             " nested operations on parameters");
        }
        return add(n);
    }

    int parse_sum() {
        int lhs = parse_product();
        while (ts_.at(TokenKind::Plus) || ts_.at(TokenKind::Minus)) {
            const Token& op = ts_.next();
            const int rhs = parse_product();
            lhs = make(op.kind == TokenKind::Plus ? Op::Add : Op::Sub, lhs, rhs, op);
        }
        return lhs;
    }

    int parse_product() {
        int lhs = parse_unary();
        while (ts_.at(TokenKind::Star) || ts_.at(TokenKind::Slash)) {
            const Token& op = ts_.next();
            const int rhs = parse_unary();
            lhs = make(op.kind == TokenKind::Star ? Op::Mul : Op::Div, lhs, rhs, op);
        }
        return lhs;
    }

    int parse_unary() {
        if (ts_.at(TokenKind::Minus) || ts_.at(TokenKind::Plus)) {
            const Token& sign = ts_.next();
            Nest nest(*this, sign);
            const int operand = parse_unary();
            return sign.kind == TokenKind::Minus ? make(Op::Neg, operand, -1, sign) : operand;
        }
        return parse_power();
    }

    // base ^ exponent, right-associative: 2^3^2 = 2^9, and -2^2 = -(2^2).
    int parse_power() {
        const int base = parse_primary();
        if (!ts_.at(TokenKind::Caret)) return base;
        const Token& op = ts_.next();
        Nest nest(*this, op);
        const int exponent = parse_unary();
        return make(Op::Pow, base, exponent, op);
    }

    int parse_primary() {
        const Token& token = ts_.peek();
        if (token.kind == TokenKind::Integer || token.kind == TokenKind::Real) {
            ts_.next();
            return number(literal(token), location_of(token));
        }
        if (token.kind == TokenKind::LParen) {
            ts_.next();
            Nest nest(*this, token);
            const int inner = parse_sum();
            ts_.expect(TokenKind::RParen, "')'");
            return inner;
        }
        if (token.kind != TokenKind::Identifier) ts_.fail_expected("an expression");
        ts_.next();
        if (token.text == "pi") return number(kPi, location_of(token));
        const Op function = function_named(token.text);
        if (function != Op::Number) {
            ts_.expect(TokenKind::LParen, "'(' after " + std::string(token.text));
            Nest nest(*this, token);
            const int argument = parse_sum();
            ts_.expect(TokenKind::RParen, "')'");
            return make(function, argument, -1, token);
        }
        const auto it = std::find(params_.begin(), params_.end(), token.text);
        if (it != params_.end()) {
            Node n;
            n.op = Op::Param;
            n.param = static_cast<int>(it - params_.begin());
            n.location = location_of(token);
            return add(n);
        }
        if (gate_.empty()) {
            ts_.fail(token, "undefined identifier " + describe(token) +
                                " in expression (outside a gate definition only numbers and pi have values)");
        }
        ts_.fail(token, describe(token) + " is not a parameter of gate '" + gate_ + "'");
    }

    // Op::Number for names that are not functions.
    static Op function_named(std::string_view name) {
        if (name == "sin") return Op::Sin;
        if (name == "cos") return Op::Cos;
        if (name == "tan") return Op::Tan;
        if (name == "exp") return Op::Exp;
        if (name == "ln") return Op::Ln;
        if (name == "sqrt") return Op::Sqrt;
        return Op::Number;
    }

    double literal(const Token& token) const {
        double value = 0;
        const char* first = token.text.data();
        const char* last = first + token.text.size();
        const auto result = std::from_chars(first, last, value);
        if (result.ec != std::errc() || result.ptr != last || !std::isfinite(value)) {
            ts_.fail(token, "number " + describe(token) + " is out of the range of double precision");
        }
        return value;
    }

    TokenStream& ts_;
    const std::vector<std::string>& params_;
    const std::string& gate_;
    Expression expr_;
    int nesting_ = 0;
};

Expression Expression::parse(TokenStream& stream, const std::vector<std::string>& params, const std::string& gate) {
    return ExpressionParser(stream, params, gate).run();
}

bool Expression::is_constant() const { return nodes_[root_].op == Op::Number; }

double Expression::constant_value() const { return nodes_[root_].value; }

double Expression::evaluate(const std::vector<double>& params, const std::string& file,
                            const std::string& context) const {
    return eval(root_, params, file, context);
}

double Expression::eval(int node, const std::vector<double>& params, const std::string& file,
                        const std::string& context) const {
    const Node& n = nodes_[node];
    switch (n.op) {
        case Op::Number: return n.value;
        case Op::Param: return params[n.param];
        default: break;
    }
    const double a = eval(n.lhs, params, file, context);
    const double b = n.rhs >= 0 ? eval(n.rhs, params, file, context) : 0.0;
    return compute(n.op, a, b, n.location, file, context);
}

double Expression::compute(Op op, double a, double b, SourceLocation at, const std::string& file,
                           const std::string& context) {
    auto fail = [&](const std::string& message) { throw QasmError(file, at.line, at.column, message + context); };
    double r = 0;
    std::string shown;
    switch (op) {
        case Op::Number:
        case Op::Param: return a;
        case Op::Neg: return -a;
        case Op::Add: r = a + b, shown = operand_text(a) + " + " + operand_text(b); break;
        case Op::Sub: r = a - b, shown = operand_text(a) + " - " + operand_text(b); break;
        case Op::Mul: r = a * b, shown = operand_text(a) + " * " + operand_text(b); break;
        case Op::Div:
            if (b == 0) fail("division by zero");
            r = a / b, shown = operand_text(a) + " / " + operand_text(b);
            break;
        case Op::Pow: r = std::pow(a, b), shown = operand_text(a) + " ^ " + operand_text(b); break;
        case Op::Sin: r = std::sin(a), shown = "sin(" + number_text(a) + ")"; break;
        case Op::Cos: r = std::cos(a), shown = "cos(" + number_text(a) + ")"; break;
        case Op::Tan: r = std::tan(a), shown = "tan(" + number_text(a) + ")"; break;
        case Op::Exp: r = std::exp(a), shown = "exp(" + number_text(a) + ")"; break;
        case Op::Ln:
            if (!(a > 0)) fail("ln of non-positive value " + number_text(a));
            r = std::log(a), shown = "ln(" + number_text(a) + ")";
            break;
        case Op::Sqrt:
            if (a < 0) fail("sqrt of negative value " + number_text(a));
            r = std::sqrt(a), shown = "sqrt(" + number_text(a) + ")";
            break;
    }
    if (!std::isfinite(r)) fail(shown + " is not a finite real number");
    return r;
}

}  // namespace qasm
}  // namespace qmarg
