// GPU reductions (total_probability, inner_product, expectation_z) against a
// long-double reference computed on the host from the very same amplitudes
// (state.amplitudes()), so any difference beyond double rounding is a bug; the
// CPU backend as a second reference; run-to-run determinism (same bits);
// concurrent callers; and the accuracy of total_probability at n = 30.
// Every case runs for float and double states; all skip without a GPU.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using qmarg::Device;
using qmarg::Index;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg_test::fresh_seed;
using qmarg_test::seed_trace;

using LongComplex = std::complex<long double>;

template <class Real>
using ReductionsGpuTest = qmarg_test::GpuTest<Real>;
TYPED_TEST_SUITE(ReductionsGpuTest, qmarg_test::Reals, qmarg_test::RealName);

const int kQubitCounts[] = {1, 2, 5, 10, 17, 20, 24};

// The GPU adds, in double, the same amplitudes the reference adds in long
// double; for n <= 24 the two differ by a few double roundings of numbers
// near 1 (a bound of about 30 ulps), far below this.
constexpr double kTolerance = 1e-13;

template <class Real>
std::string describe(int n, std::uint64_t seed) {
    std::ostringstream out;
    out << (std::is_same<Real, float>::value ? "float" : "double") << " state, n = " << n << ", "
        << seed_trace(seed);
    return out.str();
}

using qmarg_test::describe;

template <class Real>
long double reference_total(const std::vector<std::complex<Real>>& amps) {
    long double sum = 0;
    const auto n = static_cast<std::int64_t>(amps.size());
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        const long double re = amps[i].real(), im = amps[i].imag();
        sum += re * re + im * im;
    }
    return sum;
}

template <class Real>
LongComplex reference_inner(const std::vector<std::complex<Real>>& a, const std::vector<std::complex<Real>>& b) {
    long double re = 0, im = 0;
    const auto n = static_cast<std::int64_t>(a.size());
#pragma omp parallel for reduction(+ : re, im) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        const LongComplex term = std::conj(LongComplex(a[i])) * LongComplex(b[i]);
        re += term.real();
        im += term.imag();
    }
    return {re, im};
}

// Written from the definition, bit by bit: no mask, no parity helper.
template <class Real>
long double reference_expectation_z(const std::vector<std::complex<Real>>& amps, const Qubits& qubits) {
    long double sum = 0;
    const auto n = static_cast<std::int64_t>(amps.size());
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        int ones = 0;
        for (int q : qubits) ones += static_cast<int>((i >> q) & 1);
        const long double p = std::norm(LongComplex(amps[i]));
        sum += ones % 2 ? -p : p;
    }
    return sum;
}

