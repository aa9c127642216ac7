// TokenStream: the cursor and the one place syntax errors are phrased.
#include "qasm/token_stream.hpp"

#include <utility>

#include "qmarg/qasm.hpp"

namespace qmarg {
namespace qasm {

TokenStream::TokenStream(std::vector<Token> tokens, std::string file)
    : tokens_(std::move(tokens)), file_(std::move(file)) {
    if (tokens_.empty() || tokens_.back().kind != TokenKind::End) tokens_.push_back(Token{});
}

const Token& TokenStream::next() {
    const Token& token = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return token;
}

bool TokenStream::accept(TokenKind kind) {
    if (!at(kind)) return false;
    next();
    return true;
}

const Token& TokenStream::expect(TokenKind kind, const std::string& what) {
    if (!at(kind)) fail_expected(what);
    return next();
}

void TokenStream::fail(const Token& at, const std::string& message) const { fail(location_of(at), message); }

void TokenStream::fail(SourceLocation at, const std::string& message) const {
    throw QasmError(file_, at.line, at.column, message);
}

void TokenStream::fail_expected(const std::string& what) const {
    fail(peek(), "expected " + what + ", found " + describe(peek()));
}

}  // namespace qasm
}  // namespace qmarg
