// Comparing GPU marginals with the CPU reference, shared by the GPU marginal
// tests (strategies, the engine's transposed path).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <iomanip>
#include <vector>

#include "test_support.hpp"
#if defined(QMARG_TESTS_WITH_CUDA)
#include "marginal_transpose_plan.hpp"
#include "qmarg/device_buffer.hpp"
#include "qmarg/state_vector.hpp"
#endif

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

#if defined(QMARG_TESTS_WITH_CUDA)
// BinStationary's streaming kernel alone (whatever takes_transposed_path
// says), with plain and with evict-first state loads: near `reference` and
// bitwise equal on repeat.
template <class Real>
void expect_streaming_path_matches(const qmarg::StateVector<Real>& gpu, const qmarg::Qubits& qubits,
                                   const std::vector<double>& reference) {
    using qmarg::gpu::StateLoads;
    qmarg::DeviceBuffer<double> out(std::size_t{1} << qubits.size());
    for (const StateLoads loads : {StateLoads::Normal, StateLoads::EvictFirst}) {
        SCOPED_TRACE(loads == StateLoads::Normal ? "plain loads" : "evict-first loads");
        qmarg::gpu::marginal_probabilities_bin_stationary_streaming(gpu.data(), gpu.num_qubits(), qubits, loads,
                                                                    out.data());
        const std::vector<double> first = out.to_host();
        expect_bins_near<Real>(first, reference);
        qmarg::gpu::marginal_probabilities_bin_stationary_streaming(gpu.data(), gpu.num_qubits(), qubits, loads,
                                                                    out.data());
        const std::vector<double> again = out.to_host();
        EXPECT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * sizeof(double)))
            << "not bitwise equal on repeat";
    }
}
#endif

}  // namespace qmarg_test
