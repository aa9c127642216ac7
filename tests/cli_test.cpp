// The qmarg tool, run as a program: its output formats, sampling, reported
// qubits, devices, and one-line errors with non-zero exit codes.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "qmarg/device.hpp"
#include "cli_support.hpp"
#include "test_support.hpp"

namespace {

#if defined(QMARG_CLI_PATH)

using Result = qmarg_test::CliResult;
using qmarg_test::slurp;

std::string example(const std::string& name) { return qmarg_test::source_dir() + "/examples/" + name; }

// Runs `qmarg <args>` through the shell; `input` (if any) is its stdin.
Result qmarg_cli(const std::string& args, const std::string& input = "") {
    return qmarg_test::run_qmarg_cli(QMARG_CLI_PATH, args, "qmarg_cli_test", input);
}

std::string write_program(const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path) << text;
    return path;
}

// The JSON a run printed; a failed run is a test failure and gives null.
nlohmann::json json_of(const Result& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// A table row "OUTCOME  PROBABILITY" (outcomes padded to 7 characters and two spaces).
void expect_row(const std::string& row, const std::string& outcome, double probability) {
    ASSERT_GE(row.size(), 10u) << row;
    EXPECT_EQ(row.substr(0, 9), (outcome + std::string(9 - outcome.size(), ' '))) << row;
    EXPECT_NEAR(std::stod(row.substr(9)), probability, 1e-9) << row;  // the table prints 10 digits
}

TEST(Cli, TablePrintsTheMeasuredMarginalMostLikelyFirst) {
    const Result r = qmarg_cli("run " + example("grover.qasm") + " --device cpu");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::string> lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 10u) << r.out;
    EXPECT_EQ(lines[0], "# bits, left to right: c[2]=q[2] c[1]=q[1] c[0]=q[0]");
    EXPECT_EQ(lines[1], "outcome  probability");
    expect_row(lines[2], "101", 121.0 / 128);
    for (std::size_t j = 3; j < lines.size(); ++j) {
        EXPECT_NEAR(std::stod(lines[j].substr(9)), 1.0 / 128, 1e-9) << lines[j];
    }
    EXPECT_NE(r.err.find("running on the CPU in double precision"), std::string::npos) << r.err;
}

TEST(Cli, GhzTableLeavesOutImpossibleOutcomes) {
    const Result r = qmarg_cli("run " + example("ghz.qasm") + " --device cpu");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out,
              "# bits, left to right: c[4]=q[4] c[3]=q[3] c[2]=q[2] c[1]=q[1] c[0]=q[0]\n"
              "outcome  probability\n"
              "00000    0.5\n"
              "11111    0.5\n");
    EXPECT_NE(r.err.find("30 outcomes not shown"), std::string::npos) << r.err;
}

