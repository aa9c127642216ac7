// The seed's marginal comparison on our GPU: for each n, k and qubit layout
// (low = 0..k-1, high = n-k..n-1, scattered = spread evenly over 0..n-1,
// descending = n-1 down to n-k, random = k qubits in a seeded random order), the
// strategies GlobalAtomic (seed B), SharedPrivatized (seed C), Partitioned
// (seed A), BinStationary (qmarg's engine) and Auto, next to a read-roofline
// kernel measured in the same run on the same state. Counters: GB/s of state bytes read (state.bytes() / median
// time) and the ratio to the roofline.
//
// How it measures (DESIGN.md, "Measuring"):
//  - a fresh random state per n (never zeros); its seed is in the JSON context;
//  - every cell is checked before it is timed: against the CPU reference for
//    n <= 24, above that against another strategy's result for the same case
//    (one that passed its own check), or the CPU reference where no other
//    strategy runs the case. A wrong answer fails the cell (SkipWithError
//    "WRONG ANSWER ...") and the binary exits with status 2, as it does when a
//    cell fails with a CUDA error;
//  - CUDA-event timing of the library call (output kept on the device), the
//    median of --qmarg_runs (20) timed runs after warm-up;
//  - states that fit in L2 several times over are cloned and the runs rotate
//    over the copies, so each run reads the state from memory, not from L2.
// Beyond single marginals: "lists/.../all_single_qubits" times all n
// single-qubit marginals in one call against one plain marginal, and
// "conditional/.../k:K/condition:high|middle|low" a conditional marginal given
// two qubits (GB/s of the quarter of the state it reads, and of the 64-byte
// pieces that hold it), and "outcome/.../of:high|middle|low" the probability
// of one outcome of those two qubits; all checked first.
//
// k close to n: "near_n/.../k:K/LAYOUT/PATH" for k = n .. n-4 (low,
// scattered, descending, random), BinStationary and its streaming and
// transposed paths apart, with "roofline_ratio_io" counting the output bytes
// written as well as the state bytes read (see near_n_cell).
//
// Cells a strategy cannot run (bins beyond shared memory, partitions beyond free
// memory) are reported as "not run: <the library's message>".
//
// Slow cells: GlobalAtomic on few live bins and Partitioned run at 9 to 40 GB/s
// at n = 30 (1 to 2 s per run), so 20 runs of each would take the default sweep
// far past its few minutes. A cell whose checking run took longer than
// --qmarg_cell_seconds / --qmarg_runs (2 s / 20) gets floor(cell_seconds / time)
// runs instead, at least --qmarg_min_runs (3); its "runs" counter says how many.
// On an H100 that touches only GlobalAtomic where few bins are live and
// Partitioned, at n >= 26. --qmarg_cell_seconds=0 times every cell
// --qmarg_runs times.
//
// Fast cells: 20 runs of a 20-qubit marginal take 0.2 ms, and one disturbance
// of a few milliseconds would move the whole cell. A cell (or roofline) whose
// runs fill less than --qmarg_min_seconds (0.05 s) counts them as warm-up and
// is timed again with more runs, at least twice as many each time, until they
// fill it (qmarg::time_until_filled, the rule of `qmarg bench marginal
// --min-seconds`); "runs" says how many were timed.
//
// Options (besides Google Benchmark's own, e.g. --benchmark_filter,
// --benchmark_out=FILE --benchmark_out_format=json):
//   --qmarg_precision=double|float  the state's precision (default double, or
//                                   $QMARG_BENCH_PRECISION)
//   --qmarg_n=20,22,24,26,28,30     state sizes (each capped by free GPU memory)
//   --qmarg_k=1,2,5,10,15,20        marginal sizes (only k < n are run)
//   --qmarg_runs=20 --qmarg_min_runs=3 --qmarg_cell_seconds=2 --qmarg_min_seconds=0.05
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "backend/gpu.hpp"
#include "bench_support.cuh"
#include "format.hpp"
#include "marginal_common.cuh"
#include "marginal_plan.cuh"
#include "marginal_transpose_plan.hpp"
#include "qmarg/qmarg.hpp"

namespace {

using qmarg::Device;
using qmarg::DeviceBuffer;
using qmarg::MarginalOptions;
using qmarg::MarginalStrategy;
using qmarg::Qubits;
using qmarg::StateVector;

// ---------------------------------------------------------------- options --

struct Options {
    bool single = false;
    std::vector<int> ns = {20, 22, 24, 26, 28, 30};
    std::vector<int> ks = {1, 2, 5, 10, 15, 20};
    int runs = 20;
    int min_runs = 3;
    double cell_seconds = 2.0;
    double min_seconds = 0.05;
};

Options g_options;
int g_wrong_answers = 0;
int g_failed_cells = 0;  // CUDA errors and the like: the cell has no result
constexpr int kCpuReferenceMaxQubits = 24;

std::vector<int> parse_list(const std::string& text, const std::string& flag) {
    std::vector<int> values;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ',')) {
        char* end = nullptr;
        const long value = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || value < 1 || value > qmarg::StateVector<double>::kMaxQubits) {
            throw qmarg::Error(flag + ": '" + item + "' is not a qubit count in 1..58");
        }
        values.push_back(static_cast<int>(value));
    }
    return values;
}

