// qmarg bench marginal: time marginal_probabilities over a sweep of state sizes
// n, marginal sizes k, qubit layouts, strategies and precisions, on the GPU or
// the CPU, and report each case as GB/s of state read and as a ratio to a read
// roofline timed in the same process on the same state.
//
// Why each case can be trusted:
//  - every state is fresh and random (set_random_state, never zeros), its seed
//    derived from --seed and recorded;
//  - every strategy's answer is checked before it is timed, and a wrong answer
//    stops the run. GPU: against the CPU backend for n <= 24, above that against
//    another strategy's answer for the same case (BinStationary's when it runs).
//    CPU: against a plain serial loop written here, which shares no code with
//    the CPU backend;
//  - times come from qmarg/benchmark.hpp (CUDA events on the GPU, with L2
//    flushed before each run of a state that would fit in it);
//  - the roofline is measured on the same state, under the same run options
//    (--runs, --warmup, --min-seconds).
//
// Slow cases: a seed strategy can read a 30-qubit state at 18 GB/s (1 s per
// run), so the full default sweep takes about 50 minutes on an H100, most of it
// in a few dozen such cases. By default every case gets --runs runs. With
// --cell-seconds S > 0, a case whose checking run took longer than S / --runs
// gets floor(S / that time) runs instead, at least 3, and its record says how
// many it got: a quick look, not the median of --runs runs.
//
// Fast cases: 20 runs of a 20-qubit marginal take 0.2 ms, so one disturbance
// of a few milliseconds (clocks ramping up after the host-side checks, say)
// covered a whole case in early sweeps (0.24 of the roofline in a cell whose
// neighbours read 0.8). With --min-seconds S > 0 (0.05 by default), a case or
// roofline whose --runs runs took less than S in all counts them as warm-up
// and is timed again with more runs, until its runs fill S (or reach
// qmarg::kMaxTimedRuns); its record gives both counts.
//
// Rounds: disturbances last longer than that. A sweep that timed each case in
// one stretch of 50 ms had, at n = 22..26 on an H100, about one case in ten
// whose slowest tenth of runs took 1.1 to 3 times its median; a disturbance
// covering a third of a case's runs moved its median by up to 0.1 of the
// roofline, so that two strategies which run the same kernels differed by
// that much in one cell (double n = 24, k = 16 low: 0.82 against 0.90). So a
// state's cases are first all checked, and then timed in --rounds R rounds
// (5 by default): each round times the roofline and every case once more,
// with a share of their runs (--runs split as evenly as it goes, a case
// with fewer runs than R timed in that many rounds) and of --min-seconds,
// each share after its own warm-up. A disturbance then falls on one round of
// a case, a fifth of its runs, and the median over all rounds stands. The
// roofline's median, over its rounds, is the one every ratio of the state
// divides by.
//
// stdout: the table (or the JSON with --format json); stderr: progress and notes.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_cases.hpp"
#include "commands.hpp"
#include "device_choice.hpp"
#include "qmarg/benchmark.hpp"
#include "qmarg/qmarg.hpp"
#include "qmarg_git_commit.hpp"  // QMARG_GIT_COMMIT, generated at build time

