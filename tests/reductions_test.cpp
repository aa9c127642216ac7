// total_probability and inner_product on every backend against plain
// long-double loops, their algebraic identities, and their shape errors.
#include <omp.h>

#include <cmath>

#include "test_support.hpp"

namespace {

using qmarg::Device;
using qmarg::StateVector;
using qmarg_test::fresh_seed;
using qmarg_test::seed_trace;

template <class B>
class ReductionsVsLongDouble : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(ReductionsVsLongDouble, qmarg_test::AllBackends, qmarg_test::BackendName);

// Sizes below, at and above one CPU chunk (2^12 amplitudes), and n = 1.
const int kQubitCounts[] = {1, 3, 11, 12, 13, 17};

// Both reductions accumulate in double from the state's own amplitudes, so the
// error against a long-double sum is a few double roundings for either precision.
constexpr double kRelativeTolerance = 1e-12;

template <class Real>
long double plain_norm2(const std::vector<std::complex<Real>>& amps) {
    long double sum = 0;
    for (const auto& a : amps) sum += static_cast<long double>(a.real()) * a.real() +
                                      static_cast<long double>(a.imag()) * a.imag();
    return sum;
}

template <class Real>
std::complex<long double> plain_inner(const std::vector<std::complex<Real>>& a,
                                      const std::vector<std::complex<Real>>& b) {
    std::complex<long double> sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        sum += std::conj(std::complex<long double>(a[i].real(), a[i].imag())) *
               std::complex<long double>(b[i].real(), b[i].imag());
    }
    return sum;
}

// A random state scaled away from norm 1, so that a result of exactly 1 could
// not come from a normalised input by accident.
template <class Real>
StateVector<Real> random_unnormalised(int n, Device device, std::uint64_t seed, Real scale) {
    StateVector<Real> state(n, device);
    state.set_random_state(seed);
    auto amps = state.amplitudes();
    for (auto& a : amps) a *= scale;
    state.set_amplitudes(amps);
    return state;
}

TYPED_TEST(ReductionsVsLongDouble, TotalProbability) {
    using Real = typename TypeParam::Real;
    for (int n : kQubitCounts) {
        const std::uint64_t seed = fresh_seed();
        SCOPED_TRACE(seed_trace(seed) + " n=" + std::to_string(n));
        const auto state = random_unnormalised<Real>(n, TypeParam::device, seed, Real(1.5));
        const double want = static_cast<double>(plain_norm2(state.amplitudes()));
        EXPECT_NEAR(qmarg::total_probability(state), want, kRelativeTolerance * want);
        EXPECT_NEAR(want, 2.25, 1e-5);
    }
}

TYPED_TEST(ReductionsVsLongDouble, InnerProductAndItsIdentities) {
    using Real = typename TypeParam::Real;
    for (int n : kQubitCounts) {
        const std::uint64_t seed = fresh_seed();
        SCOPED_TRACE(seed_trace(seed) + " n=" + std::to_string(n));
        const auto a = random_unnormalised<Real>(n, TypeParam::device, seed, Real(0.75));
        const auto b = random_unnormalised<Real>(n, TypeParam::device, seed ^ 0x9e3779b97f4a7c15ull, Real(1.25));
        const auto amps_a = a.amplitudes(), amps_b = b.amplitudes();

        const std::complex<double> ab = qmarg::inner_product(a, b);
        const std::complex<long double> want = plain_inner(amps_a, amps_b);
        // |<a|b>| is small for random states; scale the tolerance by |a||b|.
        const double scale = std::sqrt(static_cast<double>(plain_norm2(amps_a) * plain_norm2(amps_b)));
        EXPECT_NEAR(ab.real(), static_cast<double>(want.real()), kRelativeTolerance * scale);
        EXPECT_NEAR(ab.imag(), static_cast<double>(want.imag()), kRelativeTolerance * scale);

        // Conjugate symmetry: <b|a> = conj(<a|b>).
        const std::complex<double> ba = qmarg::inner_product(b, a);
        EXPECT_NEAR(ba.real(), ab.real(), kRelativeTolerance * scale);
        EXPECT_NEAR(ba.imag(), -ab.imag(), kRelativeTolerance * scale);

        // <a|a> is the total probability, and real (up to rounding: a fused
        // multiply-add need not cancel re*im - im*re exactly).
        const std::complex<double> aa = qmarg::inner_product(a, a);
        const double total = qmarg::total_probability(a);
        EXPECT_NEAR(aa.real(), total, kRelativeTolerance * total);
        EXPECT_NEAR(aa.imag(), 0.0, kRelativeTolerance * total);
    }
}

// Which argument is conjugated: <e_0| (i e_0)> = i, <(i e_0)| e_0> = -i.
TYPED_TEST(ReductionsVsLongDouble, FirstArgumentIsConjugated) {
    using Real = typename TypeParam::Real;
    StateVector<Real> a(2, TypeParam::device), b(2, TypeParam::device);
    b.set_amplitude(0, {0, 1});
    EXPECT_EQ(qmarg::inner_product(a, b), std::complex<double>(0, 1));
    EXPECT_EQ(qmarg::inner_product(b, a), std::complex<double>(0, -1));
}

template <class B>
class ReductionErrors : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(ReductionErrors, qmarg_test::AllBackends, qmarg_test::BackendName);

TYPED_TEST(ReductionErrors, MismatchedSizes) {
    using Real = typename TypeParam::Real;
    StateVector<Real> three(3, TypeParam::device), four(4, TypeParam::device);
    try {
        qmarg::inner_product(three, four);
        FAIL() << "no error for states of 3 and 4 qubits";
    } catch (const qmarg::Error& e) {
        EXPECT_STREQ(e.what(), "inner_product: the states have different numbers of qubits (3 and 4)");
    }
}

TYPED_TEST(ReductionErrors, MismatchedDevices) {
    using Real = typename TypeParam::Real;
    QMARG_SKIP_IF_UNAVAILABLE(Device::Gpu);
    StateVector<Real> three(3, TypeParam::device);
    const Device other = TypeParam::device == Device::Cpu ? Device::Gpu : Device::Cpu;
    StateVector<Real> elsewhere(3, other);
    try {
        qmarg::inner_product(three, elsewhere);
        FAIL() << "no error for states on different devices";
    } catch (const qmarg::Error& e) {
        EXPECT_EQ(std::string(e.what()), std::string("inner_product: the states live on different devices (") +
                                             qmarg::to_string(TypeParam::device) + " and " +
                                             qmarg::to_string(other) + "); copy one with to() first");
    }
}

// The CPU tree has fixed chunks and a fixed shape: the same bits for any
// number of threads.
template <class Real>
class CpuReductionThreads : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CpuReductionThreads, Reals);

TYPED_TEST(CpuReductionThreads, SameBitsForAnyThreadCount) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    const auto a = random_unnormalised<TypeParam>(15, Device::Cpu, seed, TypeParam(1));
    const auto b = random_unnormalised<TypeParam>(15, Device::Cpu, seed + 1, TypeParam(1));
    const int saved_threads = omp_get_max_threads();
    omp_set_num_threads(1);
    const double total = qmarg::total_probability(a);
    const std::complex<double> inner = qmarg::inner_product(a, b);
    for (int threads : {2, 3, 8}) {
        omp_set_num_threads(threads);
        EXPECT_EQ(qmarg::total_probability(a), total) << threads << " threads";
        EXPECT_EQ(qmarg::inner_product(a, b), inner) << threads << " threads";
    }
    omp_set_num_threads(saved_threads);
}

}  // namespace
