// Host-only helpers of the GPU benchmarks, kept out of the CUDA headers so
// that host code (bench/power_sampler.hpp, its test) can use them too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace qmarg {
namespace bench {

// The median of a non-empty list (the mean of the middle two for an even count).
inline double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace bench
}  // namespace qmarg
