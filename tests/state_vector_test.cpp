// StateVector: initialisers, host copies, device copies, moves, and the memory
// check, on every device and precision.
#include <cmath>

#include "test_support.hpp"

namespace {

using qmarg::Device;
using qmarg::StateVector;
using qmarg_test::fresh_seed;
using qmarg_test::seed_trace;

template <class B>
class StateVectorTest : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(StateVectorTest, qmarg_test::AllBackends, qmarg_test::BackendName);

template <class Real>
class StateVectorCopyTest : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(StateVectorCopyTest, Reals);

const Device kDevices[] = {Device::Cpu, Device::Gpu};

template <class Real>
double norm2(const std::vector<std::complex<Real>>& amps) {
    double sum = 0;
    for (const auto& a : amps) sum += std::norm(std::complex<double>(a));
    return sum;
}

TYPED_TEST(StateVectorTest, StartsInZeroStateAndBasisStatesAreSet) {
    using Real = typename TypeParam::Real;
    StateVector<Real> state(5, TypeParam::device);
    EXPECT_EQ(state.num_qubits(), 5);
    EXPECT_EQ(state.size(), 32u);
    EXPECT_EQ(state.device(), TypeParam::device);
    auto amps = state.amplitudes();
    for (std::size_t i = 0; i < amps.size(); ++i) EXPECT_EQ(amps[i], std::complex<Real>(i == 0 ? 1 : 0, 0));
    state.set_basis_state(19);
    amps = state.amplitudes();
    for (std::size_t i = 0; i < amps.size(); ++i) EXPECT_EQ(amps[i], std::complex<Real>(i == 19 ? 1 : 0, 0));
}

TYPED_TEST(StateVectorTest, UniformSuperpositionHasEqualAmplitudes) {
    StateVector<typename TypeParam::Real> state(7, TypeParam::device);
    state.set_uniform_superposition();
    for (const auto& a : state.amplitudes()) {
        EXPECT_NEAR(a.real(), 1.0 / std::sqrt(128.0), 1e-7);
        EXPECT_EQ(a.imag(), 0);
    }
}

TYPED_TEST(StateVectorCopyTest, RandomStateIsNormalisedSeededAndDeviceIndependent) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    StateVector<TypeParam> cpu(11, Device::Cpu);
    cpu.set_random_state(seed);
    const auto reference = cpu.amplitudes();
    EXPECT_NEAR(norm2(reference), 1.0, 1e-5);
    // No amplitude is zero and they are not all alike.
    for (const auto& a : reference) EXPECT_GT(std::abs(a), 0);
    EXPECT_NE(reference[0], reference[1]);

    StateVector<TypeParam> again(11, Device::Cpu);
    again.set_random_state(seed);
    EXPECT_EQ(again.amplitudes(), reference);
    again.set_random_state(seed + 1);
    EXPECT_NE(again.amplitudes(), reference);

    QMARG_SKIP_IF_UNAVAILABLE(Device::Gpu);
    StateVector<TypeParam> gpu(11, Device::Gpu);
    gpu.set_random_state(seed);
    const auto on_gpu = gpu.amplitudes();
    for (std::size_t i = 0; i < reference.size(); ++i) {
        EXPECT_NEAR(on_gpu[i].real(), reference[i].real(), 1e-6 * std::abs(reference[i]) + 1e-15) << i;
        EXPECT_NEAR(on_gpu[i].imag(), reference[i].imag(), 1e-6 * std::abs(reference[i]) + 1e-15) << i;
    }
}

TYPED_TEST(StateVectorCopyTest, CopiesBetweenDevicesAndSingleAmplitudes) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    for (Device from : kDevices) {
        for (Device to : kDevices) {
            if ((from == Device::Gpu || to == Device::Gpu) && !qmarg::gpu_available()) continue;
            StateVector<TypeParam> source(9, from);
            source.set_random_state(seed);
            StateVector<TypeParam> copy = source.to(to);
            EXPECT_EQ(copy.device(), to);
            EXPECT_EQ(copy.amplitudes(), source.amplitudes());
            copy.set_amplitude(5, {0.25, -0.5});
            EXPECT_EQ(copy.amplitude(5), std::complex<TypeParam>(0.25, -0.5));
            EXPECT_NE(source.amplitude(5), copy.amplitude(5));  // a deep copy
            StateVector<TypeParam> target(9, to);
            target.copy_from(source);
            EXPECT_EQ(target.amplitudes(), source.amplitudes());
            std::vector<std::complex<TypeParam>> host(512, {0.5, 0.5});
            target.set_amplitudes(host);
            EXPECT_EQ(target.amplitudes(), host);
        }
    }
}

TYPED_TEST(StateVectorCopyTest, MovesTransferOwnership) {
    StateVector<TypeParam> a(3);
    a.set_basis_state(6);
    const auto* data = a.data();
    StateVector<TypeParam> b(std::move(a));
    EXPECT_EQ(b.data(), data);
    EXPECT_EQ(b.amplitude(6), std::complex<TypeParam>(1, 0));
    StateVector<TypeParam> c(2);
    c = std::move(b);
    EXPECT_EQ(c.num_qubits(), 3);
    EXPECT_EQ(c.amplitude(6), std::complex<TypeParam>(1, 0));
}

TYPED_TEST(StateVectorCopyTest, BadSizesAndIndicesAreClearErrors) {
    EXPECT_THROW(
        {
            try {
                StateVector<TypeParam> s(0);
            } catch (const qmarg::Error& e) {
                EXPECT_STREQ(e.what(), "number of qubits 0 is out of range: a state has 1..58 qubits");
                throw;
            }
        },
        qmarg::Error);
    // 50 qubits is within the index limit but far beyond any machine's memory:
    // the error comes before any allocation and says what would fit.
    try {
        StateVector<TypeParam> s(50);
        FAIL() << "a 50-qubit state should not fit";
    } catch (const qmarg::Error& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("a 50-qubit"), std::string::npos) << message;
        EXPECT_NE(message.find("but the CPU has"), std::string::npos) << message;
        EXPECT_NE(message.find("qubits fit)"), std::string::npos) << message;
    }
    StateVector<TypeParam> s(3);
    try {
        s.set_basis_state(8);
        FAIL();
    } catch (const qmarg::Error& e) {
        EXPECT_STREQ(e.what(), "set_basis_state: amplitude index 8 is out of range for a 3-qubit state "
                               "(valid indices are 0..7)");
    }
    try {
        s.set_amplitudes(std::vector<std::complex<TypeParam>>(7));
        FAIL();
    } catch (const qmarg::Error& e) {
        EXPECT_STREQ(e.what(), "set_amplitudes: got 7 amplitudes for a 3-qubit state, which has 8");
    }
    StateVector<TypeParam> other(4);
    EXPECT_THROW(s.copy_from(other), qmarg::Error);
}

TEST(GpuStateVector, WithoutAGpuTheErrorSaysWhy) {
    if (qmarg::gpu_available()) GTEST_SKIP() << "a GPU is available";
    try {
        StateVector<double> s(3, Device::Gpu);
        FAIL();
    } catch (const qmarg::Error& e) {
        const std::string message = e.what();
        EXPECT_TRUE(message.find("no usable GPU") != std::string::npos ||
                    message.find("built without CUDA") != std::string::npos)
            << message;
    }
}

}  // namespace
