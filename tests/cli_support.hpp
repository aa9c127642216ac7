// Running the built qmarg tool from a test: through the shell, with its
// standard output and error captured to files under the test's temporary
// directory. QMARG_CLI_PATH in the environment overrides the path CMake
// compiled in (a build copied to another machine).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace qmarg_test {

struct CliResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Runs `qmarg <args>`; `input` (if any) is its standard input. `tag` keeps the
// files of different test programs apart.
inline CliResult run_qmarg_cli(const std::string& compiled_path, const std::string& args, const std::string& tag,
                               const std::string& input = "") {
    const std::string base = ::testing::TempDir() + tag + "_" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    const char* cli = std::getenv("QMARG_CLI_PATH");
    std::string command = std::string(cli != nullptr && *cli != '\0' ? cli : compiled_path) + " " + args + " > " +
                          base + ".out 2> " + base + ".err";
    if (!input.empty()) {
        std::ofstream(base + ".in") << input;
        command += " < " + base + ".in";
    }
    const int status = std::system(command.c_str());
    CliResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(base + ".out");
    r.err = slurp(base + ".err");
    return r;
}

}  // namespace qmarg_test