// Takes the --qmarg_* flags out of argv (Google Benchmark rejects flags it does not know).
void parse_options(int* argc, char** argv) {
    if (const char* precision = std::getenv("QMARG_BENCH_PRECISION"))
        g_options.single = std::string(precision) == "float";
    int kept = 1;
    for (int i = 1; i < *argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--qmarg_", 0) != 0) {
            argv[kept++] = argv[i];
            continue;
        }
        const std::size_t eq = arg.find('=');
        const std::string flag = arg.substr(0, eq);
        const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
        if (flag == "--qmarg_precision" && (value == "float" || value == "double")) {
            g_options.single = value == "float";
        } else if (flag == "--qmarg_n") {
            g_options.ns = parse_list(value, flag);
        } else if (flag == "--qmarg_k") {
            g_options.ks = parse_list(value, flag);
        } else if (flag == "--qmarg_runs" && std::atoi(value.c_str()) >= 1) {
            g_options.runs = std::atoi(value.c_str());
        } else if (flag == "--qmarg_min_runs" && std::atoi(value.c_str()) >= 1) {
            g_options.min_runs = std::atoi(value.c_str());
        } else if (flag == "--qmarg_cell_seconds" && std::atof(value.c_str()) >= 0) {
            g_options.cell_seconds = std::atof(value.c_str());
        } else if (flag == "--qmarg_min_seconds" && std::atof(value.c_str()) >= 0) {
            g_options.min_seconds = std::atof(value.c_str());
        } else {
            throw qmarg::Error("unknown or invalid option " + arg +
                               " (see the first comment of bench/marginal_bench.cu)");
        }
    }
    *argc = kept;
    argv[kept] = nullptr;
}

// The times of `runs` runs of `work` after `warmup`, timed again with more
// runs while they fill less than --qmarg_min_seconds (qmarg::time_until_filled).
std::vector<double> filled_times(const std::function<void()>& work, int runs, int warmup = 3) {
    return qmarg::time_until_filled([&](int w, int r) { return qmarg::bench::time_runs(work, r, w); },
                                    g_options.min_seconds, qmarg::kMaxTimedRuns, warmup, runs);
}

// ---------------------------------------------------------------- layouts --

enum class Layout { Low, High, Scattered, Descending, Random };

const char* to_string(Layout layout) {
    switch (layout) {
        case Layout::Low: return "low";
        case Layout::High: return "high";
        case Layout::Scattered: return "scattered";
        case Layout::Descending: return "descending";
        case Layout::Random: return "random";
    }
    return "?";
}

Qubits layout_qubits(Layout layout, int n, int k) {
    if (layout == Layout::Random) {
        // k distinct qubits in random order, the same for every run of the
        // benchmark (seeded by n and k) so that results files are comparable.
        Qubits all(n);
        for (int q = 0; q < n; ++q) all[q] = q;
        std::mt19937_64 rng(0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(n) << 8) ^ static_cast<std::uint64_t>(k));
        std::shuffle(all.begin(), all.end(), rng);
        return Qubits(all.begin(), all.begin() + k);
    }
    Qubits qubits(k);
    for (int j = 0; j < k; ++j) {
        switch (layout) {
            case Layout::Low: qubits[j] = j; break;
            case Layout::High: qubits[j] = n - k + j; break;
            case Layout::Scattered:
                qubits[j] = k == 1 ? n / 2 : static_cast<int>(static_cast<long>(j) * (n - 1) / (k - 1));
                break;
            case Layout::Descending: qubits[j] = n - 1 - j; break;
            case Layout::Random: break;  // handled above
        }
    }
    return qubits;
}

std::string to_text(const Qubits& qubits) {
    std::string text = "{";
    for (std::size_t j = 0; j < qubits.size(); ++j) text += (j ? "," : "") + std::to_string(qubits[j]);
    return text + "}";
}

// -------------------------------------------------------------- workspace --

// Everything for the current n: the state (and its copies when it fits in L2),
// its CPU copy (made on first need), the roofline, and the checked results of
// each case by strategy, which later cells are compared against.
template <class Real>
class Workspace {
public:
    static Workspace& get() {
        static Workspace workspace;
        return workspace;
    }

    static std::map<int, std::uint64_t>& seeds() {
        static std::map<int, std::uint64_t> by_n;
        return by_n;
    }

