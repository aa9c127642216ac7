// The public entry points of the OpenQASM reader and its error type.
#include "qmarg/qasm.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "qasm/lexer.hpp"
#include "qasm/parser.hpp"

namespace qmarg {

QasmError::QasmError(std::string file, int line, int column, const std::string& message)
    : Error(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message),
      file_(std::move(file)),
      line_(line),
      column_(column),
      detail_(message) {}

Circuit parse_qasm(std::string_view source, std::string filename, const QasmLimits& limits) {
    qasm::TokenStream stream(qasm::tokenize(source, filename), filename);
    qasm::Parser parser(stream, limits);
    return parser.parse_program();
}

Circuit load_qasm(const std::string& path, const QasmLimits& limits) {
    std::error_code ignored;
    if (std::filesystem::is_directory(path, ignored)) {
        throw Error("cannot read OpenQASM file '" + path + "': it is a directory");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot open OpenQASM file '" + path + "'");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw Error("cannot read OpenQASM file '" + path + "'");
    return parse_qasm(text.str(), path, limits);
}

}  // namespace qmarg
