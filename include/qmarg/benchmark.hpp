// Timing of library operations for benchmarks, on either device, without CUDA
// types: the qmarg tool's `bench marginal` is built on these, so a program can
// measure what the library does exactly as the tool does.
//
// Each function returns the time of every timed run in milliseconds, in run
// order, after `warmup` untimed runs (warmup >= 0, runs >= 1):
//  - GPU: CUDA events recorded around each call on the default stream; results
//    stay in device memory (no copy to the host is timed). A state smaller than
//    four times the L2 cache would be read from L2 after the first run, so
//    before each run (outside the timed interval) a scratch buffer twice the
//    size of L2 is read, and every run reads the state from memory.
//  - CPU: std::chrono::steady_clock around each call. Caches are not flushed: a
//    state that fits in the CPU's caches is read from them, by the operation
//    and by the roofline alike.
//
// The read roofline is a plain read of the state's bytes, the most a
// bandwidth-bound operation on the state can hope for: on the GPU one
// grid-stride kernel of 32-byte loads (cuda/roofline.cu, the same kernel the
// benchmark programs in bench/ time), on the CPU an OpenMP sum over every
// amplitude. Ratios of an operation's rate to the roofline's are comparable
// across machines; raw rates are not.
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "qmarg/marginal.hpp"
#include "qmarg/state_vector.hpp"
#include "qmarg/types.hpp"

namespace qmarg {

// Times marginal_probabilities(state, qubits, options). Input is validated as
// marginal_probabilities validates it; a strategy that cannot run the case
// throws the same qmarg::Error from its first call (a warm-up one when
// warmup > 0).
template <class Real>
std::vector<double> time_marginal_ms(const StateVector<Real>& state, const Qubits& qubits,
                                     const MarginalOptions& options, int warmup, int runs);

// Times the read roofline on `state`.
template <class Real>
std::vector<double> time_read_roofline_ms(const StateVector<Real>& state, int warmup, int runs);

// The median of time_read_roofline_ms(state, 3, runs).
template <class Real>
double read_roofline_ms(const StateVector<Real>& state, int runs);

// How many timed runs a case gets whose checking run took `check_seconds`:
// `runs`, or where cell_seconds > 0 and `runs` runs would take longer than
// that, as many as fit in cell_seconds but at least min(min_runs, runs).
// Slow cases then give a quick look, not the median of `runs` runs.
int timed_run_count(int runs, double check_seconds, double cell_seconds, int min_runs);

// Times a case until its runs fill min_seconds. `time(warmup, runs)` returns
// the milliseconds of each of `runs` timed runs after `warmup` untimed ones.
// While the runs take less than min_seconds in all, they count as warm-up and
// the case is timed again with enough runs to fill min_seconds at their pace,
// at least twice as many (the first runs can be slow: that is what warm-up is
// for), and at most max_runs (a first timing of max_runs or more is final).
// `warmup` and `runs` end as what was done; the result is the last timing's.
// min_seconds <= 0 times once.
std::vector<double> time_until_filled(const std::function<std::vector<double>(int, int)>& time, double min_seconds,
                                      int max_runs, int& warmup, int& runs);

// The max_runs the benchmark programs give time_until_filled: 100000 runs of
// the fastest case (a 20-qubit marginal, about 10 us) fill a second.
constexpr int kMaxTimedRuns = 100000;

// The check a benchmark makes before it times an answer. Empty when every bin
// of `got` agrees with `want` to `tolerance` relative to the bin, or to 1e-3 of
// the mean bin for bins far below it; otherwise the first bin that differs (or
// the two sizes), with both values.
std::string compare_marginals(const std::vector<double>& got, const std::vector<double>& want, double tolerance);

// The tolerance the benchmarks give compare_marginals for a state of this
// precision, checked against a reference that adds in another order.
template <class Real>
constexpr double marginal_check_tolerance() {
    return std::is_same<Real, float>::value ? 1e-5 : 1e-9;
}

}  // namespace qmarg
