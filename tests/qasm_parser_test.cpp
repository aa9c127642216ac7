// The OpenQASM 2.0 reader on valid programs: each construct, the operations it
// produces (matrix, targets, controls, source location), and every gate of
// qelib1.inc against its definition in terms of U and CX.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "circuit_reference.hpp"
#include "qasm/qelib1.hpp"
#include "qmarg/gates.hpp"
#include "qmarg/qasm.hpp"

namespace {

using qmarg::Circuit;
using qmarg::parse_qasm;
using C = std::complex<double>;

const double kPi = 3.14159265358979323846;
const std::string kHeader = "OPENQASM 2.0;\ninclude \"qelib1.inc\";\n";

void expect_matrix_near(const qmarg::Matrix& actual, const std::vector<C>& expected, double tol = 1e-14) {
    ASSERT_EQ(static_cast<std::size_t>(actual.dim() * actual.dim()), expected.size());
    for (int r = 0; r < actual.dim(); ++r)
        for (int c = 0; c < actual.dim(); ++c)
            EXPECT_LT(std::abs(actual(r, c) - expected[r * actual.dim() + c]), tol) << "entry (" << r << ", " << c << ")";
}

TEST(QasmParser, HeaderRegistersAndNames) {
    const Circuit c = parse_qasm("OPENQASM 2.0;\nqreg a[2];\ncreg m[3];\nqreg b[3];\ncreg n[1];\n", "regs.qasm");
    EXPECT_EQ(c.source_name, "regs.qasm");
    EXPECT_EQ(c.num_qubits, 5);
    EXPECT_EQ(c.num_clbits, 4);
    ASSERT_EQ(c.quantum_registers.size(), 2u);
    EXPECT_EQ(c.quantum_registers[1].name, "b");
    EXPECT_EQ(c.quantum_registers[1].offset, 2);
    EXPECT_EQ(c.quantum_registers[1].size, 3);
    EXPECT_EQ(c.qubit_name(0), "a[0]");
    EXPECT_EQ(c.qubit_name(4), "b[2]");
    EXPECT_EQ(c.clbit_name(3), "n[0]");
    EXPECT_TRUE(c.operations.empty());
    EXPECT_TRUE(c.measurements.empty());
}

TEST(QasmParser, CommentsWhitespaceAndLineEndings) {
    const Circuit c = parse_qasm(
        "// a comment before the header\r\nOPENQASM 2.0; // trailing\r\n\tqreg q[1];\r\n  U(0,0,0) q[0]; //done");
    ASSERT_EQ(c.operations.size(), 1u);
    EXPECT_EQ(c.operations[0].location.line, 4);
    EXPECT_EQ(c.operations[0].location.column, 3);
}

TEST(QasmParser, PrimitivesUAndCX) {
    const Circuit c = parse_qasm("OPENQASM 2.0;\nqreg q[2];\nU(0.3, -1.1, 2.7) q[1];\nCX q[1], q[0];\n");
    ASSERT_EQ(c.operations.size(), 2u);
    const double t = 0.3, p = -1.1, l = 2.7;
    const auto& u = c.operations[0];
    EXPECT_EQ(u.name, "U");
    EXPECT_EQ(u.targets, qmarg::Qubits{1});
    EXPECT_TRUE(u.controls.empty());
    // Qiskit's U: no global phase factor.
    expect_matrix_near(u.matrix, {std::cos(t / 2), -std::polar(1.0, l) * std::sin(t / 2),
                                  std::polar(1.0, p) * std::sin(t / 2), std::polar(1.0, p + l) * std::cos(t / 2)});
    const auto& cx = c.operations[1];
    EXPECT_EQ(cx.name, "CX");
    EXPECT_EQ(cx.targets, qmarg::Qubits{0});
    EXPECT_EQ(cx.controls, qmarg::Qubits{1});
    expect_matrix_near(cx.matrix, {0, 1, 1, 0});
    EXPECT_EQ(cx.location.line, 4);
}

// The value of `expr` read back from U(0,0,expr) = diag(1, e^{i expr}).
double phase_of(const std::string& expr) {
    const Circuit c = parse_qasm("OPENQASM 2.0;\nqreg q[1];\nU(0,0," + expr + ") q[0];\n");
    return std::arg(c.operations.at(0).matrix(1, 1));
}

TEST(QasmParser, ParameterExpressions) {
    const std::vector<std::pair<std::string, double>> cases = {
        {"pi", kPi},
        {"-pi/2", -kPi / 2},
        {"2*pi/3", 2 * kPi / 3},
        {"1.5e-3", 1.5e-3},
        {"15E-1", 1.5},
        {".5", 0.5},
        {"2.", 2.0},
        {"1+2*3/4", 2.5},
        {"(1+2)*3/4", 2.25},
        {"3-1-1", 1.0},
        {"8/2/2", 2.0},
        {"2^3^0", 2.0},
        {"2^-1", 0.5},
        {"-2^2/4", -1.0},
        {"(-1.5)^2", 2.25},
        {"--1", 1.0},
        {"+1", 1.0},
        {"2*-1", -2.0},
        {"sin(pi/6)", 0.5},
        {"cos(pi)", -1.0},
        {"tan(pi/4)", 1.0},
        {"exp(1)-2", std::exp(1.0) - 2},
        {"ln(exp(2))", 2.0},
        {"sqrt(2)", std::sqrt(2.0)},
        {"sqrt(sin(pi/2) + 0*cos(3))", 1.0},
        {"((((1))))", 1.0},
    };
    for (const auto& [expr, expected] : cases) {
        EXPECT_NEAR(std::remainder(phase_of(expr) - expected, 2 * kPi), 0.0, 1e-13) << expr;
    }
}

TEST(QasmParser, UserGatesWithParametersExpandInPlace) {
    const Circuit c = parse_qasm(kHeader +
                                 "qreg q[3];\n"
                                 "gate inner(a) x { U(a, 0, 0) x; }\n"
                                 "gate outer(a, b) x, y {\n"
                                 "  inner(a*b) y;\n"
                                 "  barrier x, y;\n"
                                 "  cx y, x;\n"
                                 "  inner(a/b) x;\n"
                                 "}\n"
                                 "gate none() x { h x; }\n"
                                 "gate plain x { none() x; }\n"
                                 "outer(2, 4) q[2], q[0];\n"
                                 "plain q[1];\n");
    ASSERT_EQ(c.operations.size(), 4u);
    EXPECT_EQ(c.operations[0].name, "U");
    EXPECT_EQ(c.operations[0].targets, qmarg::Qubits{0});
    EXPECT_NEAR(c.operations[0].matrix(0, 0).real(), std::cos(8.0 / 2), 1e-15);
    EXPECT_EQ(c.operations[1].name, "cx");
    EXPECT_EQ(c.operations[1].targets, qmarg::Qubits{2});
    EXPECT_EQ(c.operations[1].controls, qmarg::Qubits{0});
    EXPECT_EQ(c.operations[2].targets, qmarg::Qubits{2});
    EXPECT_NEAR(c.operations[2].matrix(0, 0).real(), std::cos(0.5 / 2), 1e-15);
    EXPECT_EQ(c.operations[3].name, "h");
    EXPECT_EQ(c.operations[3].targets, qmarg::Qubits{1});
    // Operations inside a definition carry the location of the statement that used it.
    EXPECT_EQ(c.operations[0].location.line, 13);
    EXPECT_EQ(c.operations[3].location.line, 14);
}

TEST(QasmParser, Broadcasting) {
    const Circuit c = parse_qasm(kHeader + "qreg a[3];\nqreg b[3];\nh a;\ncx a, b;\ncx a[1], b;\nrzz(0.5) b, a[0];\n");
    ASSERT_EQ(c.operations.size(), 12u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(c.operations[i].targets, qmarg::Qubits{i});
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(c.operations[3 + i].controls, qmarg::Qubits{i});
        EXPECT_EQ(c.operations[3 + i].targets, qmarg::Qubits{3 + i});
        EXPECT_EQ(c.operations[6 + i].controls, qmarg::Qubits{1});
        EXPECT_EQ(c.operations[6 + i].targets, qmarg::Qubits{3 + i});
        EXPECT_EQ(c.operations[9 + i].targets, (qmarg::Qubits{3 + i, 0}));
    }
}

TEST(QasmParser, BarrierIsIgnoredAndIdentityGatesNeedNoOperation) {
    const Circuit c = parse_qasm(kHeader + "qreg q[2];\nbarrier q;\nbarrier q[0], q[1];\nid q[0];\nu0(1.5) q;\n");
    EXPECT_TRUE(c.operations.empty());
}

TEST(QasmParser, MeasurementsAreOrderedByClassicalBit) {
    const Circuit c = parse_qasm(kHeader +
                                 "qreg q[4];\ncreg lo[2];\ncreg hi[2];\nh q[0];\n"
                                 "measure q[0] -> hi[1];\nmeasure q[3] -> lo[0];\nmeasure q[1] -> hi[0];\n"
                                 "x q[2];\n");
    ASSERT_EQ(c.measurements.size(), 3u);
    EXPECT_EQ(c.measured_qubits(), (qmarg::Qubits{3, 1, 0}));
    EXPECT_EQ(c.measurements[0].bit, 0);
    EXPECT_EQ(c.measurements[1].bit, 2);
    EXPECT_EQ(c.measurements[2].bit, 3);
    EXPECT_EQ(c.measurements[2].location.line, 7);
    // A gate after measurements, on a qubit that was not measured, is fine.
    EXPECT_EQ(c.operations.back().name, "x");
}

TEST(QasmParser, MeasureWholeRegisters) {
    const Circuit c = parse_qasm(kHeader + "qreg q[3];\ncreg c[3];\nmeasure q -> c;\n");
    EXPECT_EQ(c.measured_qubits(), (qmarg::Qubits{0, 1, 2}));
}

TEST(QasmParser, LoadQasmReadsFilesAndNamesThemInErrors) {
    const std::string path = ::testing::TempDir() + "qmarg_parser_test.qasm";
    {
        std::ofstream out(path);
        out << kHeader << "qreg q[2];\nh q[0];\ncx q[0], q[1];\n";
    }
    const Circuit c = qmarg::load_qasm(path);
    EXPECT_EQ(c.source_name, path);
    EXPECT_EQ(c.operations.size(), 2u);
    {
        std::ofstream out(path);
        out << kHeader << "qreg q[2];\nh q[2];\n";
    }
    try {
        qmarg::load_qasm(path);
        FAIL() << "expected a QasmError";
    } catch (const qmarg::QasmError& e) {
        EXPECT_EQ(e.file(), path);
        EXPECT_EQ(e.line(), 4);
        EXPECT_EQ(e.column(), 5);
        EXPECT_EQ(std::string(e.what()), path + ":4:5: " + e.detail());
    }
    std::remove(path.c_str());
    EXPECT_THROW(qmarg::load_qasm(path), qmarg::Error);
}

TEST(QasmParser, OperationLimitStopsExponentialDefinitions) {
    std::string program = kHeader + "qreg q[1];\ngate g0 a { h a; h a; }\n";
    for (int i = 1; i <= 40; ++i) {
        program += "gate g" + std::to_string(i) + " a { g" + std::to_string(i - 1) + " a; g" +
                   std::to_string(i - 1) + " a; }\n";
    }
    qmarg::QasmLimits limits;
    limits.max_operations = 1000;
    EXPECT_NO_THROW(parse_qasm(program + "g8 q[0];\n", "<input>", limits));  // 2^9 operations
    try {
        parse_qasm(program + "g40 q[0];\n", "<input>", limits);
        FAIL() << "expected a QasmError";
    } catch (const qmarg::QasmError& e) {
        EXPECT_EQ(e.line(), 45);
        EXPECT_NE(e.detail().find("past 1000 operations"), std::string::npos) << e.what();
    }
}

// ---------------------------------------------------------------------------
// qelib1.inc: each built-in gate against its definition. The definitions below
// are those of qelib1.inc (the OpenQASM 2.0 standard library as Qiskit ships
// it), written in terms of U, CX and each other; only c4x has a different body
// (see kQelib1C4xBodyAsWritten). A program that does not include qelib1.inc may
// define gates with these names, so the same call is read once with the
// definitions and once with the built-in gates.
const char* const kQelib1Definitions = R"(
gate u3(theta,phi,lambda) q { U(theta,phi,lambda) q; }
gate u2(phi,lambda) q { U(pi/2,phi,lambda) q; }
gate u1(lambda) q { U(0,0,lambda) q; }
gate cx c,t { CX c,t; }
gate id a { U(0,0,0) a; }
gate u0(gamma) q { U(0,0,0) q; }
gate u(theta,phi,lambda) q { U(theta,phi,lambda) q; }
gate p(lambda) q { U(0,0,lambda) q; }
gate x a { u3(pi,0,pi) a; }
gate y a { u3(pi,pi/2,pi/2) a; }
gate z a { u1(pi) a; }
gate h a { u2(0,pi) a; }
gate s a { u1(pi/2) a; }
gate sdg a { u1(-pi/2) a; }
gate t a { u1(pi/4) a; }
gate tdg a { u1(-pi/4) a; }
gate rx(theta) a { u3(theta,-pi/2,pi/2) a; }
gate ry(theta) a { u3(theta,0,0) a; }
gate rz(phi) a { u1(phi) a; }
gate sx a { sdg a; h a; sdg a; }
gate sxdg a { s a; h a; s a; }
gate cz a,b { h b; cx a,b; h b; }
gate cy a,b { sdg b; cx a,b; s b; }
gate swap a,b { cx a,b; cx b,a; cx a,b; }
gate ch a,b { h b; sdg b; cx a,b; h b; t b; cx a,b; t b; h b; s b; x b; s a; }
gate ccx a,b,c { h c; cx b,c; tdg c; cx a,c; t c; cx b,c; tdg c; cx a,c; t b; t c; h c; cx a,b; t a; tdg b; cx a,b; }
gate cswap a,b,c { cx c,b; ccx a,b,c; cx c,b; }
gate crx(lambda) a,b { u1(pi/2) b; cx a,b; u3(-lambda/2,0,0) b; cx a,b; u3(lambda/2,-pi/2,0) b; }
gate cry(lambda) a,b { u3(lambda/2,0,0) b; cx a,b; u3(-lambda/2,0,0) b; cx a,b; }
gate crz(lambda) a,b { u1(lambda/2) b; cx a,b; u1(-lambda/2) b; cx a,b; }
gate cu1(lambda) a,b { u1(lambda/2) a; cx a,b; u1(-lambda/2) b; cx a,b; u1(lambda/2) b; }
gate cp(lambda) a,b { p(lambda/2) a; cx a,b; p(-lambda/2) b; cx a,b; p(lambda/2) b; }
gate cu3(theta,phi,lambda) c,t {
  u1((lambda+phi)/2) c; u1((lambda-phi)/2) t; cx c,t; u3(-theta/2,0,-(phi+lambda)/2) t; cx c,t; u3(theta/2,phi,0) t;
}
gate csx a,b { h b; cu1(pi/2) a,b; h b; }
gate cu(theta,phi,lambda,gamma) c,t {
  p(gamma) c; p((lambda+phi)/2) c; p((lambda-phi)/2) t; cx c,t; u(-theta/2,0,-(phi+lambda)/2) t; cx c,t;
  u(theta/2,phi,0) t;
}
gate rxx(theta) a,b { u3(pi/2,theta,0) a; h b; cx a,b; u1(-theta) b; cx a,b; h b; u2(-pi,pi-theta) a; }
gate rzz(theta) a,b { cx a,b; u1(theta) b; cx a,b; }
gate rccx a,b,c { u2(0,pi) c; u1(pi/4) c; cx b,c; u1(-pi/4) c; cx a,c; u1(pi/4) c; cx b,c; u1(-pi/4) c; u2(0,pi) c; }
gate rc3x a,b,c,d {
  u2(0,pi) d; u1(pi/4) d; cx c,d; u1(-pi/4) d; u2(0,pi) d; cx a,d; u1(pi/4) d; cx b,d; u1(-pi/4) d; cx a,d;
  u1(pi/4) d; cx b,d; u1(-pi/4) d; u2(0,pi) d; u1(pi/4) d; cx c,d; u1(-pi/4) d; u2(0,pi) d;
}
gate c3x a,b,c,d {
  h d; cu1(-pi/4) a,d; h d; cx a,b; h d; cu1(pi/4) b,d; h d; cx a,b; h d; cu1(-pi/4) b,d; h d; cx b,c;
  h d; cu1(pi/4) c,d; h d; cx a,c; h d; cu1(-pi/4) c,d; h d; cx b,c; h d; cu1(pi/4) c,d; h d; cx a,c;
  h d; cu1(-pi/4) c,d; h d;
}
gate c3sqrtx a,b,c,d {
  h d; cu1(-pi/8) a,d; h d; cx a,b; h d; cu1(pi/8) b,d; h d; cx a,b; h d; cu1(-pi/8) b,d; h d; cx b,c;
  h d; cu1(pi/8) c,d; h d; cx a,c; h d; cu1(-pi/8) c,d; h d; cx b,c; h d; cu1(pi/8) c,d; h d; cx a,c;
  h d; cu1(-pi/8) c,d; h d;
}
gate rc3x_inverse a,b,c,d {
  u2(0,pi) d; u1(pi/4) d; cx c,d; u1(-pi/4) d; u2(0,pi) d; u1(pi/4) d; cx b,d; u1(-pi/4) d; cx a,d; u1(pi/4) d;
  cx b,d; u1(-pi/4) d; cx a,d; u2(0,pi) d; u1(pi/4) d; cx c,d; u1(-pi/4) d; u2(0,pi) d;
}
gate c3sqrtx_inverse a,b,c,d {
  h d; cu1(pi/8) a,d; h d; cx a,b; h d; cu1(-pi/8) b,d; h d; cx a,b; h d; cu1(pi/8) b,d; h d; cx b,c;
  h d; cu1(-pi/8) c,d; h d; cx a,c; h d; cu1(pi/8) c,d; h d; cx b,c; h d; cu1(-pi/8) c,d; h d; cx a,c;
  h d; cu1(pi/8) c,d; h d;
}
gate c4x a,b,c,d,e {
  h e; cu1(pi/2) d,e; h e; rc3x a,b,c,d; h e; cu1(-pi/2) d,e; h e; rc3x_inverse a,b,c,d; c3sqrtx_inverse a,b,c,e;
}
)";

