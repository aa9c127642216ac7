// Benchmark timing (qmarg/benchmark.hpp): validation, then CUDA-event timing in
// cuda/benchmark.cu for a GPU state, or steady_clock timing here for a CPU one.
#include "qmarg/benchmark.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "backend/cpu.hpp"
#include "backend/gpu.hpp"
#include "qmarg/error.hpp"
#include "validation.hpp"

namespace qmarg {
namespace {

void check_counts(int warmup, int runs) {
    if (warmup < 0) throw Error("benchmark warm-up runs must be >= 0, got " + std::to_string(warmup));
    if (runs < 1) throw Error("benchmark timed runs must be >= 1, got " + std::to_string(runs));
}

template <class Work>
std::vector<double> time_on_host(Work work, int warmup, int runs) {
    for (int i = 0; i < warmup; ++i) work();
    std::vector<double> ms;
    ms.reserve(static_cast<std::size_t>(runs));
    for (int i = 0; i < runs; ++i) {
        const auto start = std::chrono::steady_clock::now();
        work();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return ms;
}

// Written by the CPU roofline so that its sum is used.
volatile double g_cpu_sink = 0;

}  // namespace

int timed_run_count(int runs, double check_seconds, double cell_seconds, int min_runs) {
    if (runs < 1) throw Error("benchmark timed runs must be >= 1, got " + std::to_string(runs));
    if (cell_seconds <= 0) return runs;
    const double affordable = std::floor(cell_seconds / std::max(check_seconds, 1e-9));
    return static_cast<int>(std::max<double>(std::min(min_runs, runs), std::min<double>(runs, affordable)));
}

std::vector<double> time_until_filled(const std::function<std::vector<double>(int, int)>& time, double min_seconds,
                                      int max_runs, int& warmup, int& runs) {
    check_counts(warmup, runs);
    std::vector<double> ms = time(warmup, runs);
    for (;;) {
        double total = 0;
        for (double t : ms) total += t * 1e-3;
        if (min_seconds <= 0 || total >= min_seconds || runs >= max_runs) return ms;
        const double per_run = std::max(total / runs, 1e-7);
        warmup += runs;
        runs = static_cast<int>(
            std::min<double>(max_runs, std::max<double>(2.0 * runs, std::ceil(min_seconds / per_run))));
        ms = time(0, runs);
    }
}

template <class Real>
std::vector<double> time_marginal_ms(const StateVector<Real>& state, const Qubits& qubits,
                                     const MarginalOptions& options, int warmup, int runs) {
    check_counts(warmup, runs);
    validation::check_qubit_list(qubits, state.num_qubits(), "marginal qubit list");
    if (state.device() == Device::Cpu) {
        // marginal_probabilities rejects a GPU strategy before the first run.
        return time_on_host([&] { (void)marginal_probabilities(state, qubits, options); }, warmup, runs);
    }
    QMARG_GPU_CALL(
        return gpu::time_marginal_ms(state.data(), state.num_qubits(), qubits, options.strategy, warmup, runs));
}

template <class Real>
std::vector<double> time_read_roofline_ms(const StateVector<Real>& state, int warmup, int runs) {
    check_counts(warmup, runs);
    if (state.device() == Device::Cpu) {
        return time_on_host([&] { g_cpu_sink = cpu::read_roofline(state.data(), state.size()); }, warmup, runs);
    }
    QMARG_GPU_CALL(return gpu::time_read_roofline_ms(state.data(), state.bytes(), warmup, runs));
}

template <class Real>
double read_roofline_ms(const StateVector<Real>& state, int runs) {
    std::vector<double> ms = time_read_roofline_ms(state, 3, runs);
    std::sort(ms.begin(), ms.end());
    const std::size_t n = ms.size();
    return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

template std::vector<double> time_marginal_ms(const StateVector<float>&, const Qubits&, const MarginalOptions&, int,
                                              int);
template std::vector<double> time_marginal_ms(const StateVector<double>&, const Qubits&, const MarginalOptions&, int,
                                              int);
template std::vector<double> time_read_roofline_ms(const StateVector<float>&, int, int);
template std::vector<double> time_read_roofline_ms(const StateVector<double>&, int, int);
template double read_roofline_ms(const StateVector<float>&, int);
template double read_roofline_ms(const StateVector<double>&, int);

std::string compare_marginals(const std::vector<double>& got, const std::vector<double>& want, double tolerance) {
    if (got.size() != want.size()) {
        return std::to_string(got.size()) + " bins, expected " + std::to_string(want.size());
    }
    const double floor = 1e-3 / static_cast<double>(want.size());
    for (std::size_t b = 0; b < want.size(); ++b) {
        if (!(std::abs(got[b] - want[b]) <= tolerance * std::max(std::abs(want[b]), floor))) {
            char text[160];
            std::snprintf(text, sizeof text, "bin %zu: got %.17g, expected %.17g", b, got[b], want[b]);
            return text;
        }
    }
    return "";
}

}  // namespace qmarg