    void prepare(int n) {
        if (n == n_) return;
        release();
        states_.emplace_back(n, Device::Gpu);
        states_[0].set_random_state(seeds().at(n));
        // Enough copies that consecutive runs never find their state in L2.
        const std::size_t l2 = qmarg::gpu_info().l2_cache_bytes;
        const std::size_t bytes = states_[0].bytes();
        const std::size_t copies = std::min<std::size_t>(64, bytes < 4 * l2 ? (4 * l2 + bytes - 1) / bytes : 1);
        for (std::size_t i = 1; i < copies; ++i) states_.push_back(states_[0].clone());
        n_ = n;
    }

    // Frees everything on the GPU (before the CUDA runtime shuts down).
    void release() {
        out_ = DeviceBuffer<double>();
        sink_ = DeviceBuffer<double>();
        states_.clear();
        cpu_.reset();
        results_.clear();
        roofline_ms_ = 0;
        n_ = -1;
    }

    int n() const { return n_; }
    const StateVector<Real>& state(std::size_t i = 0) const { return states_[i % states_.size()]; }
    std::size_t copies() const { return states_.size(); }
    DeviceBuffer<double>& out() { return out_; }

    const StateVector<Real>& cpu_state() {
        if (!cpu_) cpu_ = std::make_unique<StateVector<Real>>(states_[0].to(Device::Cpu));
        return *cpu_;
    }

    // Median read-roofline time for this state (bench_support's read kernel,
    // rotating over the copies like the cells do), measured once per n.
    double roofline_ms() {
        if (roofline_ms_ == 0) {
            if (sink_.size() == 0) sink_.resize(1);
            std::size_t next = 0;
            roofline_ms_ = qmarg::bench::median(filled_times(
                [&] { qmarg::gpu::launch_read_roofline(state(next++).data(), states_[0].bytes(), sink_.data()); },
                30));
        }
        return roofline_ms_;
    }

    // Checked results of one case, by strategy name ("CPU" for the reference).
    std::map<std::string, std::vector<double>>& results(int k, Layout layout) { return results_[{k, layout}]; }

private:
    int n_ = -1;
    std::vector<StateVector<Real>> states_;
    std::unique_ptr<StateVector<Real>> cpu_;
    std::map<std::pair<int, Layout>, std::map<std::string, std::vector<double>>> results_;
    DeviceBuffer<double> out_;
    DeviceBuffer<double> sink_;
    double roofline_ms_ = 0;
};

// A reference for checking `strategy` on this case (see the first comment),
// and the name of where it came from.
template <class Real>
std::pair<std::vector<double>, std::string> reference(Workspace<Real>& ws, int k, Layout layout, const Qubits& qubits,
                                                      MarginalStrategy strategy) {
    auto& known = ws.results(k, layout);
    const std::string excluded = qmarg::to_string(strategy);
    const auto cpu = [&] {
        if (!known.count("CPU")) known["CPU"] = qmarg::marginal_probabilities(ws.cpu_state(), qubits);
        return std::make_pair(known["CPU"], std::string("CPU"));
    };
    if (ws.n() <= kCpuReferenceMaxQubits) return cpu();
    for (const auto& entry : known) {
        if (entry.first != excluded) return {entry.second, entry.first};
    }
    for (MarginalStrategy other :
         {MarginalStrategy::BinStationary, MarginalStrategy::SharedPrivatized, MarginalStrategy::Partitioned,
          MarginalStrategy::GlobalAtomic}) {
        if (other == strategy) continue;
        try {
            return {qmarg::marginal_probabilities(ws.state(), qubits, MarginalOptions{other}), qmarg::to_string(other)};
        } catch (const qmarg::CudaError&) {
            throw;
        } catch (const qmarg::Error&) {
            // This strategy cannot run the case either; try the next.
        }
    }
    return cpu();
}

// ------------------------------------------------------------------ cells --

// Timed runs of a cell whose checking run took `check_seconds`: --qmarg_runs,
// or fewer (at least --qmarg_min_runs) where --qmarg_cell_seconds allows less.
int runs_for_cell(double check_seconds) {
    return qmarg::timed_run_count(g_options.runs, check_seconds, g_options.cell_seconds, g_options.min_runs);
}

// Reports a timed cell's median as its iteration time, and the counters every
// timed cell carries; a cell that failed reports its error alone.
void finish_cell(benchmark::State& st, int n, int k, double median_ms, const std::vector<double>& times,
                 const std::string& label) {
    for (auto _ : st) st.SetIterationTime(median_ms * 1e-3);
    if (st.error_occurred()) return;
    st.counters["n"] = n;
    st.counters["k"] = k;
    st.counters["runs"] = static_cast<double>(times.size());
    st.counters["ms_min"] = *std::min_element(times.begin(), times.end());
    st.counters["ms_max"] = *std::max_element(times.begin(), times.end());
    st.SetLabel(label);
}

