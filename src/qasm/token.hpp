// The tokens of OpenQASM 2.0 and how messages quote them.
//
// A token's text is a view into the source, which outlives the parse; every
// token knows its 1-based line and column so that any later check can point at
// it.
#pragma once

#include <string>
#include <string_view>

namespace qmarg {
namespace qasm {

enum class TokenKind {
    Identifier,  // also keywords (OPENQASM, qreg, U, pi, ...): the parser tells them apart by text
    Integer,     // 0, 17
    Real,        // 2.0, .5, 1e-3
    String,      // "qelib1.inc" (text without the quotes)
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Semicolon,
    Comma,
    Arrow,   // ->
    Equals,  // ==
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    End,
};

struct Token {
    TokenKind kind = TokenKind::End;
    std::string_view text;
    int line = 1;
    int column = 1;
};

// How a message names a token: 'qreg', '2.5', ';', "qelib1.inc" or "end of file".
std::string describe(const Token& token);

// Quotes arbitrary source text for a message: printable ASCII as is, other
// bytes as \xNN, long text shortened.
std::string quote(std::string_view text, char quote_char = '\'');

}  // namespace qasm
}  // namespace qmarg
