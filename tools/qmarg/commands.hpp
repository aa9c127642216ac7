// The subcommands of the qmarg tool. Each one adds itself to the application:
// its options, and a callback that runs it once the command line is parsed.
// Callbacks report failures by throwing qmarg::Error; main() turns that into
// one line on stderr and a non-zero exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace qmarg_cli {

// qmarg run CIRCUIT.qasm: simulate an OpenQASM 2.0 circuit and print the
// marginal distribution of its measured qubits (run_command.cpp).
void add_run_command(CLI::App& app);

// qmarg bench marginal: time marginal probabilities over a sweep of cases
// against a read roofline, checked first (bench_command.cpp).
void add_bench_command(CLI::App& app);

}  // namespace qmarg_cli