void set_bandwidth_counters(benchmark::State& st, double ms, double roofline_ms, std::size_t bytes) {
    const double gbps = static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
    const double roofline_gbps = static_cast<double>(bytes) / (roofline_ms * 1e-3) / 1e9;
    st.counters["GB/s"] = gbps;
    st.counters["roofline_GB/s"] = roofline_gbps;
    st.counters["roofline_ratio"] = gbps / roofline_gbps;
}

template <class Real>
void roofline_cell(benchmark::State& st, int n) {
    auto& ws = Workspace<Real>::get();
    double ms = 0;
    try {
        ws.prepare(n);
        ms = ws.roofline_ms();
    } catch (const std::exception& e) {
        ++g_failed_cells;
        st.SkipWithError(e.what());
    }
    for (auto _ : st) st.SetIterationTime(ms * 1e-3);
    if (st.error_occurred()) return;
    set_bandwidth_counters(st, ms, ms, ws.state().bytes());
    st.counters["n"] = n;
    st.counters["copies"] = static_cast<double>(ws.copies());
    st.SetLabel("read roofline, n=" + std::to_string(n));
}

template <class Real>
void marginal_cell(benchmark::State& st, int n, int k, Layout layout, MarginalStrategy strategy) {
    auto& ws = Workspace<Real>::get();
    const Qubits qubits = layout_qubits(layout, n, k);
    const MarginalOptions options{strategy};
    std::string label =
        "n=" + std::to_string(n) + " k=" + std::to_string(k) + " " + to_string(layout) + " " + to_text(qubits);
    double median_ms = 0;
    std::vector<double> times;
    try {
        ws.prepare(n);
        const double roofline_ms = ws.roofline_ms();
        MarginalStrategy runs_as = strategy;
        if (strategy == MarginalStrategy::Auto) {
            runs_as = qmarg::gpu::plan_marginal(n, qubits, qmarg::gpu::query_marginal_device_limits());
            label += std::string(" -> ") + qmarg::to_string(runs_as);
        }

        // The checking run, which also warms up and tells how slow the cell is.
        std::vector<double> result;
        const auto start = std::chrono::steady_clock::now();
        try {
            qmarg::marginal_probabilities(ws.state(), qubits, ws.out(), options);
            result = ws.out().to_host();
        } catch (const qmarg::CudaError&) {
            throw;
        } catch (const qmarg::Error& e) {
            st.SetLabel("not run: " + std::string(e.what()));
            st.SkipWithError(("not run: " + std::string(e.what())).c_str());
            return;
        }
        const double check_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

        const auto ref = reference(ws, k, layout, qubits, runs_as);
        const std::string mismatch = qmarg::compare_marginals(result, ref.first, qmarg::marginal_check_tolerance<Real>());
        if (!mismatch.empty()) {
            ++g_wrong_answers;
            const std::string message = std::string("WRONG ANSWER from ") + qmarg::to_string(strategy) + " against " +
                                        ref.second + " (" + label + "): " + mismatch;
            std::fprintf(stderr, "%s\n", message.c_str());
            st.SkipWithError(message.c_str());
            return;
        }
        if (strategy != MarginalStrategy::Auto) ws.results(k, layout)[qmarg::to_string(strategy)] = std::move(result);
        label += " checked against " + ref.second;

        const int runs = runs_for_cell(check_seconds);
        const int warmup = check_seconds < 0.05 ? 2 : 0;  // the checking run has warmed up a slow cell
        std::size_t next = 0;
        times = filled_times(
            [&] { qmarg::marginal_probabilities(ws.state(next++), qubits, ws.out(), options); }, runs, warmup);
        median_ms = qmarg::bench::median(times);
        set_bandwidth_counters(st, median_ms, roofline_ms, ws.state().bytes());
    } catch (const std::exception& e) {
        ++g_failed_cells;
        st.SkipWithError(e.what());
    }
    finish_cell(st, n, k, median_ms, times, label);
}