namespace qmarg_cli {
namespace {

using json = nlohmann::ordered_json;
using qmarg::MarginalStrategy;

constexpr int kCpuReferenceMaxQubits = 24;  // GPU cases up to here are checked against the CPU backend
constexpr int kMinRuns = 3;                  // the fewest runs a slow case gets

// Every strategy, in the order of the default GPU sweep; the names, the
// parser and the help text all come from this list.
const MarginalStrategy kStrategyOrder[] = {MarginalStrategy::GlobalAtomic, MarginalStrategy::SharedPrivatized,
                                           MarginalStrategy::Partitioned, MarginalStrategy::BinStationary,
                                           MarginalStrategy::BinStationaryAtomic, MarginalStrategy::Auto};

std::vector<std::string> strategy_names() {
    std::vector<std::string> names;
    for (MarginalStrategy s : kStrategyOrder) names.emplace_back(qmarg::to_string(s));
    return names;
}
const std::vector<std::string> kGpuStrategies = strategy_names();

// "a, b, c" (separator ", ") or "a, b or c" (last ", " replaced by " or ").
std::string listed(const std::vector<std::string>& names, bool with_or) {
    std::string text;
    for (std::size_t j = 0; j < names.size(); ++j) {
        if (j) text += with_or && j + 1 == names.size() ? " or " : ", ";
        text += names[j];
    }
    return text;
}

struct BenchOptions {
    std::vector<int> ns;
    std::vector<int> ks = {1, 2, 5, 10, 15, 20};
    std::vector<std::string> layouts = {"low", "high", "scattered", "descending", "random"};
    std::vector<std::string> strategies;
    std::vector<std::string> precisions = {"double", "float"};
    std::string device = "auto";
    int runs = 20;
    int warmup = 3;
    int rounds = 5;
    double cell_seconds = 0.0;
    double min_seconds = 0.05;
    std::uint64_t seed = 0;
    bool seed_given = false;
    std::string out;
    std::string format = "table";
    bool quiet = false;
};

MarginalStrategy parse_strategy(const std::string& name) {
    for (MarginalStrategy s : kStrategyOrder) {
        if (name == qmarg::to_string(s)) return s;
    }
    throw qmarg::Error("--strategies: unknown strategy '" + name + "' (" + listed(kGpuStrategies, true) + ")");
}

// One row of the table and the JSON.
struct Record {
    std::string precision;
    int n = 0;
    int k = 0;
    std::string layout;
    qmarg::Qubits qubits;
    std::string strategy;
    std::uint64_t state_seed = 0;
    std::size_t state_bytes = 0;
    int runs = 0;
    int warmup = 0;
    int rounds = 0;  // of the sweep's rounds, those the case was timed in
    RunStats ms;
    double gb_per_s = 0;
    double roofline_gb_per_s = 0;
    std::string checked_against;
    std::string skipped_reason;
};

struct Roofline {
    std::string precision;
    int n = 0;
    std::uint64_t state_seed = 0;
    std::size_t state_bytes = 0;
    int runs = 0;
    int warmup = 0;
    int rounds = 0;
    RunStats ms;
    double gb_per_s = 0;
};

struct Sweep {
    BenchOptions options;
    qmarg::Device device = qmarg::Device::Cpu;
    std::vector<int> skipped_ns;  // default sizes that do not fit, per precision
    std::map<std::string, std::vector<int>> ns_by_precision;
    std::vector<Roofline> rooflines;
    std::vector<Record> records;
    std::size_t total_cases = 0;
    std::size_t done_cases = 0;
};

double gb_per_s(std::size_t bytes, double ms) { return static_cast<double>(bytes) / (ms * 1e-3) / 1e9; }

std::string qubits_text(const qmarg::Qubits& qubits) {
    std::string text;
    for (std::size_t j = 0; j < qubits.size(); ++j) text += (j ? "," : "") + std::to_string(qubits[j]);
    return text;
}

// ------------------------------------------------------------- one state --

// The roofline or a case, timed over the rounds (first comment): `runs` timed
// runs in all, split over min(rounds, runs) rounds, each share after `warmup`
// untimed runs.
struct RoundTiming {
    std::function<std::vector<double>(int, int)> time;
    int runs = 0;
    int warmup = 0;
    std::vector<double> ms;  // every timed run, round after round
    int runs_done = 0;
    int warmup_done = 0;
    int rounds_done = 0;
};

// Round `round` (0-based) of `rounds`: t's share of its runs, at least its
// share of min_seconds (qmarg::time_until_filled); nothing once its runs are
// spread over the rounds before.
void time_round(RoundTiming& t, int round, int rounds, double min_seconds) {
    const int used = std::min(rounds, t.runs);
    if (round >= used) return;
    int runs = t.runs / used + (round < t.runs % used ? 1 : 0);
    int warmup = t.warmup;
    const std::vector<double> ms =
        qmarg::time_until_filled(t.time, min_seconds / used, qmarg::kMaxTimedRuns, warmup, runs);
    t.ms.insert(t.ms.end(), ms.begin(), ms.end());
    t.runs_done += runs;
    t.warmup_done += warmup;
    ++t.rounds_done;
}

// Runs every (k, layout, strategy) case on one fresh state of n qubits.
template <class Real>
void bench_state(Sweep& sweep, const std::string& precision, int n) {
    const BenchOptions& o = sweep.options;
    const std::uint64_t state_seed = mix_seed(o.seed, static_cast<std::uint64_t>(n), precision == "float" ? 1 : 2);
    qmarg::StateVector<Real> state(n, sweep.device);
    state.set_random_state(state_seed);
    const bool on_gpu = sweep.device == qmarg::Device::Gpu;
    const double tolerance = qmarg::marginal_check_tolerance<Real>();

    RoundTiming roofline_timing;
    roofline_timing.time = [&](int w, int r) { return qmarg::time_read_roofline_ms(state, w, r); };
    roofline_timing.runs = o.runs;
    roofline_timing.warmup = o.warmup;
    // The checked cases of this state, to be timed in the rounds: the index of
    // each one's record and its timing.
    const std::size_t first_record = sweep.records.size();
    std::vector<std::pair<std::size_t, RoundTiming>> cases;

    // The CPU copy of a GPU state, made when a check first needs it.
    std::unique_ptr<qmarg::StateVector<Real>> host_copy;
    for (int k : o.ks) {
        if (k >= n) continue;
        for (const std::string& layout : o.layouts) {
            const qmarg::Qubits qubits = layout_qubits(layout, n, k, o.seed);
            // Checked answers of this case by where they came from.
            std::map<std::string, std::vector<double>> known;
            const auto reference = [&](const std::string& strategy) -> std::pair<std::vector<double>, std::string> {
                if (!on_gpu) {
                    if (!known.count("serial loop")) known["serial loop"] = serial_marginal(state.data(), n, qubits);
                    return {known["serial loop"], "serial loop"};
                }
                const auto cpu = [&]() -> std::pair<std::vector<double>, std::string> {
                    if (!known.count("CPU")) {
                        if (!host_copy) host_copy = std::make_unique<qmarg::StateVector<Real>>(state.to(qmarg::Device::Cpu));
                        known["CPU"] = qmarg::marginal_probabilities(*host_copy, qubits);
                    }
                    return {known["CPU"], "CPU"};
                };
                if (n <= kCpuReferenceMaxQubits) return cpu();
                if (strategy != "BinStationary" && known.count("BinStationary")) {
                    return {known["BinStationary"], "BinStationary"};
                }
                for (const auto& entry : known) {
                    if (entry.first != strategy && entry.first != "Auto") return {entry.second, entry.first};
                }
                for (const char* other : {"BinStationary", "SharedPrivatized", "Partitioned", "GlobalAtomic"}) {
                    if (other == strategy) continue;
                    try {
                        const qmarg::MarginalOptions options{parse_strategy(other)};
                        return {qmarg::marginal_probabilities(state, qubits, options), other};
                    } catch (const qmarg::CudaError&) {
                        throw;
                    } catch (const qmarg::Error&) {
                        // This one cannot run the case either; try the next.
                    }
                }
                return cpu();
            };

            for (const std::string& strategy : o.strategies) {
                ++sweep.done_cases;
                if (!o.quiet) {
                    std::fprintf(stderr, "[%zu/%zu] %s n=%d k=%d %s %s\n", sweep.done_cases, sweep.total_cases,
                                 precision.c_str(), n, k, layout.c_str(), strategy.c_str());
                }
                Record r;
                r.precision = precision;
                r.n = n;
                r.k = k;
                r.layout = layout;
                r.qubits = qubits;
                r.strategy = strategy;
                r.state_seed = state_seed;
                r.state_bytes = state.bytes();
                const qmarg::MarginalOptions options{parse_strategy(strategy)};

                // The checking run; it also says how slow the case is.
                std::vector<double> answer;
                const auto start = std::chrono::steady_clock::now();
                try {
                    answer = qmarg::marginal_probabilities(state, qubits, options);
                } catch (const qmarg::CudaError&) {
                    throw;
                } catch (const qmarg::Error& e) {
                    r.skipped_reason = e.what();
                    sweep.records.push_back(r);
                    continue;
                }
                const double check_seconds =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                const auto want = reference(strategy);
                const std::string mismatch = qmarg::compare_marginals(answer, want.first, tolerance);
                if (!mismatch.empty()) {
                    throw qmarg::Error("WRONG ANSWER: " + strategy + " on a " + precision + " state, n=" +
                                       std::to_string(n) + " k=" + std::to_string(k) + " " + layout + " qubits {" +
                                       qubits_text(qubits) + "}, state seed " + std::to_string(state_seed) +
                                       ", differs from " + want.second + ": " + mismatch + "; the run is stopped");
                }
                if (strategy != "Auto") known[strategy] = std::move(answer);
                r.checked_against = want.second;

                RoundTiming timing;
                timing.time = [&state, qubits, options](int w, int runs) {
                    return qmarg::time_marginal_ms(state, qubits, options, w, runs);
                };
                timing.runs = qmarg::timed_run_count(o.runs, check_seconds, o.cell_seconds, kMinRuns);
                timing.warmup = check_seconds < 0.05 ? o.warmup : 0;  // the check warmed up a slow case
                sweep.records.push_back(r);
                cases.emplace_back(sweep.records.size() - 1, std::move(timing));
            }
        }
    }

    for (int round = 0; round < o.rounds; ++round) {
        if (!o.quiet) {
            std::fprintf(stderr, "%s n=%d: timing round %d/%d of %zu cases\n", precision.c_str(), n, round + 1,
                         o.rounds, cases.size());
        }
        time_round(roofline_timing, round, o.rounds, o.min_seconds);
        for (auto& entry : cases) time_round(entry.second, round, o.rounds, o.min_seconds);
    }

    Roofline roofline;
    roofline.precision = precision;
    roofline.n = n;
    roofline.state_seed = state_seed;
    roofline.state_bytes = state.bytes();
    roofline.runs = roofline_timing.runs_done;
    roofline.warmup = roofline_timing.warmup_done;
    roofline.rounds = roofline_timing.rounds_done;
    roofline.ms = run_stats(std::move(roofline_timing.ms));
    roofline.gb_per_s = gb_per_s(state.bytes(), roofline.ms.median);
    sweep.rooflines.push_back(roofline);
    for (std::size_t i = first_record; i < sweep.records.size(); ++i) {
        sweep.records[i].roofline_gb_per_s = roofline.gb_per_s;
    }
    for (auto& entry : cases) {
        Record& r = sweep.records[entry.first];
        RoundTiming& timing = entry.second;
        r.runs = timing.runs_done;
        r.warmup = timing.warmup_done;
        r.rounds = timing.rounds_done;
        r.ms = run_stats(std::move(timing.ms));
        r.gb_per_s = gb_per_s(state.bytes(), r.ms.median);
    }
}

// ---------------------------------------------------------------- output --

std::string first_line_of(const std::string& path, const std::string& key) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        const auto at = line.find(key);
        if (at == std::string::npos) continue;
        if (key == "model name") {
            const auto colon = line.find(':');
            return colon == std::string::npos ? line : line.substr(line.find_first_not_of(" \t", colon + 1));
        }
        return line;
    }
    return "";
}

