// BinStationary's transposed path (k >= n - 4, cuda/marginal_transpose.cu) on
// the GPU against the CPU reference, for float and double states: n = 11..24,
// k = n .. n - 4, qubits low, high, scattered, descending and in random orders,
// each on a fresh random state, and bitwise equal on repeat; once through the
// library (which picks a path by takes_transposed_path) and once on the
// transposed path called alone, so that its kernel for every count of
// unselected qubits runs whatever the rule picks. The neighbours of its range
// (n = 10, k = n - 5) go to the other paths and are checked too. Failures
// name the seed, n and the qubit list.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <random>
#include <string>
#include <vector>

#include "marginal_transpose_plan.hpp"
#include "marginal_support.hpp"
#include "qmarg/device_buffer.hpp"
#include "test_support.hpp"

namespace {

using qmarg_test::expect_bins_near;

using qmarg::Device;
using qmarg::MarginalOptions;
using qmarg::MarginalStrategy;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg::gpu::StateLoads;

template <class Real>
using MarginalTransposeTest = qmarg_test::GpuTest<Real>;

TYPED_TEST_SUITE(MarginalTransposeTest, qmarg_test::Reals, qmarg_test::RealName);

Qubits layout(const std::string& name, int n, int k, std::mt19937_64& rng) {
    Qubits qubits(k);
    for (int j = 0; j < k; ++j) {
        if (name == "low") qubits[j] = j;
        if (name == "high") qubits[j] = n - k + j;
        if (name == "scattered") qubits[j] = static_cast<int>(static_cast<long>(j) * (n - 1) / std::max(1, k - 1));
        if (name == "descending") qubits[j] = n - 1 - j;
    }
    if (name == "random") qubits = qmarg_test::random_qubits(n, k, rng);
    return qubits;
}

// One case: the engine against the CPU reference, then twice more bitwise.
template <class Real>
void check_case(const StateVector<Real>& gpu, const StateVector<Real>& cpu, std::uint64_t seed, const Qubits& qubits) {
    const int n = gpu.num_qubits();
    SCOPED_TRACE("random seed " + std::to_string(seed) + ", n = " + std::to_string(n) + ", " +
                 qmarg_test::describe(qubits) + ", strategy BinStationary");
    const MarginalOptions engine{MarginalStrategy::BinStationary};
    const std::vector<double> first = qmarg::marginal_probabilities(gpu, qubits, engine);
    expect_bins_near<Real>(first, qmarg::marginal_probabilities(cpu, qubits));
    for (int repeat = 0; repeat < 2; ++repeat) {
        const std::vector<double> again = qmarg::marginal_probabilities(gpu, qubits, engine);
        ASSERT_EQ(again.size(), first.size());
        EXPECT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * sizeof(double)))
            << "not bitwise equal on repeat " << repeat;
    }
}

TYPED_TEST(MarginalTransposeTest, MatchesTheCpuReferenceAndRepeatsBitwise) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    for (int n = 11; n <= 24; ++n) {
        const std::uint64_t state_seed = rng();
        StateVector<TypeParam> gpu(n, Device::Gpu);
        gpu.set_random_state(state_seed);
        const StateVector<TypeParam> cpu = gpu.to(Device::Cpu);
        for (int k = n; k >= n - qmarg::gpu::kTransposeMaxUnselected; --k) {
            ASSERT_TRUE(qmarg::gpu::transpose_applies(n, k)) << "n = " << n << ", k = " << k;
            for (const char* name : {"low", "high", "scattered", "descending", "random", "random"}) {
                check_case(gpu, cpu, state_seed, layout(name, n, k, rng));
                if (this->HasFatalFailure()) return;
            }
        }
    }
}

#if defined(QMARG_TESTS_WITH_CUDA)
// The transposed path called alone, for every count of unselected qubits u =
// 0 .. 4: where BinStationary's rule prefers the streaming kernel (small
// states, lists starting 0, 1, ..., 5) this is the only test of it. Both
// ways of loading the state (StateLoads) give the same bits; on states this
// small the library itself loads them plainly. (A build without CUDA has no
// such function.)
TYPED_TEST(MarginalTransposeTest, ItsKernelForEveryUnselectedCountMatchesTheCpuReference) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    for (int n : {11, 12, 13, 17, 20}) {
        const std::uint64_t state_seed = rng();
        StateVector<TypeParam> gpu(n, Device::Gpu);
        gpu.set_random_state(state_seed);
        const StateVector<TypeParam> cpu = gpu.to(Device::Cpu);
        for (int k = n; k >= n - qmarg::gpu::kTransposeMaxUnselected; --k) {
            for (const char* name : {"low", "high", "scattered", "descending", "random"}) {
                const Qubits qubits = layout(name, n, k, rng);
                SCOPED_TRACE("random seed " + std::to_string(seed) + ", n = " + std::to_string(n) + ", " +
                             qmarg_test::describe(qubits) + ", transposed path alone");
                qmarg::DeviceBuffer<double> out(std::size_t{1} << k);
                qmarg::gpu::marginal_probabilities_transpose(gpu.data(), n, qubits, StateLoads::Normal, out.data());
                const std::vector<double> first = out.to_host();
                expect_bins_near<TypeParam>(first, qmarg::marginal_probabilities(cpu, qubits));
                qmarg::gpu::marginal_probabilities_transpose(gpu.data(), n, qubits, StateLoads::Normal, out.data());
                const std::vector<double> again = out.to_host();
                EXPECT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * sizeof(double)))
                    << "not bitwise equal on repeat";
                qmarg::gpu::marginal_probabilities_transpose(gpu.data(), n, qubits, StateLoads::EvictFirst,
                                                             out.data());
                const std::vector<double> evict_first = out.to_host();
                EXPECT_EQ(0, std::memcmp(first.data(), evict_first.data(), first.size() * sizeof(double)))
                    << "evict-first loads changed the bits";
                if (this->HasFatalFailure()) return;
            }
        }
    }
}
#endif

// Just outside the path's range, the other paths answer: n = 10 (the small-state
// kernel) and k = n - 5 (the streaming engine).
TYPED_TEST(MarginalTransposeTest, NeighboursOfItsRange) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    for (int n : {10, 11, 16, 20}) {
        const std::uint64_t state_seed = rng();
        StateVector<TypeParam> gpu(n, Device::Gpu);
        gpu.set_random_state(state_seed);
        const StateVector<TypeParam> cpu = gpu.to(Device::Cpu);
        for (int k : {n, n - 4, n - 5}) {
            EXPECT_EQ(qmarg::gpu::transpose_applies(n, k), n >= 11 && k >= n - 4);
            for (const char* name : {"descending", "random"}) check_case(gpu, cpu, state_seed, layout(name, n, k, rng));
        }
    }
}

}  // namespace