// All n single-qubit marginals in one call (gpu::marginal_probabilities_of_lists,
// results kept on the device), next to one plain marginal ({n/2}, BinStationary)
// timed in the same cell: "vs_one_marginal" is the time of all n over the time
// of one. Checked first against one BinStationary marginal per qubit.
template <class Real>
void all_single_qubits_cell(benchmark::State& st, int n) {
    auto& ws = Workspace<Real>::get();
    std::vector<Qubits> lists;
    for (int q = 0; q < n; ++q) lists.push_back({q});
    double median_ms = 0, one_ms = 0;
    std::vector<double> times;
    try {
        ws.prepare(n);
        const double roofline_ms = ws.roofline_ms();
        ws.out().resize(2 * static_cast<std::size_t>(n));
        qmarg::gpu::marginal_probabilities_of_lists(ws.state().data(), n, lists, ws.out().data());
        const std::vector<double> result = ws.out().to_host();
        for (int q = 0; q < n; ++q) {
            const std::vector<double> want =
                qmarg::marginal_probabilities(ws.state(), {q}, MarginalOptions{MarginalStrategy::BinStationary});
            const std::string mismatch =
                qmarg::compare_marginals({result[2 * q], result[2 * q + 1]}, want, qmarg::marginal_check_tolerance<Real>());
            if (!mismatch.empty()) {
                ++g_wrong_answers;
                const std::string message = "WRONG ANSWER from all single-qubit marginals, qubit " + std::to_string(q) +
                                            " against BinStationary: " + mismatch;
                std::fprintf(stderr, "%s\n", message.c_str());
                st.SkipWithError(message.c_str());
                return;
            }
        }
        std::size_t next = 0;
        times = filled_times(
            [&] {
                qmarg::gpu::marginal_probabilities_of_lists(ws.state(next++).data(), n, lists, ws.out().data());
            },
            g_options.runs);
        median_ms = qmarg::bench::median(times);
        const Qubits middle = {n / 2};
        one_ms = qmarg::bench::median(filled_times(
            [&] {
                qmarg::marginal_probabilities(ws.state(next++), middle, ws.out(),
                                              MarginalOptions{MarginalStrategy::BinStationary});
            },
            g_options.runs));
        set_bandwidth_counters(st, median_ms, roofline_ms, ws.state().bytes());
    } catch (const std::exception& e) {
        ++g_failed_cells;
        st.SkipWithError(e.what());
    }
    for (auto _ : st) st.SetIterationTime(median_ms * 1e-3);
    if (st.error_occurred()) return;
    st.counters["n"] = n;
    st.counters["k"] = 1;
    st.counters["lists"] = n;
    st.counters["runs"] = static_cast<double>(times.size());
    st.counters["one_marginal_ms"] = one_ms;
    st.counters["vs_one_marginal"] = median_ms / one_ms;
    st.SetLabel("n=" + std::to_string(n) + ": all " + std::to_string(n) +
                " single-qubit marginals in one call, checked against BinStationary per qubit");
}

// A conditional marginal of k low qubits given two qubits = {1, 0}: the two
// highest ("high": qubits 0..k-1 listed), two in the middle of the others
// ("middle": (n + k) / 2 and the qubit below it, qubits 0..k-1 listed) or the
// two lowest ("low": qubits 2..k+1 listed). It reads a quarter of the
// amplitudes: "roofline_ratio" counts those bytes, against the full-state read
// roofline. Memory delivers 64-byte pieces (4 double or 8 float amplitudes): on
// an H100, reading every other 32-byte sector of a double state took as long as
// reading all of it (a condition on qubit 1: 5.62 ms at n = 30, the read
// roofline 5.57). So "low" reads the whole state, and "roofline_ratio_touched"
// counts the bytes of the 64-byte pieces that hold a matching amplitude (all of
// the state for "low", a quarter elsewhere). Checked first against the
// BinStationary marginal of the listed and condition qubits, sliced at the
// condition's values.
enum class ConditionAt { High, Middle, Low };

const char* to_string(ConditionAt at) {
    switch (at) {
        case ConditionAt::High: return "high";
        case ConditionAt::Middle: return "middle";
        case ConditionAt::Low: return "low";
    }
    return "?";
}

// The two condition qubits of `at`, next to k listed qubits (0..k-1, or
// 2..k+1 for Low).
Qubits condition_qubits_at(ConditionAt at, int n, int k) {
    const int middle = (n + k) / 2;  // k + 2 < n: middle - 1 >= k
    return at == ConditionAt::High ? Qubits{n - 1, n - 2} : at == ConditionAt::Middle ? Qubits{middle, middle - 1}
                                                                                     : Qubits{0, 1};
}

// The share of the state's 64-byte pieces that hold an amplitude whose
// `fixed` qubits hold given values: qubits below piece_bits share a piece,
// so a condition on them leaves the piece to be read whole.
template <class Real>
double touched_fraction(const Qubits& fixed) {
    const int piece_bits = std::is_same<Real, float>::value ? 3 : 2;
    int piece_conditions = 0;
    for (int q : fixed) piece_conditions += q >= piece_bits ? 1 : 0;
    return 1.0 / static_cast<double>(1 << piece_conditions);
}