// "580.159.04" from /proc/driver/nvidia/version, or "unknown". The words
// between "Kernel Module" and the version differ between the proprietary and
// the open module ("... Open Kernel Module for x86_64  580.159.04  Release
// Build ..."), so this takes the first word after it that starts with a digit.
std::string nvidia_driver_version() {
    const std::string line = first_line_of("/proc/driver/nvidia/version", "Kernel Module");
    std::istringstream words(line.substr(std::min(line.size(), line.find("Kernel Module") + 13)));
    std::string word;
    while (words >> word) {
        if (std::isdigit(static_cast<unsigned char>(word[0])) && word.find('.') != std::string::npos) return word;
    }
    return "unknown";
}

std::string cuda_version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

json device_json(qmarg::Device device) {
    json d;
    d["kind"] = qmarg::to_string(device);
    if (device == qmarg::Device::Gpu) {
        const qmarg::GpuInfo info = qmarg::gpu_info();
        d["name"] = info.name;
        d["compute_capability"] =
            std::to_string(info.compute_capability_major) + "." + std::to_string(info.compute_capability_minor);
        d["multiprocessors"] = info.multiprocessors;
        d["memory_bytes"] = info.global_memory_bytes;
        d["l2_cache_bytes"] = info.l2_cache_bytes;
        d["driver_version"] = nvidia_driver_version();
        d["cuda_driver_version"] = cuda_version_text(info.driver_version);
        d["cuda_runtime_version"] = cuda_version_text(info.runtime_version);
        const auto or_null = [](int value) { return value > 0 ? json(value) : json(nullptr); };
        d["clock_rate_khz"] = or_null(info.clock_rate_khz);
        d["memory_clock_rate_khz"] = or_null(info.memory_clock_rate_khz);
        d["memory_bus_width_bits"] = or_null(info.memory_bus_width_bits);
    } else {
        const std::string model = first_line_of("/proc/cpuinfo", "model name");
        d["name"] = model.empty() ? "unknown CPU" : model;
        d["hardware_threads"] = std::thread::hardware_concurrency();
    }
    return d;
}

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

