// Comparing GPU marginals with the CPU reference, shared by the GPU marginal
// tests (strategies, the engine's transposed path).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iomanip>
#include <vector>

#include "test_support.hpp"

namespace qmarg_test {

// Per bin: relative error <= tolerance<Real>() (1e-12 for double) of the
// reference, where bins far below the mean bin (1e-3 / 2^k) are held to the
// same error relative to that floor instead of to their own tiny value.
// Reports at most five bins.
template <class Real>
void expect_bins_near(const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    const double allowed_relative = tolerance<Real>();
    const double floor = 1e-3 / static_cast<double>(want.size());
    int reported = 0;
    for (std::size_t b = 0; b < want.size(); ++b) {
        const double allowed = allowed_relative * std::max(std::abs(want[b]), floor);
        if (!(std::abs(got[b] - want[b]) <= allowed)) {  // also catches NaN
            ADD_FAILURE() << std::setprecision(17) << "bin " << b << ": got " << got[b] << ", CPU reference " << want[b]
                          << " (allowed error " << allowed << ")";
            if (++reported == 5) {
                ADD_FAILURE() << "further bins not reported";
                return;
            }
        }
    }
}

}  // namespace qmarg_test