// A cell that reads the quarter of the state left by two fixed qubits
// (conditional_cell, outcome_cell): one call first, whose answer check()
// compares (a mismatch, empty where it is right), then the timed runs, with
// "roofline_ratio" on the quarter's bytes and "roofline_ratio_touched" on
// the 64-byte pieces that hold an amplitude `fixed` lets through.
// `out_bins`: what the call writes to ws.out() (0: nothing).
template <class Real, class Run, class Check>
void quarter_read_cell(benchmark::State& st, int n, int k, const Qubits& fixed, std::size_t out_bins,
                       const std::string& what, const std::string& label, Run run_once, Check check) {
    auto& ws = Workspace<Real>::get();
    double median_ms = 0;
    std::vector<double> times;
    try {
        ws.prepare(n);
        const double roofline_ms = ws.roofline_ms();
        if (out_bins != 0) ws.out().resize(out_bins);
        run_once(ws.state());
        const std::string mismatch = check();
        if (!mismatch.empty()) {
            ++g_wrong_answers;
            const std::string message = "WRONG ANSWER from " + what + " (" + label + "): " + mismatch;
            std::fprintf(stderr, "%s\n", message.c_str());
            st.SkipWithError(message.c_str());
            return;
        }
        std::size_t next = 0;
        times = filled_times([&] { run_once(ws.state(next++)); }, g_options.runs);
        median_ms = qmarg::bench::median(times);
        set_bandwidth_counters(st, median_ms, roofline_ms / 4, ws.state().bytes() / 4);
        st.counters["roofline_ratio_touched"] = roofline_ms * touched_fraction<Real>(fixed) / median_ms;
    } catch (const std::exception& e) {
        ++g_failed_cells;
        st.SkipWithError(e.what());
    }
    finish_cell(st, n, k, median_ms, times, label + ", checked against BinStationary");
}

template <class Real>
void conditional_cell(benchmark::State& st, int n, int k, ConditionAt at) {
    auto& ws = Workspace<Real>::get();
    Qubits qubits(k);
    for (int j = 0; j < k; ++j) qubits[j] = at == ConditionAt::Low ? j + 2 : j;
    const qmarg::Condition condition{condition_qubits_at(at, n, k), {1, 0}};
    const std::string label = "n=" + std::to_string(n) + " k=" + std::to_string(k) + " qubits " + to_text(qubits) +
                              " given " + to_text(condition.qubits) + " = {1,0}";
    const auto run_once = [&](const StateVector<Real>& state) {
        qmarg::gpu::conditional_marginal_probabilities(state.data(), n, qubits, condition.qubits, condition.values,
                                                       ws.out().data());
    };
    const auto check = [&] {
        const std::vector<double> result = ws.out().to_host();
        Qubits joint = qubits;
        joint.insert(joint.end(), condition.qubits.begin(), condition.qubits.end());
        const std::vector<double> full =
            qmarg::marginal_probabilities(ws.state(), joint, MarginalOptions{MarginalStrategy::BinStationary});
        const std::vector<double> want(full.begin() + (std::size_t{1} << k), full.begin() + (std::size_t{2} << k));
        return qmarg::compare_marginals(result, want, qmarg::marginal_check_tolerance<Real>());
    };
    quarter_read_cell<Real>(st, n, k, condition.qubits, std::size_t{1} << k, "the conditional marginal", label,
                            run_once, check);
}

// The probability of outcome 1 of two qubits (the first 1, the second 0),
// at the positions of conditional_cell's condition for k = 0: the same
// quarter of the state, the same counters. Each call returns its value to
// the host, and the time includes that copy. Checked first against bin 1 of
// the BinStationary marginal of the two qubits.
template <class Real>
void outcome_cell(benchmark::State& st, int n, ConditionAt at) {
    auto& ws = Workspace<Real>::get();
    const Qubits qubits = condition_qubits_at(at, n, 0);
    const std::string label = "n=" + std::to_string(n) + " outcome 1 of qubits " + to_text(qubits);
    double result = 0;
    const auto run_once = [&](const StateVector<Real>& state) {
        result = qmarg::gpu::outcome_probability(state.data(), n, qubits, 1);
    };
    const auto check = [&] {
        const std::vector<double> full =
            qmarg::marginal_probabilities(ws.state(), qubits, MarginalOptions{MarginalStrategy::BinStationary});
        return qmarg::compare_marginals({result}, {full[1]}, qmarg::marginal_check_tolerance<Real>());
    };
    quarter_read_cell<Real>(st, n, 2, qubits, 0, "the outcome probability", label, run_once, check);
}

// k close to n ("near_n/.../k:K/LAYOUT/PATH"): the output, 8 x 2^k bytes, is
// 1/32 to 1/2 of a double state's bytes (1/16 to all of a float state's), so
// besides the usual counters "roofline_ratio_io" counts the bytes read plus
// the bytes written: (state bytes + 8 x 2^k) / time over the read roofline's
// GB/s. PATH is BinStationary as the library runs it, or one of its two paths
// called alone: "streaming" (the engine's lanes write their own bins) and
// "transposed" (tiles staged in shared memory, k >= n - 4 only); see
// cuda/marginal_transpose.cu. Checked first against the CPU reference for
// n <= 24, otherwise against GlobalAtomic (which adds a bin's few amplitudes
// in another order); the reference of the last case is kept for the next path.
enum class NearPath { Library, Streaming, Transposed };

const char* to_string(NearPath path) {
    switch (path) {
        case NearPath::Library: return "BinStationary";
        case NearPath::Streaming: return "streaming";
        case NearPath::Transposed: return "transposed";
    }
    return "?";
}

