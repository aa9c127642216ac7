// Splits OpenQASM 2.0 source into tokens (comments and whitespace dropped).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "qasm/token.hpp"

namespace qmarg {
namespace qasm {

// The tokens of `source`, ending with one TokenKind::End. Throws QasmError
// (naming `file`) at the first character that starts no token.
std::vector<Token> tokenize(std::string_view source, const std::string& file);

}  // namespace qasm
}  // namespace qmarg