json stats_json(json j, const RunStats& ms) {
    j["median_ms"] = ms.median;
    j["min_ms"] = ms.min;
    j["max_ms"] = ms.max;
    j["p10_ms"] = ms.p10;
    j["p90_ms"] = ms.p90;
    return j;
}

// `complete` is false in the copies written after each state, so that a run
// cut short leaves what it measured, marked as partial.
json sweep_json(const Sweep& sweep, bool complete) {
    const BenchOptions& o = sweep.options;
    json j;
    j["command"] = "qmarg bench marginal";
    j["complete"] = complete;
    j["qmarg_version"] = QMARG_VERSION;
    j["git_commit"] = QMARG_GIT_COMMIT;
    j["host"] = host_name();
    j["date"] = utc_now();
    j["device"] = device_json(sweep.device);
    json options;
    options["device"] = o.device;
    options["n"] = o.ns;
    options["k"] = o.ks;
    options["layouts"] = o.layouts;
    options["strategies"] = o.strategies;
    options["precisions"] = o.precisions;
    options["runs"] = o.runs;
    options["warmup"] = o.warmup;
    options["cell_seconds"] = o.cell_seconds;
    options["min_seconds"] = o.min_seconds;
    options["rounds"] = o.rounds;
    options["seed"] = o.seed;
    j["options"] = options;
    j["skipped_n"] = sweep.skipped_ns;
    json rooflines = json::array();
    for (const Roofline& r : sweep.rooflines) {
        json row;
        row["precision"] = r.precision;
        row["n"] = r.n;
        row["state_seed"] = r.state_seed;
        row["state_bytes"] = r.state_bytes;
        row["runs"] = r.runs;
        row["warmup"] = r.warmup;
        row["rounds"] = r.rounds;
        row = stats_json(row, r.ms);
        row["gb_per_s"] = r.gb_per_s;
        rooflines.push_back(row);
    }
    j["rooflines"] = rooflines;
    json records = json::array();
    for (const Record& r : sweep.records) {
        const bool ran = r.skipped_reason.empty();
        json row;
        row["precision"] = r.precision;
        row["device"] = qmarg::to_string(sweep.device);
        row["n"] = r.n;
        row["k"] = r.k;
        row["layout"] = r.layout;
        row["qubits"] = r.qubits;
        row["strategy"] = r.strategy;
        row["state_seed"] = r.state_seed;
        row["state_bytes"] = r.state_bytes;
        row["runs"] = r.runs;
        row["warmup"] = r.warmup;
        row["rounds"] = r.rounds;
        if (ran) {
            row = stats_json(row, r.ms);
        } else {
            for (const char* key : {"median_ms", "min_ms", "max_ms", "p10_ms", "p90_ms"}) row[key] = nullptr;
        }
        row["gb_per_s"] = ran ? json(r.gb_per_s) : json(nullptr);
        row["roofline_gb_per_s"] = r.roofline_gb_per_s;
        row["roofline_ratio"] = ran ? json(r.gb_per_s / r.roofline_gb_per_s) : json(nullptr);
        row["checked_against"] = ran ? json(r.checked_against) : json(nullptr);
        row["skipped_reason"] = ran ? json(nullptr) : json(r.skipped_reason);
        records.push_back(row);
    }
    j["records"] = records;
    return j;
}

