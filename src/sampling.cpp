// Sampling outcomes: a cumulative distribution built once, then one 53-bit
// uniform and one binary search per shot.
//
// The uniform is taken from the generator's bits directly (not through
// std::uniform_real_distribution, whose algorithm the standard leaves open), so
// a seed gives the same outcomes with every standard library.
#include "qmarg/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "qmarg/error.hpp"

namespace qmarg {
namespace {

std::string number_text(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return text;
}

std::vector<double> cumulative_distribution(const std::vector<double>& probabilities) {
    if (probabilities.empty()) throw Error("cannot sample from an empty probability list");
    std::vector<double> cumulative(probabilities.size());
    double sum = 0;
    for (std::size_t i = 0; i < probabilities.size(); ++i) {
        const double p = probabilities[i];
        if (!std::isfinite(p) || p < 0) {
            throw Error("cannot sample: probability " + std::to_string(i) + " is " + number_text(p) +
                        " (probabilities must be finite and non-negative)");
        }
        sum += p;
        cumulative[i] = sum;
    }
    if (!(sum > 0) || !std::isfinite(sum)) {
        throw Error("cannot sample: the probabilities sum to " + number_text(sum) + " (it must be positive)");
    }
    return cumulative;
}

class Sampler {
public:
    Sampler(const std::vector<double>& probabilities, std::uint64_t seed)
        : cumulative_(cumulative_distribution(probabilities)), rng_(seed) {}

    std::uint64_t draw() {
        const double total = cumulative_.back();
        const double u = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0) * total;
        // The first outcome whose cumulative sum exceeds u: an outcome of
        // probability 0 spans an empty interval and is never drawn.
        auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
        if (it == cumulative_.end()) {
            // u rounded up to the total: take the last outcome that can occur.
            it = std::lower_bound(cumulative_.begin(), cumulative_.end(), total);
        }
        return static_cast<std::uint64_t>(it - cumulative_.begin());
    }

private:
    std::vector<double> cumulative_;
    std::mt19937_64 rng_;
};

}  // namespace

std::vector<std::uint64_t> sample_outcomes(const std::vector<double>& probabilities, std::size_t shots,
                                           std::uint64_t seed) {
    Sampler sampler(probabilities, seed);
    std::vector<std::uint64_t> samples(shots);
    for (auto& s : samples) s = sampler.draw();
    return samples;
}

std::map<std::uint64_t, std::uint64_t> count_outcomes(const std::vector<std::uint64_t>& samples) {
    std::map<std::uint64_t, std::uint64_t> counts;
    for (std::uint64_t s : samples) ++counts[s];
    return counts;
}

std::map<std::uint64_t, std::uint64_t> sample_counts(const std::vector<double>& probabilities, std::uint64_t shots,
                                                     std::uint64_t seed) {
    Sampler sampler(probabilities, seed);
    std::map<std::uint64_t, std::uint64_t> counts;
    for (std::uint64_t i = 0; i < shots; ++i) ++counts[sampler.draw()];
    return counts;
}

}  // namespace qmarg