template <class Real>
void near_n_cell(benchmark::State& st, int n, int k, Layout layout, NearPath path) {
    auto& ws = Workspace<Real>::get();
    const Qubits qubits = layout_qubits(layout, n, k);
    std::string label = "n=" + std::to_string(n) + " k=" + std::to_string(k) + " " + to_string(layout) + " " +
                        to_text(qubits) + " " + to_string(path);
    double median_ms = 0;
    std::vector<double> times;
    // The reference of the last (n, k, layout), shared by the cells of its paths.
    static std::tuple<int, int, Layout> reference_case{-1, -1, Layout::Low};
    static std::vector<double> reference_bins;
    static std::string reference_name;
    try {
        ws.prepare(n);
        const double roofline_ms = ws.roofline_ms();
        ws.out().resize(std::size_t{1} << k);
        // The paths alone load the state as the library would on this GPU.
        const qmarg::gpu::StateLoads loads =
            qmarg::gpu::state_loads_for_device(n, k, std::is_same<Real, float>::value);
        const auto run_once = [&](const StateVector<Real>& state) {
            switch (path) {
                case NearPath::Library:
                    qmarg::marginal_probabilities(state, qubits, ws.out(),
                                                  MarginalOptions{MarginalStrategy::BinStationary});
                    break;
                case NearPath::Streaming:
                    qmarg::gpu::marginal_probabilities_bin_stationary_streaming(state.data(), n, qubits, loads,
                                                                                ws.out().data());
                    break;
                case NearPath::Transposed:
                    qmarg::gpu::marginal_probabilities_transpose(state.data(), n, qubits, loads, ws.out().data());
                    break;
            }
        };
        const auto start = std::chrono::steady_clock::now();
        run_once(ws.state());
        std::vector<double> result = ws.out().to_host();
        const double check_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

        if (reference_case != std::make_tuple(n, k, layout)) {
            reference_bins.clear();
            reference_bins.shrink_to_fit();
            if (n <= kCpuReferenceMaxQubits) {
                reference_bins = qmarg::marginal_probabilities(ws.cpu_state(), qubits);
                reference_name = "CPU";
            } else {
                reference_bins = qmarg::marginal_probabilities(ws.state(), qubits,
                                                               MarginalOptions{MarginalStrategy::GlobalAtomic});
                reference_name = "GlobalAtomic";
            }
            reference_case = std::make_tuple(n, k, layout);
        }
        const std::string mismatch =
            qmarg::compare_marginals(result, reference_bins, qmarg::marginal_check_tolerance<Real>());
        result.clear();
        result.shrink_to_fit();
        if (!mismatch.empty()) {
            ++g_wrong_answers;
            const std::string message = std::string("WRONG ANSWER from ") + to_string(path) + " against " +
                                        reference_name + " (" + label + "): " + mismatch;
            std::fprintf(stderr, "%s\n", message.c_str());
            st.SkipWithError(message.c_str());
            return;
        }
        label += " checked against " + reference_name;

        const int runs = runs_for_cell(check_seconds);
        std::size_t next = 0;
        times = filled_times([&] { run_once(ws.state(next++)); }, runs, 2);
        median_ms = qmarg::bench::median(times);
        set_bandwidth_counters(st, median_ms, roofline_ms, ws.state().bytes());
        const double io_bytes = static_cast<double>(ws.state().bytes()) + std::ldexp(8.0, k);
        const double roofline_gbps = static_cast<double>(ws.state().bytes()) / (roofline_ms * 1e-3) / 1e9;
        st.counters["GB/s_io"] = io_bytes / (median_ms * 1e-3) / 1e9;
        st.counters["roofline_ratio_io"] = io_bytes / (median_ms * 1e-3) / 1e9 / roofline_gbps;
    } catch (const std::exception& e) {
        ++g_failed_cells;
        st.SkipWithError(e.what());
    }
    finish_cell(st, n, k, median_ms, times, label);
}

