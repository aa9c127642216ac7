// Token quoting for messages.
#include <cstdio>

#include "qasm/token.hpp"

namespace qmarg {
namespace qasm {

std::string quote(std::string_view text, char quote_char) {
    constexpr std::size_t kMaxShown = 40;
    std::string out(1, quote_char);
    for (std::size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    if (text.size() > kMaxShown) out += "...";
    out += quote_char;
    return out;
}

std::string describe(const Token& token) {
    switch (token.kind) {
        case TokenKind::End: return "end of file";
        case TokenKind::String: return "string " + quote(token.text, '"');
        default: return quote(token.text);
    }
}

}  // namespace qasm
}  // namespace qmarg
