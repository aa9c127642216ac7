// The cases of `qmarg bench marginal`: qubit layouts, the statistics of a set
// of timed runs, and the comparison of two marginals. Kept apart from the
// command so that each piece is small and can be read on its own.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "qmarg/types.hpp"

namespace qmarg_cli {

// low = 0..k-1; high = n-k..n-1; scattered = spread evenly over 0..n-1;
// descending = n-1, n-2, ..., n-k; random = k distinct qubits in random order,
// drawn from `seed`, n and k (the same three give the same qubits).
extern const std::vector<std::string> kLayouts;
qmarg::Qubits layout_qubits(const std::string& layout, int n, int k, std::uint64_t seed);

// A 64-bit mix of its arguments (splitmix64 steps): per-state and per-case
// seeds derived from the one --seed.
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0);

struct RunStats {
    double median = 0, min = 0, max = 0, p10 = 0, p90 = 0;
};
// Percentiles by linear interpolation between the sorted runs.
RunStats run_stats(std::vector<double> ms);

// The marginal computed in the plainest way, one amplitude after another on
// one thread, in double: a check for the CPU backend that shares no code with it.
template <class Real>
std::vector<double> serial_marginal(const std::complex<Real>* amps, int n, const qmarg::Qubits& qubits);

}  // namespace qmarg_cli