// The body qelib1.inc gives c4x. It is not a 4-controlled X (a known defect of
// the file); c4x is read as the 4-controlled X that its name and comment state
// and that Qiskit builds for it, checked above against a correct decomposition.
const char* const kQelib1C4xBodyAsWritten = R"(
gate c4x_as_written a,b,c,d,e {
  h e; cu1(-pi/2) d,e; h e; c3x a,b,c,d; h d; cu1(pi/4) d,e; h d; c3x a,b,c,d; c3sqrtx a,b,c,e;
}
)";

struct StandardGateCase {
    const char* name;
    int params;
    int qubits;
    // The definition's unitary is this phase times the built-in gate's: 1 for
    // most gates; where Qiskit's gate class and qelib1.inc's definition differ
    // by a global phase, that phase (documented in src/qasm/qelib1.hpp).
    std::function<C(const std::vector<double>&)> definition_phase;
};

C one(const std::vector<double>&) { return 1.0; }

const std::vector<StandardGateCase>& standard_gate_cases() {
    static const std::vector<StandardGateCase> cases = {
        {"u3", 3, 1, one},
        {"u2", 2, 1, one},
        {"u1", 1, 1, one},
        {"cx", 0, 2, one},
        {"id", 0, 1, one},
        {"u0", 1, 1, one},
        {"u", 3, 1, one},
        {"p", 1, 1, one},
        {"x", 0, 1, one},
        {"y", 0, 1, one},
        {"z", 0, 1, one},
        {"h", 0, 1, one},
        {"s", 0, 1, one},
        {"sdg", 0, 1, one},
        {"t", 0, 1, one},
        {"tdg", 0, 1, one},
        {"rx", 1, 1, one},
        {"ry", 1, 1, one},
        {"rz", 1, 1, [](const std::vector<double>& a) { return std::polar(1.0, a[0] / 2); }},
        {"sx", 0, 1, [](const std::vector<double>&) { return std::polar(1.0, -kPi / 4); }},
        {"sxdg", 0, 1, [](const std::vector<double>&) { return std::polar(1.0, kPi / 4); }},
        {"cz", 0, 2, one},
        {"cy", 0, 2, one},
        {"swap", 0, 2, one},
        {"ch", 0, 2, [](const std::vector<double>&) { return std::polar(1.0, kPi / 4); }},
        {"ccx", 0, 3, one},
        {"cswap", 0, 3, one},
        {"crx", 1, 2, one},
        {"cry", 1, 2, one},
        {"crz", 1, 2, one},
        {"cu1", 1, 2, one},
        {"cp", 1, 2, one},
        {"cu3", 3, 2, one},
        {"csx", 0, 2, one},
        {"cu", 4, 2, one},
        {"rxx", 1, 2, [](const std::vector<double>& a) { return std::polar(1.0, -a[0] / 2); }},
        {"rzz", 1, 2, [](const std::vector<double>& a) { return std::polar(1.0, a[0] / 2); }},
        {"rccx", 0, 3, one},
        {"rc3x", 0, 4, one},
        {"c3x", 0, 4, one},
        {"c3sqrtx", 0, 4, one},
        {"c4x", 0, 5, one},
    };
    return cases;
}