void print_table(const Sweep& sweep, std::FILE* out) {
    std::fprintf(out, "%-9s %3s %3s %-10s %-16s %5s %11s %10s %9s %6s  %s\n", "precision", "n", "k", "layout",
                 "strategy", "runs", "median_ms", "GB/s", "roofline", "ratio", "checked against");
    for (const Record& r : sweep.records) {
        std::fprintf(out, "%-9s %3d %3d %-10s %-16s ", r.precision.c_str(), r.n, r.k, r.layout.c_str(),
                     r.strategy.c_str());
        if (!r.skipped_reason.empty()) {
            std::fprintf(out, "skipped: %s\n", r.skipped_reason.c_str());
            continue;
        }
        std::fprintf(out, "%5d %11.4f %10.1f %9.1f %6.3f  %s\n", r.runs, r.ms.median, r.gb_per_s,
                     r.roofline_gb_per_s, r.gb_per_s / r.roofline_gb_per_s, r.checked_against.c_str());
    }
}

// ------------------------------------------------------------- the sweep --

// Fills in device-dependent defaults and rejects what cannot run.
void resolve_options(Sweep& sweep, bool ns_given) {
    BenchOptions& o = sweep.options;
    const bool on_gpu = sweep.device == qmarg::Device::Gpu;
    if (o.strategies.empty()) o.strategies = on_gpu ? kGpuStrategies : std::vector<std::string>{"Auto"};
    for (const std::string& s : o.strategies) {
        parse_strategy(s);
        if (!on_gpu && s != "Auto") {
            throw qmarg::Error("--strategies: " + s +
                               " is a GPU strategy; the CPU has one algorithm, benchmarked as Auto");
        }
    }
    if (!ns_given) o.ns = on_gpu ? std::vector<int>{20, 22, 24, 26, 28, 30} : std::vector<int>{16, 18, 20, 22, 24};
    for (int n : o.ns) {
        if (n < 1 || n > qmarg::StateVector<double>::kMaxQubits) {
            throw qmarg::Error("--n: " + std::to_string(n) + " is not a qubit count in 1.." +
                               std::to_string(qmarg::StateVector<double>::kMaxQubits));
        }
    }
    for (int k : o.ks) {
        if (k < 1 || k >= qmarg::StateVector<double>::kMaxQubits) {
            throw qmarg::Error("--k: " + std::to_string(k) + " is not a marginal size in 1.." +
                               std::to_string(qmarg::StateVector<double>::kMaxQubits - 1));
        }
    }
    if (o.ns.empty() || o.ks.empty() || o.layouts.empty() || o.precisions.empty()) {
        throw qmarg::Error("--n, --k, --layouts and --precision each need at least one value");
    }
    const int smallest_k = *std::min_element(o.ks.begin(), o.ks.end());
    const int largest_n = *std::max_element(o.ns.begin(), o.ns.end());
    if (smallest_k >= largest_n) {
        throw qmarg::Error("no case to run: every --k is >= every --n (k must be < n; largest n is " +
                           std::to_string(largest_n) + ")");
    }

    // Sizes whose state fits twice over (the state, and as much again for a
    // strategy's temporaries or the CPU copy used for checking).
    for (const std::string& precision : o.precisions) {
        const std::size_t amplitude = precision == "float" ? 8 : 16;
        const int fits = qmarg::max_qubits(sweep.device, 2 * amplitude);
        std::vector<int>& ns = sweep.ns_by_precision[precision];
        for (int n : o.ns) {
            if (n <= fits) {
                ns.push_back(n);
                continue;
            }
            if (ns_given) {
                throw qmarg::Error("--n " + std::to_string(n) + ": a " + precision + " state of " + std::to_string(n) +
                                   " qubits needs " + std::to_string(qmarg::state_bytes(n, amplitude) >> 20) +
                                   " MiB, twice over, and the " + qmarg::to_string(sweep.device) +
                                   " has room for at most " + std::to_string(fits) + " qubits");
            }
            if (std::find(sweep.skipped_ns.begin(), sweep.skipped_ns.end(), n) == sweep.skipped_ns.end())
                sweep.skipped_ns.push_back(n);
        }
        for (int n : ns) {
            for (int k : o.ks) sweep.total_cases += k < n ? o.layouts.size() * o.strategies.size() : 0;
        }
    }
    if (!sweep.skipped_ns.empty() && !o.quiet) {
        std::string list;
        for (int n : sweep.skipped_ns) list += (list.empty() ? "" : ",") + std::to_string(n);
        std::fprintf(stderr, "qmarg: bench: skipping n = %s: the state does not fit twice in the %s's memory\n",
                     list.c_str(), qmarg::to_string(sweep.device));
    }
}

