// Helpers shared by the test files: fresh seeds reported on failure, the
// device/precision matrix every test runs over, and skipping without a GPU.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <complex>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "qmarg/qmarg.hpp"

namespace qmarg_test {

// A new seed for every call (never fixed), so each run draws fresh states.
// Use with SCOPED_TRACE(seed_trace(seed)) so a failure prints the seed.
inline std::uint64_t fresh_seed() {
    static std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

inline std::string seed_trace(std::uint64_t seed) { return "random seed " + std::to_string(seed); }

// Where the tests find the project's files (example circuits, error corpora):
// the source tree CMake compiled in, unless QMARG_SOURCE_DIR in the environment
// says otherwise (a build copied to another machine to run its GPU tests).
inline std::string source_dir() {
    const char* dir = std::getenv("QMARG_SOURCE_DIR");
    return dir != nullptr && *dir != '\0' ? dir : QMARG_SOURCE_DIR;
}

// Skips the current test when `device` is the GPU and no GPU is usable.
#define QMARG_SKIP_IF_UNAVAILABLE(device)                                                       \
    do {                                                                                        \
        if ((device) == ::qmarg::Device::Gpu && !::qmarg::gpu_available())                      \
            GTEST_SKIP() << "no usable GPU: " << ::qmarg::gpu_unavailable_reason();             \
    } while (0)

// Every ordered subset of {0..n-1} with 1 <= size <= max_k (all permutations).
inline std::vector<qmarg::Qubits> all_ordered_subsets(int n, int max_k) {
    std::vector<qmarg::Qubits> out;
    for (unsigned mask = 1; mask < (1u << n); ++mask) {
        qmarg::Qubits subset;
        for (int q = 0; q < n; ++q)
            if (mask & (1u << q)) subset.push_back(q);
        if (static_cast<int>(subset.size()) > max_k) continue;
        do {
            out.push_back(subset);
        } while (std::next_permutation(subset.begin(), subset.end()));
    }
    return out;
}

// The backend matrix: each typed test runs once per (precision, device).
template <class RealT, qmarg::Device DeviceV>
struct Backend {
    using Real = RealT;
    static constexpr qmarg::Device device = DeviceV;
};
using AllBackends = ::testing::Types<Backend<float, qmarg::Device::Cpu>, Backend<double, qmarg::Device::Cpu>,
                                     Backend<float, qmarg::Device::Gpu>, Backend<double, qmarg::Device::Gpu>>;

struct BackendName {
    template <class B>
    static std::string GetName(int) {
        return std::string(qmarg::to_string(B::device)) + (std::is_same<typename B::Real, float>::value ? "_float"
                                                                                                        : "_double");
    }
};

// Typed tests over the precision alone (suites that are GPU-only), named
// "float" and "double" in test names.
using Reals = ::testing::Types<float, double>;
struct RealName {
    template <class Real>
    static std::string GetName(int) {
        return std::is_same<Real, float>::value ? "float" : "double";
    }
};

// Fixture for typed tests over AllBackends: skips GPU instances without a GPU.
template <class B>
class BackendTest : public ::testing::Test {
protected:
    using Real = typename B::Real;
    static constexpr qmarg::Device device = B::device;
    void SetUp() override { QMARG_SKIP_IF_UNAVAILABLE(B::device); }
};

// Fixture for typed tests over Reals that need a GPU: skips without one.
// Each suite names it with an alias template (template <class Real> using
// SuiteName = qmarg_test::GpuTest<Real>;).
template <class Real>
class GpuTest : public ::testing::Test {
protected:
    void SetUp() override { QMARG_SKIP_IF_UNAVAILABLE(qmarg::Device::Gpu); }
};

// "qubits {3, 0, 7}": a qubit list for failure messages.
inline std::string describe(const qmarg::Qubits& qubits) {
    std::string out = "qubits {";
    for (std::size_t j = 0; j < qubits.size(); ++j) out += (j ? ", " : "") + std::to_string(qubits[j]);
    return out + "}";
}

// k distinct qubits of {0..n-1} in random order.
inline qmarg::Qubits random_qubits(int n, int k, std::mt19937_64& rng) {
    qmarg::Qubits all(n);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(k);
    return all;
}

// The highest k of n qubits, ascending (n - k .. n - 1) or descending.
inline qmarg::Qubits highest_qubits(int n, int k, bool descending) {
    qmarg::Qubits qubits(static_cast<std::size_t>(k));
    for (int j = 0; j < k; ++j) qubits[static_cast<std::size_t>(j)] = descending ? n - 1 - j : n - k + j;
    return qubits;
}

// Tolerance for comparing Real-precision results that were accumulated in double.
template <class Real>
constexpr double tolerance() {
    return std::is_same<Real, float>::value ? 2e-6 : 1e-12;
}

}  // namespace qmarg_test
