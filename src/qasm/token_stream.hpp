// A cursor over the token list with the checks every grammar rule needs:
// accept a token if it is there, or expect it and fail with
// "file:line:column: expected X, found Y".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "qasm/token.hpp"
#include "qmarg/circuit.hpp"

namespace qmarg {
namespace qasm {

class TokenStream {
public:
    TokenStream(std::vector<Token> tokens, std::string file);

    const std::string& file() const { return file_; }

    // The current token (the End token once the input is used up).
    const Token& peek() const { return tokens_[pos_]; }
    bool at(TokenKind kind) const { return peek().kind == kind; }
    bool at_word(std::string_view word) const { return at(TokenKind::Identifier) && peek().text == word; }

    // Consumes and returns the current token (never moves past End).
    const Token& next();
    // Consumes the current token if it is of `kind`.
    bool accept(TokenKind kind);
    // Consumes a token of `kind` or fails with "expected <what>, found ...".
    const Token& expect(TokenKind kind, const std::string& what);

    [[noreturn]] void fail(const Token& at, const std::string& message) const;
    [[noreturn]] void fail(SourceLocation at, const std::string& message) const;
    // "expected <what>, found <current token>" at the current token.
    [[noreturn]] void fail_expected(const std::string& what) const;

private:
    std::vector<Token> tokens_;
    std::string file_;
    std::size_t pos_ = 0;
};

inline SourceLocation location_of(const Token& token) { return SourceLocation{token.line, token.column}; }

}  // namespace qasm
}  // namespace qmarg