TEST(QasmParser, EveryQelib1GateIsChecked) {
    std::vector<std::string> built_in, checked;
    for (const auto& g : qmarg::qasm::qelib1_gates()) built_in.push_back(g.name);
    for (const auto& g : standard_gate_cases()) checked.push_back(g.name);
    EXPECT_EQ(built_in, checked);
    EXPECT_EQ(checked.size(), 42u);
}

TEST(QasmParser, Qelib1GatesEqualTheirDefinitions) {
    const std::vector<std::vector<double>> parameter_sets = {{0.3, -1.1, 2.7, 0.9}, {2.9, 0.4, -0.8, -2.2}};
    for (const auto& gate : standard_gate_cases()) {
        for (const auto& values : parameter_sets) {
            // One idle qubit beside the gate's, and the gate's qubits in reverse
            // order, so that argument order and untouched qubits are checked too.
            const int n = gate.qubits + 1;
            std::string call = gate.name;
            std::vector<double> params(values.begin(), values.begin() + gate.params);
            if (gate.params > 0) {
                call += "(";
                for (int i = 0; i < gate.params; ++i) call += (i ? "," : "") + std::to_string(params[i]);
                call += ")";
            }
            for (int i = 0; i < gate.qubits; ++i) call += std::string(i ? ", " : " ") + "q[" + std::to_string(n - 1 - i) + "]";
            call += ";\n";
            const std::string regs = "qreg q[" + std::to_string(n) + "];\n";
            const Circuit defined = parse_qasm(std::string("OPENQASM 2.0;\n") + kQelib1Definitions + regs + call);
            const Circuit builtin = parse_qasm(kHeader + regs + call);
            SCOPED_TRACE(call);
            if (std::string(gate.name) != "id" && std::string(gate.name) != "u0") {
                ASSERT_EQ(builtin.operations.size(), 1u) << "a built-in gate is one operation";
            }
            const auto d = qmarg_test::dense_unitary(defined);
            const auto b = qmarg_test::dense_unitary(builtin);
            // Recompute the parameters as the program text carries them.
            std::vector<double> written;
            for (double v : params) written.push_back(std::stod(std::to_string(v)));
            const C phase = gate.definition_phase(written);
            double worst = 0;
            for (std::size_t col = 0; col < d.size(); ++col)
                for (std::size_t row = 0; row < d.size(); ++row)
                    worst = std::max(worst, std::abs(d[col][row] - phase * b[col][row]));
            EXPECT_LT(worst, 1e-12);
        }
    }
}