TEST(Cli, JsonCarriesTheQubitOrderAndEveryOutcome) {
    const Result r = qmarg_cli("run " + example("bernstein_vazirani.qasm") + " --device cpu --format json --threshold 0");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["num_qubits"], 7);
    EXPECT_EQ(j["device"], "CPU");
    EXPECT_EQ(j["precision"], "double");
    EXPECT_EQ(j["qubits"], nlohmann::json({0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(j["clbit_names"][5], "c[5]");
    ASSERT_EQ(j["probabilities"].size(), 64u);
    EXPECT_EQ(j["probabilities"][0]["outcome"], "101101");
    EXPECT_NEAR(j["probabilities"][0]["probability"].get<double>(), 1.0, 1e-12);
    EXPECT_EQ(j["omitted_outcomes"], 0);
}

TEST(Cli, CsvWithChosenQubitsAndPrecision) {
    // QFT of |5>: uniform over any qubits; the first listed qubit is the rightmost bit.
    const Result r = qmarg_cli("run " + example("qft.qasm") + " --device cpu --format csv --precision float --qubits 3,q[0] -q");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    std::istringstream lines(r.out);
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line, "outcome,probability");
    for (const char* outcome : {"00", "01", "10", "11"}) {
        ASSERT_TRUE(std::getline(lines, line));
        EXPECT_NEAR(std::stod(line.substr(3)), 0.25, 1e-6) << line;
        (void)outcome;
    }
    EXPECT_FALSE(std::getline(lines, line));
    // Qubit order matters when the marginal is not symmetric.
    const Result bv = qmarg_cli("run " + example("bernstein_vazirani.qasm") + " --device cpu --format csv --qubits 1,0,5 -q");
    EXPECT_EQ(bv.out.substr(0, 24), "outcome,probability\n110,");
}

TEST(Cli, TopAndThreshold) {
    const Result top = qmarg_cli("run " + example("grover.qasm") + " --device cpu --format csv --top 2 -q");
    ASSERT_EQ(top.exit_code, 0) << top.err;
    EXPECT_EQ(std::count(top.out.begin(), top.out.end(), '\n'), 3);
    EXPECT_EQ(top.out.substr(0, 24), "outcome,probability\n101,");
    const Result threshold = qmarg_cli("run " + example("grover.qasm") + " --device cpu --format csv --threshold 0.5");
    EXPECT_EQ(std::count(threshold.out.begin(), threshold.out.end(), '\n'), 2);
    EXPECT_NE(threshold.err.find("7 outcomes not shown"), std::string::npos) << threshold.err;
}

TEST(Cli, ShotsWithASeedAreReproducible) {
    const std::string args = "run " + example("grover.qasm") + " --device cpu --format json --shots 5000 --seed 11";
    const Result a = qmarg_cli(args);
    const Result b = qmarg_cli(args);
    const Result c = qmarg_cli("run " + example("grover.qasm") + " --device cpu --format json --shots 5000 --seed 12");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(a.out, b.out);
    EXPECT_NE(a.out, c.out);
    const auto j = nlohmann::json::parse(a.out);
    EXPECT_EQ(j["shots"], 5000);
    EXPECT_EQ(j["seed"], 11);
    std::uint64_t total = 0;
    for (const auto& row : j["counts"]) total += row["count"].get<std::uint64_t>();
    EXPECT_EQ(total, 5000u);
    EXPECT_EQ(j["counts"][0]["outcome"], "101");
    EXPECT_GT(j["counts"][0]["count"].get<int>(), 4500);
    // Without --seed the seed is drawn and reported so that the run can be repeated.
    const Result unseeded = qmarg_cli("run " + example("ghz.qasm") + " --device cpu --shots 10");
    EXPECT_NE(unseeded.err.find("sampling with seed "), std::string::npos) << unseeded.err;
}

// --given: the reported qubits' distribution conditional on the given values,
// P(outcome | given) = P(outcome and given) / P(given), checked against the
// joint marginal of the reported and the given qubits.
TEST(Cli, GivenPrintsTheDistributionConditionalOnIt) {
    const Result grover = qmarg_cli("run " + example("grover.qasm") + " --device cpu --given q[0]=1");
    ASSERT_EQ(grover.exit_code, 0) << grover.err;
    const std::vector<std::string> lines = lines_of(grover.out);
    ASSERT_EQ(lines.size(), 7u) << grover.out;
    EXPECT_EQ(lines[0], "# bits, left to right: c[2]=q[2] c[1]=q[1]");  // the given qubit leaves the measured ones
    EXPECT_EQ(lines[1], "# given: q[0]=1 (probability 0.96875)");
    EXPECT_EQ(lines[2], "outcome  probability");
    expect_row(lines[3], "10", 121.0 / 124);
    for (std::size_t j = 4; j < lines.size(); ++j) {
        EXPECT_NEAR(std::stod(lines[j].substr(9)), 1.0 / 124, 1e-9) << lines[j];
    }
    EXPECT_NE(grover.err.find("qmarg: given q[0]=1 (probability 0.96875); the probabilities are conditional on it"),
              std::string::npos)
        << grover.err;

    // random_circuit.qasm measures q[4], q[1], q[5]; condition on q[0] and q[3].
    const std::string circuit =
        "run " + example("random_circuit.qasm") + " --device cpu --format json --threshold 0 -q";
    const auto j = json_of(qmarg_cli(circuit + " --qubits 4,1,5,0,3"));
    const auto g = json_of(qmarg_cli(circuit + " --given q[0]=1,3=0"));
    ASSERT_FALSE(j.is_null() || g.is_null());
    EXPECT_EQ(g["qubits"], nlohmann::json({4, 1, 5}));
    EXPECT_EQ(g["clbit_names"], nlohmann::json({"c[0]", "c[1]", "c[2]"}));
    EXPECT_EQ(g["given"], nlohmann::json::parse(R"([{"qubit": 0, "name": "q[0]", "value": 1},
                                                    {"qubit": 3, "name": "q[3]", "value": 0}])"));
    // Joint outcomes read q[3] q[0] q[5] q[1] q[4] from the left.
    std::map<std::string, double> matching;
    double p_given = 0;
    for (const auto& row : j["probabilities"]) {
        const std::string outcome = row["outcome"];
        if (outcome.substr(0, 2) != "01") continue;
        matching[outcome.substr(2)] = row["probability"];
        p_given += row["probability"].get<double>();
    }
    ASSERT_EQ(matching.size(), 8u);
    ASSERT_GT(p_given, 0.01);  // a condition that does not hold almost never
    EXPECT_NEAR(g["given_probability"].get<double>(), p_given, 1e-12);
    ASSERT_EQ(g["probabilities"].size(), 8u);
    double total = 0;
    for (const auto& row : g["probabilities"]) {
        EXPECT_NEAR(row["probability"].get<double>(), matching[row["outcome"]] / p_given, 1e-12) << row;
        total += row["probability"].get<double>();
    }
    EXPECT_NEAR(total, 1.0, 1e-12);

    // Samples come from the conditional distribution: GHZ given q[0]=1 is 1111.
    const Result shots = qmarg_cli("run " + example("ghz.qasm") + " --device cpu --format csv --shots 100 --seed 5 "
                                   "--given 0=1 -q");
    ASSERT_EQ(shots.exit_code, 0) << shots.err;
    EXPECT_EQ(shots.out, "outcome,count\n1111,100\n");
}

// A condition whose probability is at the level of rounding (here sin^2 of
// 5e-10 rad: real, but below what a float state's rounding leaves) is
// divided through as asked, with a warning that it may be noise.
TEST(Cli, GivenWarnsOfAConditionAtTheLevelOfRounding) {
    const std::string tiny = write_program(
        "qmarg_cli_tiny.qasm",
        "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[3];\nh q[0];\ncx q[0],q[1];\nrx(1e-9) q[2];\n");
    const std::string warning = "qmarg: warning: that probability is at the level of rounding";
    const Result in_float = qmarg_cli("run " + tiny + " --device cpu --precision float --given 2=1");
    ASSERT_EQ(in_float.exit_code, 0) << in_float.err;
    EXPECT_NE(in_float.err.find(warning + " in a float state"), std::string::npos) << in_float.err;
    const Result in_double = qmarg_cli("run " + tiny + " --device cpu --given 2=1");
    ASSERT_EQ(in_double.exit_code, 0) << in_double.err;
    EXPECT_EQ(in_double.err.find(warning), std::string::npos) << in_double.err;
    EXPECT_NE(in_double.out.find("# given: q[2]=1 (probability 2.5e-19)"), std::string::npos) << in_double.out;
    const Result quiet = qmarg_cli("run " + tiny + " --device cpu --precision float --given 2=1 -q");
    EXPECT_TRUE(quiet.err.empty()) << quiet.err;
}

TEST(Cli, GivenErrorsNameTheEntry) {
    const std::string ghz = "run " + example("ghz.qasm") + " --device cpu -q --given ";
    const std::pair<const char*, const char*> cases[] = {
        {"0", "--given: '0' is not QUBIT=VALUE, like q[2]=1 or 2=1"},
        {"q[0]=2", "--given: q[0] is given the value '2'; a qubit holds 0 or 1"},
        {"q[0]=1,0=0", "--given: qubit q[0] is given twice"},
        {"9=1", "--given: qubit 9 is out of range for a 5-qubit circuit (valid qubits are 0..4)"},
        {"r[0]=1", "--given: the circuit has no qreg named 'r'"},
        {"q[0]=1 --qubits 1,0", "--given: qubit q[0] is also listed in --qubits; a qubit is either reported or given"},
        {"0=1,1=1,2=1,3=1,4=1", "--given: every qubit the run would report is given; name others with --qubits"},
        {"0=1,1=0", "--given: q[0]=1 q[1]=0 has probability 0 in the final state; there is nothing to condition on"},
    };
    for (const auto& [args, message] : cases) {
        const Result r = qmarg_cli(ghz + args);
        EXPECT_EQ(r.exit_code, 1) << args;
        EXPECT_EQ(r.err, std::string("qmarg: error: ") + message + "\n") << args;
        EXPECT_TRUE(r.out.empty()) << args;
    }
}

TEST(Cli, ReadsStandardInputAndReportsAllQubitsWhenNothingIsMeasured) {
    const Result r = qmarg_cli("run - --device cpu --format csv -q",
                               "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg a[1];\nqreg b[2];\nx b[1];\n");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "outcome,probability\n100,1\n");
}