template <class Real>
void register_benchmarks(const std::vector<int>& ns) {
    const std::string precision = std::is_same<Real, float>::value ? "float" : "double";
    const MarginalStrategy strategies[] = {MarginalStrategy::GlobalAtomic, MarginalStrategy::SharedPrivatized,
                                           MarginalStrategy::Partitioned, MarginalStrategy::BinStationary,
                                           MarginalStrategy::BinStationaryAtomic, MarginalStrategy::Auto};
    for (int n : ns) {
        const std::string prefix = "/" + precision + "/n:" + std::to_string(n);
        benchmark::RegisterBenchmark(("roofline" + prefix).c_str(),
                                     [n](benchmark::State& st) { roofline_cell<Real>(st, n); })
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("lists" + prefix + "/all_single_qubits").c_str(),
                                     [n](benchmark::State& st) { all_single_qubits_cell<Real>(st, n); })
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
        for (ConditionAt at : {ConditionAt::High, ConditionAt::Middle, ConditionAt::Low}) {
            benchmark::RegisterBenchmark(("outcome" + prefix + "/of:" + to_string(at)).c_str(),
                                         [=](benchmark::State& st) { outcome_cell<Real>(st, n, at); })
                ->UseManualTime()
                ->Iterations(1)
                ->Unit(benchmark::kMillisecond);
        }
        for (int k : {1, 5, 10}) {
            if (k + 2 >= n) continue;
            for (ConditionAt at : {ConditionAt::High, ConditionAt::Middle, ConditionAt::Low}) {
                const std::string name =
                    "conditional" + prefix + "/k:" + std::to_string(k) + "/condition:" + to_string(at);
                benchmark::RegisterBenchmark(name.c_str(),
                                             [=](benchmark::State& st) { conditional_cell<Real>(st, n, k, at); })
                    ->UseManualTime()
                    ->Iterations(1)
                    ->Unit(benchmark::kMillisecond);
            }
        }
        for (int k = n; k >= std::max(1, n - qmarg::gpu::kTransposeMaxUnselected); --k) {
            for (Layout layout : {Layout::Low, Layout::Scattered, Layout::Descending, Layout::Random}) {
                for (NearPath path : {NearPath::Library, NearPath::Streaming, NearPath::Transposed}) {
                    if (path == NearPath::Transposed && !qmarg::gpu::transpose_applies(n, k)) continue;
                    const std::string name = "near_n" + prefix + "/k:" + std::to_string(k) + "/" + to_string(layout) +
                                             "/" + to_string(path);
                    benchmark::RegisterBenchmark(
                        name.c_str(), [=](benchmark::State& st) { near_n_cell<Real>(st, n, k, layout, path); })
                        ->UseManualTime()
                        ->Iterations(1)
                        ->Unit(benchmark::kMillisecond);
                }
            }
        }
        for (int k : g_options.ks) {
            if (k >= n) continue;
            for (Layout layout :
                 {Layout::Low, Layout::High, Layout::Scattered, Layout::Descending, Layout::Random}) {
                for (MarginalStrategy strategy : strategies) {
                    const std::string name = "marginal" + prefix + "/k:" + std::to_string(k) + "/" + to_string(layout) +
                                             "/" + qmarg::to_string(strategy);
                    benchmark::RegisterBenchmark(
                        name.c_str(), [=](benchmark::State& st) { marginal_cell<Real>(st, n, k, layout, strategy); })
                        ->UseManualTime()
                        ->Iterations(1)
                        ->Unit(benchmark::kMillisecond);
                }
            }
        }
    }
}

template <class Real>
int run(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    qmarg::GpuInfo info;
    if (!qmarg::bench::record_gpu("marginal_bench", &info)) return 1;
    benchmark::AddCustomContext("precision", std::is_same<Real, float>::value ? "float" : "double");
    benchmark::AddCustomContext("runs", std::to_string(g_options.runs) + " (at least " +
                                            std::to_string(g_options.min_runs) + " in cells slower than " +
                                            std::to_string(g_options.cell_seconds) + " s / " +
                                            std::to_string(g_options.runs) + "; more in cells whose runs fill less than " +
                                            std::to_string(g_options.min_seconds) + " s)");

    // Sizes whose state (with 1 GiB to spare) fits in free memory now.
    std::vector<int> ns;
    std::string skipped;
    std::random_device device;
    for (int n : g_options.ns) {
        const std::size_t bytes = qmarg::state_bytes(n, sizeof(std::complex<Real>));
        if (bytes + (std::size_t{1} << 30) > info.free_memory_bytes) {
            skipped += (skipped.empty() ? "" : ",") + std::to_string(n);
            continue;
        }
        ns.push_back(n);
        const std::uint64_t seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
        Workspace<Real>::seeds()[n] = seed;
        benchmark::AddCustomContext("seed_n" + std::to_string(n), std::to_string(seed));
    }
    if (!skipped.empty()) {
        benchmark::AddCustomContext("skipped_n", skipped + " (state does not fit in free GPU memory)");
        std::fprintf(stderr, "marginal_bench: skipping n = %s: the state does not fit in %s of free GPU memory\n",
                     skipped.c_str(), qmarg::detail::human_bytes(info.free_memory_bytes).c_str());
    }

    register_benchmarks<Real>(ns);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    Workspace<Real>::get().release();
    if (g_wrong_answers > 0 || g_failed_cells > 0) {
        std::fprintf(stderr, "marginal_bench: %d cell(s) gave a WRONG ANSWER, %d failed\n", g_wrong_answers,
                     g_failed_cells);
        return 2;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        parse_options(&argc, argv);
        return g_options.single ? run<float>(argc, argv) : run<double>(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "marginal_bench: %s\n", e.what());
        return 1;
    }
}