void run_bench_marginal(BenchOptions options, bool ns_given) {
    Sweep sweep;
    std::string note;
    sweep.device = choose_device(options.device, note);
    if (!options.seed_given) options.seed = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
    sweep.options = options;
    resolve_options(sweep, ns_given);
    const auto write_out = [&](const json& j) {
        if (options.out.empty()) return;
        std::ofstream file(options.out);
        file << j.dump(2) << "\n";
        if (!file) throw qmarg::Error("--out: could not write " + options.out);
    };
    write_out(sweep_json(sweep, false));  // fails early on an unwritable --out
    if (!options.quiet) {
        std::fprintf(stderr, "qmarg: bench marginal on %s: %zu cases, seed %llu\n", note.c_str(), sweep.total_cases,
                     static_cast<unsigned long long>(sweep.options.seed));
    }
    for (const std::string& precision : sweep.options.precisions) {
        for (int n : sweep.ns_by_precision[precision]) {
            if (precision == "float") {
                bench_state<float>(sweep, precision, n);
            } else {
                bench_state<double>(sweep, precision, n);
            }
            write_out(sweep_json(sweep, false));
        }
    }
    const json j = sweep_json(sweep, true);
    write_out(j);
    if (!options.out.empty() && !options.quiet) std::fprintf(stderr, "qmarg: bench: wrote %s\n", options.out.c_str());
    if (options.format == "json") {
        std::printf("%s\n", j.dump(2).c_str());
    } else {
        print_table(sweep, stdout);
    }
}

}  // namespace