TEST(QasmParser, Qelib1C4xBodyIsNotAFourControlledX) {
    const std::string call = "qreg q[5];\nc4x_as_written q[0], q[1], q[2], q[3], q[4];\n";
    const Circuit written = parse_qasm(kHeader + kQelib1C4xBodyAsWritten + call);
    const Circuit builtin = parse_qasm(kHeader + "qreg q[5];\nc4x q[0], q[1], q[2], q[3], q[4];\n");
    const auto w = qmarg_test::dense_unitary(written);
    const auto b = qmarg_test::dense_unitary(builtin);
    // Basis state |01000> (only q[3] set) is left alone by a 4-controlled X but
    // not by the written body.
    EXPECT_LT(std::abs(b[8][8] - 1.0), 1e-12);
    EXPECT_GT(std::abs(w[8][8] - 1.0), 0.1);
}

// The same gate through qelib1.inc and through qmarg's named gate matrices.
TEST(QasmParser, Qelib1AgreesWithTheNamedGateMatrices) {
    const double a = 0.37, b = -1.3, l = 2.1;
    const std::vector<std::pair<std::string, qmarg::Matrix>> cases = {
        {"h", qmarg::gates::h()},          {"x", qmarg::gates::x()},
        {"y", qmarg::gates::y()},          {"z", qmarg::gates::z()},
        {"s", qmarg::gates::s()},          {"sdg", qmarg::gates::sdg()},
        {"t", qmarg::gates::t()},          {"tdg", qmarg::gates::tdg()},
        {"sx", qmarg::gates::sx()},        {"rx(0.37)", qmarg::gates::rx(a)},
        {"ry(0.37)", qmarg::gates::ry(a)}, {"rz(0.37)", qmarg::gates::rz(a)},
        {"p(0.37)", qmarg::gates::phase(a)}, {"u3(0.37, -1.3, 2.1)", qmarg::gates::u3(a, b, l)},
        {"U(0.37, -1.3, 2.1)", qmarg::gates::u3(a, b, l)},
    };
    for (const auto& [call, matrix] : cases) {
        SCOPED_TRACE(call);
        const Circuit c = parse_qasm(kHeader + "qreg q[1];\n" + call + " q[0];\n");
        ASSERT_EQ(c.operations.size(), 1u);
        expect_matrix_near(c.operations[0].matrix, std::vector<C>(matrix.data(), matrix.data() + 4));
    }
    const Circuit c = parse_qasm(kHeader + "qreg q[2];\nswap q[0], q[1];\n");
    const qmarg::Matrix swap = qmarg::gates::swap();
    expect_matrix_near(c.operations[0].matrix, std::vector<C>(swap.data(), swap.data() + 16));
}

TEST(QasmParser, ControlledGatesKeepControlsApart) {
    const Circuit c = parse_qasm(kHeader + "qreg q[5];\nccx q[3], q[1], q[4];\ncswap q[0], q[2], q[1];\n"
                                           "c4x q[4], q[3], q[2], q[1], q[0];\ncu1(0.5) q[2], q[0];\n");
    ASSERT_EQ(c.operations.size(), 4u);
    EXPECT_EQ(c.operations[0].targets, qmarg::Qubits{4});
    EXPECT_EQ(c.operations[0].controls, (qmarg::Qubits{3, 1}));
    EXPECT_EQ(c.operations[1].targets, (qmarg::Qubits{2, 1}));
    EXPECT_EQ(c.operations[1].controls, qmarg::Qubits{0});
    EXPECT_EQ(c.operations[2].targets, qmarg::Qubits{0});
    EXPECT_EQ(c.operations[2].controls, (qmarg::Qubits{4, 3, 2, 1}));
    EXPECT_EQ(c.operations[2].matrix.dim(), 2);
    EXPECT_EQ(c.operations[3].controls, qmarg::Qubits{2});
}

}  // namespace