template <class Real>
StateVector<Real> random_gpu_state(int n, std::uint64_t seed) {
    StateVector<Real> state(n, Device::Gpu);
    state.set_random_state(seed);
    return state;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(std::complex<double> a, std::complex<double> b) {
    return same_bits(a.real(), b.real()) && same_bits(a.imag(), b.imag());
}

std::string hex(double x) {
    char text[64];
    std::snprintf(text, sizeof text, "%a", x);
    return text;
}
std::string hex(std::complex<double> x) { return "(" + hex(x.real()) + ", " + hex(x.imag()) + ")"; }

// EXPECT_TRUE(BitsEqual(a, b)) prints both values to the last bit on failure.
template <class T>
::testing::AssertionResult BitsEqual(const T& got, const T& expected) {
    if (same_bits(got, expected)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << hex(got) << ", expected the bits " << hex(expected);
}

TYPED_TEST(ReductionsGpuTest, TotalProbabilityMatchesLongDoubleReference) {
    for (int n : kQubitCounts) {
        const std::uint64_t seed = fresh_seed();
        SCOPED_TRACE(describe<TypeParam>(n, seed));
        const auto state = random_gpu_state<TypeParam>(n, seed);
        const long double expected = reference_total(state.amplitudes());
        EXPECT_NEAR(qmarg::total_probability(state), static_cast<double>(expected), kTolerance);
    }
}

TYPED_TEST(ReductionsGpuTest, TotalProbabilityOfAnUnnormalisedState) {
    // Amplitudes set by hand, no normalisation: the sum is what is there.
    std::mt19937_64 rng(fresh_seed());
    std::uniform_real_distribution<double> value(-3, 3);
    for (int n : {1, 6, 13}) {
        std::vector<std::complex<TypeParam>> amps(std::size_t{1} << n);
        for (auto& a : amps) a = {static_cast<TypeParam>(value(rng)), static_cast<TypeParam>(value(rng))};
        StateVector<TypeParam> state(n, Device::Gpu);
        state.set_amplitudes(amps);
        const long double expected = reference_total(amps);
        SCOPED_TRACE("n = " + std::to_string(n));
        EXPECT_NEAR(qmarg::total_probability(state), static_cast<double>(expected),
                    1e-13 * static_cast<double>(expected));
    }
}

TYPED_TEST(ReductionsGpuTest, InnerProductMatchesLongDoubleReference) {
    for (int n : kQubitCounts) {
        const std::uint64_t seed_a = fresh_seed(), seed_b = fresh_seed();
        SCOPED_TRACE(describe<TypeParam>(n, seed_a) + ", second state " + seed_trace(seed_b));
        const auto a = random_gpu_state<TypeParam>(n, seed_a);
        const auto b = random_gpu_state<TypeParam>(n, seed_b);
        const auto host_a = a.amplitudes(), host_b = b.amplitudes();
        const LongComplex expected = reference_inner(host_a, host_b);
        const std::complex<double> got = qmarg::inner_product(a, b);
        EXPECT_NEAR(got.real(), static_cast<double>(expected.real()), kTolerance);
        EXPECT_NEAR(got.imag(), static_cast<double>(expected.imag()), kTolerance);
        // The conjugated side: <b|a> is the conjugate, to the bit (the same
        // products are formed, in the same order).
        EXPECT_TRUE(BitsEqual(qmarg::inner_product(b, a), std::conj(got)));
        // <a|a>: the norm, with an imaginary part of exactly 0.
        const std::complex<double> self = qmarg::inner_product(a, a);
        EXPECT_NEAR(self.real(), static_cast<double>(reference_total(host_a)), kTolerance);
        EXPECT_EQ(self.imag(), 0.0);
    }
}

TYPED_TEST(ReductionsGpuTest, InnerProductWithAModifiedCopy) {
    std::mt19937_64 rng(fresh_seed());
    for (int n : {1, 5, 12, 20}) {
        const std::uint64_t seed = fresh_seed();
        SCOPED_TRACE(describe<TypeParam>(n, seed));
        const auto a = random_gpu_state<TypeParam>(n, seed);
        auto b = a.clone();
        // Change the first and last amplitudes and a few in between.
        std::uniform_int_distribution<Index> index(0, a.size() - 1);
        std::uniform_real_distribution<double> value(-1, 1);
        for (Index i : {Index{0}, a.size() - 1, index(rng), index(rng), index(rng)}) {
            b.set_amplitude(i, {static_cast<TypeParam>(value(rng)), static_cast<TypeParam>(value(rng))});
        }
        const auto host_a = a.amplitudes(), host_b = b.amplitudes();
        const LongComplex expected = reference_inner(host_a, host_b);
        const std::complex<double> got = qmarg::inner_product(a, b);
        EXPECT_NEAR(got.real(), static_cast<double>(expected.real()), kTolerance);
        EXPECT_NEAR(got.imag(), static_cast<double>(expected.imag()), kTolerance);
        // The change is seen: <a|b> moved away from <a|a> by what the reference says.
        const LongComplex shift = expected - reference_inner(host_a, host_a);
        const std::complex<double> got_shift = got - qmarg::inner_product(a, a);
        EXPECT_NEAR(got_shift.real(), static_cast<double>(shift.real()), kTolerance);
        EXPECT_NEAR(got_shift.imag(), static_cast<double>(shift.imag()), kTolerance);
    }
}

TYPED_TEST(ReductionsGpuTest, ExpectationZMatchesLongDoubleReference) {
    std::mt19937_64 rng(fresh_seed());
    for (int n : kQubitCounts) {
        const std::uint64_t seed = fresh_seed();
        SCOPED_TRACE(describe<TypeParam>(n, seed));
        const auto state = random_gpu_state<TypeParam>(n, seed);
        const auto amps = state.amplitudes();
        std::vector<Qubits> lists = {{0}, {n - 1}, qmarg_test::random_qubits(n, n, rng)};
        for (int r = 0; r < 3; ++r) {
            const int k = std::uniform_int_distribution<int>(1, n)(rng);
            lists.push_back(qmarg_test::random_qubits(n, k, rng));
        }
        for (const Qubits& qubits : lists) {
            SCOPED_TRACE(describe(qubits));
            const long double expected = reference_expectation_z(amps, qubits);
            EXPECT_NEAR(qmarg::expectation_z(state, qubits), static_cast<double>(expected), kTolerance);
        }
    }
}

TYPED_TEST(ReductionsGpuTest, AgreesWithTheCpuBackend) {
    std::mt19937_64 rng(fresh_seed());
    for (int n : {3, 11, 18}) {
        const std::uint64_t seed = fresh_seed();
        SCOPED_TRACE(describe<TypeParam>(n, seed));
        const auto gpu_a = random_gpu_state<TypeParam>(n, seed);
        const auto gpu_b = random_gpu_state<TypeParam>(n, seed + 1);
        const auto cpu_a = gpu_a.to(Device::Cpu), cpu_b = gpu_b.to(Device::Cpu);
        EXPECT_NEAR(qmarg::total_probability(gpu_a), qmarg::total_probability(cpu_a), 1e-12);
        const auto gpu_inner = qmarg::inner_product(gpu_a, gpu_b), cpu_inner = qmarg::inner_product(cpu_a, cpu_b);
        EXPECT_NEAR(gpu_inner.real(), cpu_inner.real(), 1e-12);
        EXPECT_NEAR(gpu_inner.imag(), cpu_inner.imag(), 1e-12);
        const Qubits qubits = qmarg_test::random_qubits(n, std::uniform_int_distribution<int>(1, n)(rng), rng);
        SCOPED_TRACE(describe(qubits));
        EXPECT_NEAR(qmarg::expectation_z(gpu_a, qubits), qmarg::expectation_z(cpu_a, qubits), 1e-12);
    }
}

TYPED_TEST(ReductionsGpuTest, SameBitsOnEveryRun) {
    std::mt19937_64 rng(fresh_seed());
    for (int n : {10, 20, 24}) {
        const std::uint64_t seed = fresh_seed();
        SCOPED_TRACE(describe<TypeParam>(n, seed));
        const auto a = random_gpu_state<TypeParam>(n, seed);
        const auto b = random_gpu_state<TypeParam>(n, seed + 1);
        const Qubits qubits = qmarg_test::random_qubits(n, std::uniform_int_distribution<int>(1, n)(rng), rng);
        SCOPED_TRACE(describe(qubits));
        const double total = qmarg::total_probability(a);
        const std::complex<double> inner = qmarg::inner_product(a, b);
        const double z = qmarg::expectation_z(a, qubits);
        for (int run = 0; run < 10; ++run) {
            SCOPED_TRACE("repeat " + std::to_string(run));
            EXPECT_TRUE(BitsEqual(qmarg::total_probability(a), total));
            EXPECT_TRUE(BitsEqual(qmarg::inner_product(a, b), inner));
            EXPECT_TRUE(BitsEqual(qmarg::expectation_z(a, qubits), z));
        }
        // The bits depend on the amplitudes only, not on where they are stored.
        const auto copy = a.clone();
        EXPECT_TRUE(BitsEqual(qmarg::total_probability(copy), total));
        // The order of the qubit list does not matter, to the bit.
        Qubits shuffled = qubits;
        std::shuffle(shuffled.begin(), shuffled.end(), rng);
        EXPECT_TRUE(BitsEqual(qmarg::expectation_z(a, shuffled), z));
    }
}

TYPED_TEST(ReductionsGpuTest, ConcurrentCallersGetTheSerialBits) {
    // The reduction workspace is shared per device; callers take turns.
    std::vector<StateVector<TypeParam>> states;
    std::vector<double> serial;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    for (int n : {4, 12, 16, 21}) {
        states.push_back(random_gpu_state<TypeParam>(n, seed + static_cast<std::uint64_t>(n)));
        serial.push_back(qmarg::total_probability(states.back()));
    }
    std::vector<int> mismatches(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int r = 0; r < 20; ++r) {
                const std::size_t s = static_cast<std::size_t>(t + r) % states.size();
                if (!same_bits(qmarg::total_probability(states[s]), serial[s])) ++mismatches[t];
            }
        });
    }
    for (auto& thread : threads) thread.join();
    for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// n = 30: the total probability against a long-double sum of the same