void add_bench_command(CLI::App& app) {
    CLI::App* bench = app.add_subcommand("bench", "Benchmark library operations against a read roofline");
    bench->require_subcommand(1);
    auto options = std::make_shared<BenchOptions>();
    auto ns_given = std::make_shared<bool>(false);
    CLI::App* cmd = bench->add_subcommand(
        "marginal", "Time marginal probabilities over n, k, qubit layouts, strategies and precisions (checked first)");
    cmd->add_option_function<std::vector<int>>(
           "--n",
           [options, ns_given](const std::vector<int>& ns) {
               options->ns = ns;
               *ns_given = true;
           },
           "State sizes in qubits (default: 20,22,...,30 on the GPU, 16,18,...,24 on the CPU, without those that "
           "do not fit)")
        ->delimiter(',');
    cmd->add_option("--k", options->ks, "Marginal sizes; only k < n run")->delimiter(',')->capture_default_str();
    cmd->add_option("--layouts", options->layouts, "Qubit layouts: low, high, scattered, descending, random")
        ->delimiter(',')
        ->check(CLI::IsMember(kLayouts))
        ->capture_default_str();
    cmd->add_option("--strategies", options->strategies,
                    listed(kGpuStrategies, false) + " (default: all on the GPU, Auto on the CPU)")
        ->delimiter(',');
    cmd->add_option("--precision", options->precisions, "double, float or both")
        ->delimiter(',')
        ->check(CLI::IsMember({"double", "float"}))
        ->capture_default_str();
    cmd->add_option("--device", options->device, "auto (the GPU when usable), cpu or gpu")
        ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
        ->capture_default_str();
    cmd->add_option("--runs", options->runs, "Timed runs per case (unless --cell-seconds allows fewer)")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    cmd->add_option("--warmup", options->warmup, "Untimed runs before the timed ones")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    cmd->add_option("--rounds", options->rounds,
                    "Rounds in which a state's roofline and cases are timed, each with a share of their runs, "
                    "after all its cases were checked (1: each case in one stretch)")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    cmd->add_option("--cell-seconds", options->cell_seconds,
                    "Time budget of a slow case: one whose run takes longer than this / --runs gets "
                    "floor(this / run time) runs, at least 3 (0, the default: always --runs)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd->add_option("--min-seconds", options->min_seconds,
                    "Least timed run time of a fast case: one whose --runs runs take less is timed again, those "
                    "runs becoming warm-up, with enough runs to fill this (0: always --runs)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd->add_option_function<std::uint64_t>(
        "--seed",
        [options](const std::uint64_t& seed) {
            options->seed = seed;
            options->seed_given = true;
        },
        "Seed of the random states and of the random layout (default: random, printed and recorded)");
    cmd->add_option("--out", options->out, "Also write the results as JSON to this file");
    cmd->add_option("--format", options->format, "stdout: table or json")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
    cmd->add_flag("-q,--quiet", options->quiet, "Print nothing on stderr but errors");
    cmd->callback([options, ns_given]() { run_bench_marginal(*options, *ns_given); });
}

}  // namespace qmarg_cli
