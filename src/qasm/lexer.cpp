// The lexer: one pass over the bytes, tracking line and column. Every branch
// consumes at least one byte or stops, so any input ends in a token list or a
// QasmError.
#include "qasm/lexer.hpp"

#include "qmarg/qasm.hpp"

namespace qmarg {
namespace qasm {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

class Lexer {
public:
    Lexer(std::string_view source, const std::string& file) : src_(source), file_(file) {}

    std::vector<Token> run() {
        std::vector<Token> tokens;
        for (;;) {
            skip_space_and_comments();
            Token token;
            token.line = line_;
            token.column = column_;
            if (pos_ >= src_.size()) {
                tokens.push_back(token);
                return tokens;
            }
            const std::size_t start = pos_;
            token.kind = scan(token);
            if (token.kind != TokenKind::String) token.text = src_.substr(start, pos_ - start);
            tokens.push_back(token);
        }
    }

private:
    char at(std::size_t offset = 0) const { return pos_ + offset < src_.size() ? src_[pos_ + offset] : '\0'; }

    void advance() {
        if (src_[pos_] == '\n') {
            ++line_;
            column_ = 1;
        } else {
            ++column_;
        }
        ++pos_;
    }

    [[noreturn]] void fail(int line, int column, const std::string& message) const {
        throw QasmError(file_, line, column, message);
    }

    void skip_space_and_comments() {
        while (pos_ < src_.size()) {
            const char c = src_[pos_];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
                advance();
            } else if (c == '/' && at(1) == '/') {
                while (pos_ < src_.size() && src_[pos_] != '\n') advance();
            } else if (c == '/' && at(1) == '*') {
                fail(line_, column_, "block comments '/* */' are not part of OpenQASM 2.0: use '//'");
            } else {
                return;
            }
        }
    }

    TokenKind scan(Token& token) {
        const char c = src_[pos_];
        if (is_ident_start(c)) {
            while (pos_ < src_.size() && is_ident_char(src_[pos_])) advance();
            return TokenKind::Identifier;
        }
        if (is_digit(c) || (c == '.' && is_digit(at(1)))) return scan_number();
        if (c == '"') return scan_string(token);
        advance();
        switch (c) {
            case '(': return TokenKind::LParen;
            case ')': return TokenKind::RParen;
            case '[': return TokenKind::LBracket;
            case ']': return TokenKind::RBracket;
            case '{': return TokenKind::LBrace;
            case '}': return TokenKind::RBrace;
            case ';': return TokenKind::Semicolon;
            case ',': return TokenKind::Comma;
            case '+': return TokenKind::Plus;
            case '*': return TokenKind::Star;
            case '/': return TokenKind::Slash;
            case '^': return TokenKind::Caret;
            case '-':
                if (at() == '>') {
                    advance();
                    return TokenKind::Arrow;
                }
                return TokenKind::Minus;
            case '=':
                if (at() == '=') {
                    advance();
                    return TokenKind::Equals;
                }
                break;
            default: break;
        }
        fail(token.line, token.column, "unexpected character " + quote(std::string_view(&c, 1)));
    }

    // [0-9]+ | ([0-9]+ '.' [0-9]* | '.' [0-9]+) ([eE] [+-]? [0-9]+)?, and an
    // integer with an exponent is a real.
    TokenKind scan_number() {
        bool real = false;
        while (is_digit(at())) advance();
        if (at() == '.') {
            real = true;
            advance();
            while (is_digit(at())) advance();
        }
        if ((at() == 'e' || at() == 'E') &&
            (is_digit(at(1)) || ((at(1) == '+' || at(1) == '-') && is_digit(at(2))))) {
            real = true;
            advance();
            if (at() == '+' || at() == '-') advance();
            while (is_digit(at())) advance();
        }
        return real ? TokenKind::Real : TokenKind::Integer;
    }

    TokenKind scan_string(Token& token) {
        advance();  // opening quote
        const std::size_t start = pos_;
        while (pos_ < src_.size() && src_[pos_] != '"' && src_[pos_] != '\n') advance();
        if (pos_ >= src_.size() || src_[pos_] != '"') {
            fail(token.line, token.column, "unterminated string: a string ends with '\"' on the line it starts");
        }
        token.text = src_.substr(start, pos_ - start);
        advance();  // closing quote
        return TokenKind::String;
    }

    std::string_view src_;
    const std::string& file_;
    std::size_t pos_ = 0;
    int line_ = 1;
    int column_ = 1;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const std::string& file) { return Lexer(source, file).run(); }

}  // namespace qasm
}  // namespace qmarg
