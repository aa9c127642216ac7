// The OpenQASM reader on bad input: every file in tests/qasm_corpus/invalid
// must fail with exactly the message its first line states
// ("// error: line:column: message"), and no input, however mangled, may end
// in anything but a Circuit or a QasmError.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "qmarg/qasm.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using qmarg::parse_qasm;
using qmarg::QasmError;

const std::string kHeader = "OPENQASM 2.0;\ninclude \"qelib1.inc\";\n";

std::vector<fs::path> corpus(const char* kind) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(fs::path(qmarg_test::source_dir()) / "tests" / "qasm_corpus" / kind)) {
        if (entry.path().extension() == ".qasm") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The message of the QasmError that parsing `source` throws ("" if none).
std::string error_of(const std::string& source, const qmarg::QasmLimits& limits = {}) {
    try {
        parse_qasm(source, "t.qasm", limits);
    } catch (const QasmError& e) {
        return e.what();
    }
    return "";
}

TEST(QasmErrors, EveryInvalidProgramFailsWithItsExpectedMessage) {
    const auto files = corpus("invalid");
    EXPECT_GE(files.size(), 70u);
    for (const auto& path : files) {
        SCOPED_TRACE(path.filename().string());
        const std::string text = read_file(path);
        const std::string prefix = "// error: ";
        const std::string header = first_line(text);
        ASSERT_EQ(header.rfind(prefix, 0), 0u) << "the first line must state the expected error";
        const std::string expected = path.string() + ":" + header.substr(prefix.size());
        try {
            qmarg::load_qasm(path.string());
            ADD_FAILURE() << "parsed without error; expected " << expected;
        } catch (const QasmError& e) {
            EXPECT_EQ(std::string(e.what()), expected);
            EXPECT_EQ(e.file(), path.string());
            EXPECT_EQ(path.string() + ":" + std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " +
                          e.detail(),
                      std::string(e.what()));
        }
    }
}

TEST(QasmErrors, EveryValidCorpusProgramParses) {
    for (const auto& path : corpus("valid")) {
        SCOPED_TRACE(path.filename().string());
        const std::string text = read_file(path);
        const std::string prefix = "// operations: ";
        ASSERT_EQ(first_line(text).rfind(prefix, 0), 0u);
        const qmarg::Circuit c = qmarg::load_qasm(path.string());
        EXPECT_EQ(c.operations.size(), std::stoul(first_line(text).substr(prefix.size())));
    }
}

TEST(QasmErrors, ErrorsAreQasmErrorsAndQmargErrors) {
    try {
        parse_qasm("OPENQASM 2.0;\nqreg q[1];\nU(0,0) q[0];\n", "x.qasm");
        FAIL() << "expected a QasmError";
    } catch (const qmarg::Error& e) {
        const auto* qasm = dynamic_cast<const QasmError*>(&e);
        ASSERT_NE(qasm, nullptr);
        EXPECT_EQ(qasm->file(), "x.qasm");
        EXPECT_EQ(qasm->line(), 3);
        EXPECT_EQ(qasm->column(), 1);
        EXPECT_EQ(qasm->detail(), "gate 'U' takes 3 parameters, found 2");
        EXPECT_EQ(std::string(e.what()), "x.qasm:3:1: gate 'U' takes 3 parameters, found 2");
    }
    EXPECT_EQ(error_of("OPENQASM 2.0;\nqreg q[1];\nCX q[0], q[0];\n"),
              "t.qasm:3:1: gate 'CX' is applied to qubit q[0] more than once (its qubit arguments must be distinct)");
}

TEST(QasmErrors, BinaryInputIsRejectedAtTheFirstBadByte) {
    EXPECT_EQ(error_of(std::string("\0\1", 2)), "t.qasm:1:1: unexpected character '\\x00'");
    EXPECT_EQ(error_of("OPENQASM 2.0;\n\xff\xfe"), "t.qasm:2:1: unexpected character '\\xff'");
    EXPECT_EQ(error_of("OPENQASM 2.0;\ninclude \"q\x01\";"),
              "t.qasm:2:9: cannot include \"q\\x01\": only \"qelib1.inc\" (built in) can be included");
}

TEST(QasmErrors, LongNamesAreShortenedInMessages) {
    const std::string name(200, 'g');
    EXPECT_EQ(error_of(kHeader + "qreg q[1];\n" + name + " q[0];\n"),
              "t.qasm:4:1: undefined gate '" + std::string(40, 'g') + "...'");
}

TEST(QasmErrors, ExpressionNestingIsBounded) {
    auto nested = [](int depth) { return std::string(depth, '(') + "1" + std::string(depth, ')'); };
    EXPECT_EQ(error_of(kHeader + "qreg q[1];\nrx(" + nested(100) + ") q[0];\n"), "");
    EXPECT_EQ(error_of(kHeader + "qreg q[1];\nrx(" + nested(100000) + ") q[0];\n"),
              "t.qasm:4:132: expression nested more than 128 levels deep");
    EXPECT_EQ(error_of(kHeader + "qreg q[1];\nrx(" + std::string(100000, '-') + "1) q[0];\n"),
              "t.qasm:4:132: expression nested more than 128 levels deep");
    EXPECT_EQ(error_of(kHeader + "qreg q[1];\nrx(2" + std::string(1000, '^') + ") q[0];\n"),
              "t.qasm:4:6: expected an expression, found '^'");
    // A long chain of constants folds as it is read; one on a parameter is a tree.
    std::string sum = "1";
    for (int i = 0; i < 5000; ++i) sum += "+1";
    EXPECT_EQ(error_of(kHeader + "qreg q[1];\nrx(" + sum + "-5001) q[0];\n"), "");
    std::string chain = "a";
    for (int i = 0; i < 2000; ++i) chain += "+a";
    EXPECT_EQ(error_of(kHeader + "gate g(a) x { rx(" + chain + ") x; }\n"),
              "t.qasm:3:2065: expression has more than 1024 nested operations on parameters");
}

TEST(QasmErrors, GateNestingIsBounded) {
    auto program = [](int levels) {
        std::string text = kHeader + "gate g0 a { x a; }\n";
        for (int i = 1; i < levels; ++i)
            text += "gate g" + std::to_string(i) + " a { g" + std::to_string(i - 1) + " a; }\n";
        return text;
    };
    EXPECT_EQ(error_of(program(256)), "");
    EXPECT_EQ(error_of(program(257)),
              "t.qasm:259:6: gate 'g256' nests gate definitions 257 deep: at most 256 levels are supported");
}

TEST(QasmErrors, ExpansionIsBoundedBeforeItStarts) {
    // Barriers expand to nothing, so steps are bounded as well as operations.
    std::string text = kHeader + "qreg q[1];\ngate b0 a { barrier a; barrier a; }\n";
    for (int i = 1; i <= 60; ++i)
        text += "gate b" + std::to_string(i) + " a { b" + std::to_string(i - 1) + " a; b" + std::to_string(i - 1) +
                " a; }\n";
    qmarg::QasmLimits limits;
    limits.max_operations = 1000;
    EXPECT_EQ(error_of(text + "b60 q[0];\n", limits),
              "t.qasm:65:1: expanding this statement takes more than 16000 steps through gate definitions "
              "(QasmLimits::max_operations x 16)");
    EXPECT_EQ(error_of(kHeader + "qreg q[20];\nh q;\nh q;\n", limits), "");
    limits.max_operations = 30;
    EXPECT_EQ(error_of(kHeader + "qreg q[20];\nh q;\nh q;\n", limits),
              "t.qasm:5:1: this statement takes the circuit past 30 operations (QasmLimits::max_operations)");
}

TEST(QasmErrors, QubitAndBitLimits) {
    qmarg::QasmLimits limits;
    limits.max_qubits = 10;
    limits.max_clbits = 4;
    EXPECT_EQ(error_of(kHeader + "qreg q[10];\n", limits), "");
    EXPECT_EQ(error_of(kHeader + "qreg q[6];\nqreg r[5];\n", limits),
              "t.qasm:4:8: qreg 'r[5]' brings the program to 11 qubits: at most 10 are supported");
    EXPECT_EQ(error_of(kHeader + "creg c[5];\n", limits),
              "t.qasm:3:8: creg size '5' is too large: at most 4 bits in all registers together");
}

// Every prefix of every valid program: a Circuit or a QasmError, nothing else.
TEST(QasmErrors, TruncatedProgramsNeverFailOtherwise) {
    for (const auto& path : corpus("valid")) {
        const std::string text = read_file(path);
        for (std::size_t cut = 0; cut <= text.size(); ++cut) {
            try {
                parse_qasm(std::string_view(text).substr(0, cut));
            } catch (const QasmError&) {
            } catch (const std::exception& e) {
                ADD_FAILURE() << path.filename() << " cut at " << cut << ": " << e.what();
            }
        }
    }
}

// Random token soup from the language's own vocabulary.
TEST(QasmErrors, RandomTokenSequencesNeverFailOtherwise) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    SCOPED_TRACE(qmarg_test::seed_trace(seed));
    std::mt19937_64 rng(seed);
    const std::vector<std::string> vocabulary = {
        "OPENQASM", "2.0", "include", "\"qelib1.inc\"", "qreg", "creg", "gate", "measure", "barrier", "U",
        "CX",       "h",   "cx",      "rx",             "ccx",  "u3",   "q",    "c",       "g",       "a",
        "b",        "pi",  "sin",     "ln",             "sqrt", "0",    "1",    "2",       "1e3",     ".5",
        "(",        ")",   "[",       "]",              "{",    "}",    ";",    ",",       "->",      "+",
        "-",        "*",   "/",       "^",              "\n",   "//",   "reset"};
    const std::string prefix = kHeader + "qreg q[3];\ncreg c[3];\n";
    for (int program = 0; program < 3000; ++program) {
        std::string text = prefix;
        const int length = 1 + static_cast<int>(rng() % 30);
        for (int i = 0; i < length; ++i) text += vocabulary[rng() % vocabulary.size()] + " ";
        try {
            parse_qasm(text);
        } catch (const QasmError& e) {
            EXPECT_GE(e.line(), 1);
            EXPECT_GE(e.column(), 1);
        } catch (const std::exception& e) {
            ADD_FAILURE() << "program:\n" << text << "\nthrew " << e.what();
        }
    }
}

}  // namespace
