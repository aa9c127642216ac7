// qmarg run: read an OpenQASM 2.0 circuit, simulate it on the GPU or the CPU,
// and print the marginal distribution of the measured qubits (or of --qubits),
// or sampled counts with --shots; with --given, the distribution conditional
// on other qubits holding given values. Gates are fused first (--fuse, default
// qmarg::kDefaultFusedQubitsGpu or Cpu for the device that runs them): fewer,
// wider gates mean fewer passes over the state.
//
// stdout carries only the result (so it can be piped); what was chosen, how
// long it took and progress on long circuits go to stderr.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "commands.hpp"
#include "device_choice.hpp"
#include "qmarg/qmarg.hpp"
#include "qmarg/qasm.hpp"
#include "qmarg/sampling.hpp"
#include "report.hpp"

namespace qmarg_cli {
namespace {

struct RunOptions {
    std::string circuit;
    std::string device = "auto";
    std::string precision = "double";
    std::vector<std::string> qubits;
    std::vector<std::string> given;
    std::string format = "table";
    std::size_t top = 0;
    double threshold = 1e-10;
    std::uint64_t shots = 0;
    std::uint64_t seed = 0;
    bool seed_given = false;
    bool quiet = false;
    double progress_interval = 1.0;
    int fuse = -1;  // the device's default (qmarg/fusion.hpp) unless --fuse is given
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

qmarg::Circuit read_circuit(const std::string& path) {
    if (path != "-") return qmarg::load_qasm(path);
    const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    return qmarg::parse_qasm(text, "<stdin>");
}

// A qubit named in option `option`: an index ("3") or a register element ("q[3]").
int parse_qubit(const std::string& text, const qmarg::Circuit& circuit, const std::string& option) {
    const auto bracket = text.find('[');
    if (bracket == std::string::npos) {
        std::size_t used = 0;
        long value = -1;
        try {
            value = std::stol(text, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != text.size() || text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) {
            throw qmarg::Error(option + ": '" + text + "' is neither a qubit index nor a register element like q[3]");
        }
        if (value >= circuit.num_qubits) {
            throw qmarg::Error(option + ": qubit " + text + " is out of range for a " +
                               std::to_string(circuit.num_qubits) + "-qubit circuit (valid qubits are 0.." +
                               std::to_string(circuit.num_qubits - 1) + ")");
        }
        return static_cast<int>(value);
    }
    const std::string name = text.substr(0, bracket);
    for (const qmarg::Register& r : circuit.quantum_registers) {
        if (r.name != name) continue;
        const std::string inner = text.substr(bracket + 1);
        std::size_t used = 0;
        long index = -1;
        try {
            index = std::stol(inner, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || inner.substr(used) != "]" || !std::isdigit(static_cast<unsigned char>(inner[0]))) {
            throw qmarg::Error(option + ": '" + text + "' is not a register element like " + name + "[0]");
        }
        if (index >= r.size) {
            throw qmarg::Error(option + ": index " + std::to_string(index) + " is out of range for qreg " + name +
                               "[" + std::to_string(r.size) + "]");
        }
        return r.offset + static_cast<int>(index);
    }
    throw qmarg::Error(option + ": the circuit has no qreg named '" + name + "'");
}

bool contains(const qmarg::Qubits& qubits, int qubit) {
    return std::find(qubits.begin(), qubits.end(), qubit) != qubits.end();
}

bool is_given(const Report& report, int qubit) { return contains(report.given_qubits, qubit); }

// The --given entries QUBIT=VALUE, into report.given_*.
void choose_given(const RunOptions& options, const qmarg::Circuit& circuit, Report& report) {
    for (const std::string& entry : options.given) {
        const auto equals = entry.find('=');
        if (equals == std::string::npos) {
            throw qmarg::Error("--given: '" + entry + "' is not QUBIT=VALUE, like q[2]=1 or 2=1");
        }
        const int qubit = parse_qubit(entry.substr(0, equals), circuit, "--given");
        const std::string value = entry.substr(equals + 1);
        if (value != "0" && value != "1") {
            throw qmarg::Error("--given: " + circuit.qubit_name(qubit) + " is given the value '" + value +
                               "'; a qubit holds 0 or 1");
        }
        if (is_given(report, qubit)) {
            throw qmarg::Error("--given: qubit " + circuit.qubit_name(qubit) + " is given twice");
        }
        report.given_qubits.push_back(qubit);
        report.given_names.push_back(circuit.qubit_name(qubit));
        report.given_values.push_back(value == "1" ? 1 : 0);
    }
}

// The qubits to report (bit j of an outcome is qubits[j]) and, for measured
// qubits, the classical bit each one is stored in. Given qubits (chosen
// first) leave the default lists; listing one in --qubits is an error.
void choose_qubits(const RunOptions& options, const qmarg::Circuit& circuit, Report& report) {
    if (!options.qubits.empty()) {
        for (const std::string& q : options.qubits) {
            const int qubit = parse_qubit(q, circuit, "--qubits");
            if (contains(report.qubits, qubit)) {
                throw qmarg::Error("--qubits: qubit " + circuit.qubit_name(qubit) + " is listed twice");
            }
            if (is_given(report, qubit)) {
                throw qmarg::Error("--given: qubit " + circuit.qubit_name(qubit) +
                                   " is also listed in --qubits; a qubit is either reported or given");
            }
            report.qubits.push_back(qubit);
        }
    } else if (!circuit.measurements.empty()) {
        for (const qmarg::Measurement& m : circuit.measurements) {
            if (is_given(report, m.qubit)) continue;
            report.qubits.push_back(m.qubit);
            report.clbit_names.push_back(circuit.clbit_name(m.bit));
        }
    } else {
        for (int q = 0; q < circuit.num_qubits; ++q) {
            if (!is_given(report, q)) report.qubits.push_back(q);
        }
    }
    if (report.qubits.empty()) {
        throw qmarg::Error("--given: every qubit the run would report is given; name others with --qubits");
    }
    for (int q : report.qubits) report.qubit_names.push_back(circuit.qubit_name(q));
}

// The distribution of the reported qubits: their marginal or, with --given,
// their marginal over the amplitudes that satisfy the condition divided by
// its probability (recorded in the report).
template <class Real>
std::vector<double> reported_distribution(const qmarg::StateVector<Real>& state, Report& report) {
    // Deterministic, so that a run repeats its printed probabilities and, with
    // --seed, its sampled counts bit for bit (the default may merge bins with
    // atomics; a few microseconds against the circuit's run). Conditional
    // marginals add in a fixed order on every path, with nothing to turn off.
    if (report.given_qubits.empty()) {
        qmarg::MarginalOptions reproducible;
        reproducible.deterministic = true;
        return qmarg::marginal_probabilities(state, report.qubits, reproducible);
    }
    const qmarg::Condition condition{report.given_qubits, report.given_values};
    std::vector<double> probabilities = qmarg::conditional_marginal_probabilities(state, report.qubits, condition);
    double total = 0;
    for (double p : probabilities) total += p;
    if (!(total > 0)) {
        throw qmarg::Error("--given: " + given_text(report) +
                           " has probability 0 in the final state; there is nothing to condition on");
    }
    for (double& p : probabilities) p /= total;
    report.given_probability = total;
    return probabilities;
}

// Fails early, naming the memory, for states no StateVector can hold at all;
// smaller ones are checked against the device's memory by StateVector itself.
void check_size(const qmarg::Circuit& circuit, std::size_t bytes_per_amplitude, qmarg::Device device) {
    const int n = circuit.num_qubits;
    if (n <= qmarg::StateVector<double>::kMaxQubits) return;
    const double bytes = std::ldexp(static_cast<double>(bytes_per_amplitude), n);
    char text[32];
    if (std::isfinite(bytes)) {
        std::snprintf(text, sizeof text, "%.3g", bytes);
    } else {
        std::snprintf(text, sizeof text, "2^%d", n + static_cast<int>(std::log2(static_cast<double>(bytes_per_amplitude))));
    }
    throw qmarg::Error("a " + std::to_string(n) + "-qubit state needs 2^" + std::to_string(n) + " amplitudes x " +
                       std::to_string(bytes_per_amplitude) + " B = " + text + " bytes; the " +
                       qmarg::to_string(device) + " holds at most " +
                       std::to_string(qmarg::max_qubits(device, bytes_per_amplitude)) + " qubits");
}

// Progress on stderr about once a second while operations are applied.
class ProgressLine {
public:
    ProgressLine(bool quiet, double interval_seconds) : quiet_(quiet), interval_(interval_seconds) {}
    void operator()(std::size_t done, std::size_t total) {
        if (quiet_) return;
        const auto now = Clock::now();
        if (std::chrono::duration<double>(now - last_).count() < interval_) return;
        last_ = now;
        std::fprintf(stderr, "qmarg: applied %zu/%zu operations (%.0f%%)\n", done, total, 100.0 * done / total);
    }
private:
    bool quiet_;
    double interval_;
    Clock::time_point last_ = Clock::now();
};

// `note` says where it runs; it is printed once the state exists, so that a
// state that does not fit is one line of error and nothing else.
template <class Real>
void simulate(const RunOptions& options, const qmarg::Circuit& written, qmarg::Device device,
              const std::string& note, Report& report) {
    check_size(written, sizeof(std::complex<Real>), device);
    const auto start = Clock::now();
    const qmarg::Circuit circuit = options.fuse > 0 ? qmarg::fuse_gates(written, options.fuse) : written;
    const double fuse_seconds = seconds_since(start);
    qmarg::StateVector<Real> state(circuit.num_qubits, device);
    if (!options.quiet) {
        std::fprintf(stderr, "qmarg: %s: %d qubits, %zu operations; running on %s in %s precision\n",
                     circuit.source_name.c_str(), circuit.num_qubits, written.operations.size(), note.c_str(),
                     options.precision.c_str());
        if (options.fuse > 0) {
            std::fprintf(stderr, "qmarg: fused into %zu operations on at most %d qubits in %.3f s (--fuse 0: as written)\n",
                         circuit.operations.size(), options.fuse, fuse_seconds);
        }
        if (options.shots > 0 && !options.seed_given) {
            std::fprintf(stderr, "qmarg: sampling with seed %llu (pass --seed to repeat)\n",
                         static_cast<unsigned long long>(options.seed));
        }
    }
    ProgressLine progress(options.quiet, options.progress_interval);
    qmarg::run(state, circuit, [&progress](std::size_t done, std::size_t total) { progress(done, total); });
    const double run_seconds = seconds_since(start);
    const auto marginal_start = Clock::now();
    const std::vector<double> probabilities = reported_distribution(state, report);
    const double marginal_seconds = seconds_since(marginal_start);
    if (!options.quiet) {
        std::fprintf(stderr, "qmarg: %zu operations in %.3f s, marginal over %zu qubits in %.3f s\n",
                     circuit.operations.size(), run_seconds, report.qubits.size(), marginal_seconds);
        if (!report.given_qubits.empty()) {
            std::fprintf(stderr, "qmarg: given %s (probability %.6g); the %s conditional on it\n",
                         given_text(report).c_str(), report.given_probability,
                         options.shots > 0 ? "samples are drawn" : "probabilities are");
            // A condition that cannot hold comes out with the mass of the
            // rounding errors of its 2^(n - m) amplitudes, each about a few
            // units in the last place of Real: dividing by that prints noise.
            const double eps = std::numeric_limits<Real>::epsilon();
            const double noise =
                std::ldexp(100 * eps * eps, circuit.num_qubits - static_cast<int>(report.given_qubits.size()));
            if (report.given_probability < noise) {
                std::fprintf(stderr,
                             "qmarg: warning: that probability is at the level of rounding in a %s state (below "
                             "%.1g); the condition may be impossible and the distribution noise\n",
                             options.precision.c_str(), noise);
            }
        }
    }
    if (options.shots > 0) {
        report.sampled = true;
        report.shots = options.shots;
        report.seed = options.seed;
        select_counts(qmarg::sample_counts(probabilities, options.shots, options.seed), options.top, report);
    } else {
        select_probabilities(probabilities, options.threshold, options.top, report);
    }
}

void run(RunOptions options) {
    const qmarg::Circuit circuit = read_circuit(options.circuit);
    if (circuit.num_qubits < 1) throw qmarg::Error(circuit.source_name + " declares no qubits (add a qreg)");
    Report report;
    report.circuit = circuit.source_name;
    report.num_qubits = circuit.num_qubits;
    report.precision = options.precision;
    choose_given(options, circuit, report);
    choose_qubits(options, circuit, report);

    std::string note;
    const qmarg::Device device = choose_device(options.device, note);
    report.device = qmarg::to_string(device);
    if (options.fuse < 0) {
        options.fuse = device == qmarg::Device::Gpu ? qmarg::kDefaultFusedQubitsGpu : qmarg::kDefaultFusedQubitsCpu;
    }
    if (options.shots > 0 && !options.seed_given) options.seed = std::random_device{}();
    if (options.precision == "float") {
        simulate<float>(options, circuit, device, note, report);
    } else {
        simulate<double>(options, circuit, device, note, report);
    }

    if (options.format == "json") {
        print_json(report, stdout);
    } else if (options.format == "csv") {
        print_csv(report, stdout);
    } else {
        print_table(report, stdout);
    }
    if (!options.quiet && report.omitted > 0 && !report.sampled) {
        std::fprintf(stderr, "qmarg: %llu %s not shown (probability %.3g in total; --top 0 --threshold 0 shows all)\n",
                     static_cast<unsigned long long>(report.omitted), report.omitted == 1 ? "outcome" : "outcomes",
                     report.omitted_probability);
    } else if (!options.quiet && report.omitted > 0) {
        std::fprintf(stderr, "qmarg: %llu more %s not shown (--top 0 shows all)\n",
                     static_cast<unsigned long long>(report.omitted), report.omitted == 1 ? "outcome" : "outcomes");
    }
}

}  // namespace

void add_run_command(CLI::App& app) {
    auto options = std::make_shared<RunOptions>();
    CLI::App* cmd = app.add_subcommand(
        "run", "Simulate an OpenQASM 2.0 circuit and print the marginal distribution of its measured qubits");
    cmd->add_option("circuit", options->circuit, "OpenQASM 2.0 file ('-' reads standard input)")->required();
    cmd->add_option("--device", options->device, "Where to simulate: auto (the GPU when usable), cpu or gpu")
        ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
        ->capture_default_str();
    cmd->add_option("--precision", options->precision, "Amplitude precision: double or float")
        ->check(CLI::IsMember({"double", "float"}))
        ->capture_default_str();
    cmd->add_option("--qubits", options->qubits,
                    "Qubits to report instead of the measured ones, e.g. 0,3,5 or q[0],q[3]; the first listed is "
                    "the rightmost bit")
        ->delimiter(',');
    cmd->add_option("--given", options->given,
                    "Condition on qubits holding values, e.g. q[2]=1,0=0: the distribution printed is the one given "
                    "them (given qubits leave the default report)")
        ->delimiter(',');
    cmd->add_option("--format", options->format, "Output: table, json or csv")
        ->check(CLI::IsMember({"table", "json", "csv"}))
        ->capture_default_str();
    cmd->add_option("--top", options->top, "Print at most N outcomes, most likely first (0: all)")
        ->capture_default_str();
    cmd->add_option("--threshold", options->threshold, "Leave out outcomes less likely than this (0: print all)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    cmd->add_option("--shots", options->shots, "Sample this many measurements and print counts instead");
    cmd->add_option_function<std::uint64_t>(
        "--seed",
        [options](const std::uint64_t& seed) {
            options->seed = seed;
            options->seed_given = true;
        },
        "Seed for --shots (default: random, printed on stderr)");
    cmd->add_flag("-q,--quiet", options->quiet, "Print nothing on stderr but errors");
    cmd->add_option("--progress-interval", options->progress_interval,
                    "Seconds between progress lines on stderr while operations are applied")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd->add_option("--fuse", options->fuse,
                    "Multiply consecutive gates into gates on at most M qubits before running (0: run the gates as "
                    "written; default " +
                        std::to_string(qmarg::kDefaultFusedQubitsGpu) + " on the GPU, " +
                        std::to_string(qmarg::kDefaultFusedQubitsCpu) + " on the CPU)")
        ->check(CLI::Range(0, qmarg::kMaxFusedQubits));
    cmd->callback([options]() { run(*options); });
}

}  // namespace qmarg_cli