TEST(Cli, ProgressLinesOnStderr) {
    const Result r =
        qmarg_cli("run " + example("random_circuit.qasm") + " --device cpu --progress-interval 0 --fuse 0");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("qmarg: applied 40/80 operations (50%)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("qmarg: applied 80/80 operations (100%)"), std::string::npos) << r.err;
}

// --fuse changes how many passes run, not the answer; it says what it did.
TEST(Cli, FusedAndUnfusedRunsAgree) {
    auto probabilities = [](const Result& r) {
        std::map<std::string, double> p;
        const nlohmann::json parsed = nlohmann::json::parse(r.out);  // outlives the loop over its rows
        for (const auto& row : parsed.at("probabilities")) p[row.at("outcome")] = row.at("probability");
        return p;
    };
    const std::string run = "run " + example("random_circuit.qasm") + " --device cpu --format json --threshold 0";
    const Result plain = qmarg_cli(run + " --fuse 0");
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(plain.err.find("fused into"), std::string::npos) << plain.err;
    const auto expected = probabilities(plain);
    for (const std::string fuse : {"", " --fuse 1", " --fuse 3", " --fuse 10"}) {
        SCOPED_TRACE("options:" + fuse);
        const Result fused = qmarg_cli(run + fuse);
        ASSERT_EQ(fused.exit_code, 0) << fused.err;
        EXPECT_NE(fused.err.find("qmarg: fused into "), std::string::npos) << fused.err;
        if (fuse.empty()) {
            const std::string width = "on at most " + std::to_string(qmarg::kDefaultFusedQubitsCpu) + " qubits";
            EXPECT_NE(fused.err.find(width), std::string::npos) << fused.err;
        }
        const auto actual = probabilities(fused);
        ASSERT_EQ(actual.size(), expected.size());
        for (const auto& [outcome, p] : expected) EXPECT_NEAR(actual.at(outcome), p, 1e-12) << outcome;
    }
    if (qmarg::gpu_available()) {
        // The GPU's default width is its own.
        const Result gpu = qmarg_cli("run " + example("random_circuit.qasm") + " --device gpu --format json --threshold 0");
        ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
        const std::string width = "on at most " + std::to_string(qmarg::kDefaultFusedQubitsGpu) + " qubits";
        EXPECT_NE(gpu.err.find(width), std::string::npos) << gpu.err;
        const auto actual = probabilities(gpu);
        ASSERT_EQ(actual.size(), expected.size());
        for (const auto& [outcome, p] : expected) EXPECT_NEAR(actual.at(outcome), p, 1e-12) << outcome;
    }
    const Result wide = qmarg_cli(run + " --fuse 11");
    EXPECT_EQ(wide.exit_code, 2);
    EXPECT_EQ(wide.err.rfind("qmarg: error: --fuse: ", 0), 0u) << wide.err;
    EXPECT_NE(wide.err.find("10"), std::string::npos) << wide.err;
}

TEST(Cli, AutoDeviceSaysWhichDeviceItUsed) {
    const Result r = qmarg_cli("run " + example("ghz.qasm"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (qmarg::gpu_available()) {
        EXPECT_NE(r.err.find("running on the GPU ("), std::string::npos) << r.err;
    } else {
        EXPECT_NE(r.err.find("running on the CPU (no usable GPU: " + qmarg::gpu_unavailable_reason() + ")"),
                  std::string::npos)
            << r.err;
    }
}

// The same circuit on both devices, plain and with --given (the engine over
// the matching amplitudes only): the same outcomes, within float rounding.
TEST(Cli, GpuRunMatchesCpuRun) {
    if (!qmarg::gpu_available()) GTEST_SKIP() << "no usable GPU: " << qmarg::gpu_unavailable_reason();
    for (const char* precision : {"double", "float"}) {
        for (const std::string given : {"", " --given q[0]=1,q[2]=0"}) {
            SCOPED_TRACE(std::string(precision) + given);
            const std::string args = "run " + example("random_circuit.qasm") +
                                     " --format json --threshold 0 --precision " + precision + given;
            const auto g = json_of(qmarg_cli(args + " --device gpu"));
            const auto c = json_of(qmarg_cli(args + " --device cpu"));
            ASSERT_FALSE(g.is_null() || c.is_null());
            EXPECT_EQ(g["device"], "GPU");
            ASSERT_EQ(g["probabilities"].size(), 8u);
            ASSERT_EQ(c["probabilities"].size(), 8u);
            std::map<std::string, double> cpu_p;
            for (const auto& row : c["probabilities"]) cpu_p[row["outcome"]] = row["probability"];
            for (const auto& row : g["probabilities"]) {
                EXPECT_NEAR(row["probability"].get<double>(), cpu_p[row["outcome"]], 1e-5) << row;
            }
            if (!given.empty()) {
                EXPECT_NEAR(g["given_probability"].get<double>(), c["given_probability"].get<double>(), 1e-5);
            }
        }
    }
}

TEST(Cli, GpuWithoutAGpuIsAnError) {
    if (qmarg::gpu_available()) GTEST_SKIP() << "a GPU is usable here";
    const Result r = qmarg_cli("run " + example("ghz.qasm") + " --device gpu");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "qmarg: error: --device gpu: no usable GPU: " + qmarg::gpu_unavailable_reason() + "\n");
    EXPECT_TRUE(r.out.empty());
}

TEST(Cli, ErrorsAreOneLineWithANonZeroExitCode) {
    const Result missing = qmarg_cli("run /nonexistent/circuit.qasm");
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_EQ(missing.err, "qmarg: error: cannot open OpenQASM file '/nonexistent/circuit.qasm'\n");

    const std::string bad = write_program("qmarg_cli_bad.qasm", "OPENQASM 2.0;\nqreg q[2];\nCX q[0], q[2];\n");
    const Result invalid = qmarg_cli("run " + bad + " --device cpu");
    EXPECT_EQ(invalid.exit_code, 1);
    EXPECT_EQ(invalid.err, "qmarg: error: " + bad + ":3:12: index 2 is out of range for qreg q[2] (valid indices are 0..1)\n");
    EXPECT_TRUE(invalid.out.empty());

    const Result qubits = qmarg_cli("run " + example("ghz.qasm") + " --device cpu --qubits 1,7");
    EXPECT_EQ(qubits.exit_code, 1);
    EXPECT_EQ(qubits.err, "qmarg: error: --qubits: qubit 7 is out of range for a 5-qubit circuit (valid qubits are 0..4)\n");
    const Result twice = qmarg_cli("run " + example("ghz.qasm") + " --device cpu --qubits q[1],1");
    EXPECT_EQ(twice.err, "qmarg: error: --qubits: qubit q[1] is listed twice\n");

    const Result option = qmarg_cli("run " + example("ghz.qasm") + " --format xml");
    EXPECT_EQ(option.exit_code, 2);
    EXPECT_EQ(option.err.rfind("qmarg: error: --format: ", 0), 0u) << option.err;
    EXPECT_EQ(std::count(option.err.begin(), option.err.end(), '\n'), 1) << option.err;

    const Result none = qmarg_cli("");
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_EQ(none.err, "qmarg: error: A subcommand is required (see qmarg --help)\n");
}

TEST(Cli, StatesBeyondMemoryNameTheMemoryNeeded) {
    const std::string huge = write_program("qmarg_cli_huge.qasm", "OPENQASM 2.0;\nqreg q[100];\n");
    const Result r = qmarg_cli("run " + huge + " --device cpu");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err.rfind("qmarg: error: a 100-qubit state needs 2^100 amplitudes x 16 B = 2.03e+31 bytes; the CPU "
                          "holds at most ", 0),
              0u)
        << r.err;
    const std::string big = write_program("qmarg_cli_big.qasm", "OPENQASM 2.0;\nqreg q[50];\n");
    const Result b = qmarg_cli("run " + big + " --device cpu --precision float");
    EXPECT_EQ(b.exit_code, 1);
    EXPECT_EQ(b.err.rfind("qmarg: error: a 50-qubit single-precision state needs 8.0 PiB but the CPU has ", 0), 0u)
        << b.err;
    const std::string empty = write_program("qmarg_cli_empty.qasm", "OPENQASM 2.0;\n");
    const Result e = qmarg_cli("run " + empty + " --device cpu");
    EXPECT_EQ(e.err, "qmarg: error: " + empty + " declares no qubits (add a qreg)\n");
}

#else

TEST(Cli, NotBuilt) { GTEST_SKIP() << "the qmarg tool is not built (QMARG_BUILD_TOOLS=OFF)"; }

#endif

}  // namespace
