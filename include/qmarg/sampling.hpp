// Sampling measurement outcomes from a marginal distribution.
//
// Draws use a seeded std::mt19937_64 and a binary search in the cumulative
// distribution, so a seed reproduces the same outcomes on every run and device
// (the distribution comes back to the host first; sampling is cheap next to
// computing it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace qmarg {

// `shots` outcome indices drawn from `probabilities` (index i with probability
// probabilities[i] / sum). The probabilities must be finite and non-negative
// with a positive sum; they need not sum to exactly 1.
std::vector<std::uint64_t> sample_outcomes(const std::vector<double>& probabilities, std::size_t shots,
                                           std::uint64_t seed);

// How often each outcome occurs in `samples` (only outcomes that occur).
std::map<std::uint64_t, std::uint64_t> count_outcomes(const std::vector<std::uint64_t>& samples);

// count_outcomes(sample_outcomes(probabilities, shots, seed)) without holding
// every sample in memory, for large shot counts.
std::map<std::uint64_t, std::uint64_t> sample_counts(const std::vector<double>& probabilities, std::uint64_t shots,
                                                     std::uint64_t seed);

}  // namespace qmarg