// amplitudes. Double: at most 1e-13 relative (the target). Float: reported.
template <class Real>
void check_thirty_qubits(double bound) {
    constexpr int n = 30;
    const char* name = std::is_same<Real, float>::value ? "float" : "double";
    const std::size_t amp_bytes = sizeof(std::complex<Real>);
    if (qmarg::max_qubits(Device::Gpu, amp_bytes) < n || qmarg::max_qubits(Device::Cpu, amp_bytes) < n) {
        std::cout << "[ skipped  ] " << name << " n = 30: needs " << (qmarg::state_bytes(n, amp_bytes) >> 30)
                  << " GiB free on the GPU and on the host\n";
        return;
    }
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(describe<Real>(n, seed));
    double got = 0;
    long double expected = 0;
    {
        const auto state = random_gpu_state<Real>(n, seed);
        got = qmarg::total_probability(state);
        expected = reference_total(state.amplitudes());
    }
    const double relative = static_cast<double>(std::fabs((static_cast<long double>(got) - expected) / expected));
    std::cout.precision(17);
    std::cout << "[ accuracy ] n = 30 " << name << " state: GPU total_probability " << got
              << ", long-double sum of the same amplitudes " << static_cast<double>(expected)
              << ", relative difference " << relative << " (distance of the sum from 1: " << std::fabs(got - 1)
              << ")\n";
    ::testing::Test::RecordProperty(std::string("relative_error_") + name, std::to_string(relative));
    EXPECT_LE(relative, bound);
}

TEST(ReductionsGpuAccuracy, TotalProbabilityAtThirtyQubits) {
    QMARG_SKIP_IF_UNAVAILABLE(Device::Gpu);
    check_thirty_qubits<double>(1e-13);
    // A float state is summed in double from its exact float values, so the
    // same bound is expected; the figure is recorded either way.
    check_thirty_qubits<float>(1e-13);
}

}  // namespace
