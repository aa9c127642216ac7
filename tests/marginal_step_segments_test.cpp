// BinStationary's streaming kernel where every step ends a segment (its
// grouped form with kSegmentTasks = 1, cuda/marginal_bin_stationary.cu):
// qubit lists whose unselected qubits all lie among 0..5, so that bit 0 and
// the lane bits hold them and each load is a segment of its own; and where
// every second step does (kSegmentTasks = 2): one more unselected qubit, 6 or
// n - 1. Against the CPU reference on
// fresh random states, float and double, with bit 0 selected or not and the
// lane bits all or partly unselected, in ascending, descending and random
// orders; bitwise equal on repeat. Lists of k <= n - 5 go through the library
// (BinStationary, BinStationaryAtomic, Auto); lists of k >= n - 4, which the
// library may send to the transposed path, also through the streaming path
// alone, with plain and with evict-first state loads (StateLoads). Failures
// name the seed, n and the qubit list.
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "marginal_support.hpp"
#include "test_support.hpp"

namespace {

using qmarg::Device;
using qmarg::MarginalOptions;
using qmarg::MarginalStrategy;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg_test::expect_bins_near;

template <class Real>
using MarginalStepSegmentsTest = qmarg_test::GpuTest<Real>;

TYPED_TEST_SUITE(MarginalStepSegmentsTest, qmarg_test::Reals, qmarg_test::RealName);

// Qubits 6..n-1 but `gap` (-1: none) and `low` (qubits among 0..5), in
// ascending, descending or random order.
Qubits step_list(int n, const std::vector<int>& low, const std::string& order, std::mt19937_64& rng, int gap = -1) {
    Qubits qubits(low.begin(), low.end());
    for (int q = 6; q < n; ++q)
        if (q != gap) qubits.push_back(q);
    std::sort(qubits.begin(), qubits.end());
    if (order == "descending") std::reverse(qubits.begin(), qubits.end());
    if (order == "random") std::shuffle(qubits.begin(), qubits.end(), rng);
    return qubits;
}

// Selected qubits among 0..5: none (k = n - 6), bit 0 alone, a lane bit alone,
// and (k >= n - 4) bit 0 with lane bits or lane bits without bit 0.
const std::vector<std::vector<int>> kLibraryLows = {{}, {0}, {3}};
const std::vector<std::vector<int>> kStreamingLows = {{0, 2, 4}, {1, 5}, {0, 1, 2, 3, 4}, {1, 2, 3, 4, 5}};

TYPED_TEST(MarginalStepSegmentsTest, SegmentsOfOneOrTwoLoadsMatchTheCpuReference) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    for (int n : {12, 13, 16, 21, 22}) {
        const std::uint64_t state_seed = rng();
        StateVector<TypeParam> gpu(n, Device::Gpu);
        gpu.set_random_state(state_seed);
        const StateVector<TypeParam> cpu = gpu.to(Device::Cpu);
        for (const char* order : {"ascending", "descending", "random"}) {
            // Segments of one task, then of two (qubit 6 or n - 1 unselected too).
            std::vector<Qubits> lists;
            for (const std::vector<int>& low : kLibraryLows) lists.push_back(step_list(n, low, order, rng));
            for (const int gap : {6, n - 1}) {
                for (const std::vector<int>& low : kLibraryLows) lists.push_back(step_list(n, low, order, rng, gap));
            }
            for (const Qubits& qubits : lists) {
                const std::vector<double> reference = qmarg::marginal_probabilities(cpu, qubits);
                for (MarginalStrategy strategy :
                     {MarginalStrategy::BinStationary, MarginalStrategy::BinStationaryAtomic, MarginalStrategy::Auto}) {
                    SCOPED_TRACE("random seed " + std::to_string(seed) + ", n = " + std::to_string(n) + ", " +
                                 qmarg_test::describe(qubits) + ", " + qmarg::to_string(strategy));
                    const MarginalOptions options{strategy};
                    const std::vector<double> first = qmarg::marginal_probabilities(gpu, qubits, options);
                    expect_bins_near<TypeParam>(first, reference);
                    const std::vector<double> again = qmarg::marginal_probabilities(gpu, qubits, options);
                    EXPECT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * sizeof(double)))
                        << "not bitwise equal on repeat";
                }
            }
#if defined(QMARG_TESTS_WITH_CUDA)
            for (const std::vector<int>& low : kStreamingLows) {
                const Qubits qubits = step_list(n, low, order, rng);
                SCOPED_TRACE("random seed " + std::to_string(seed) + ", n = " + std::to_string(n) + ", " +
                             qmarg_test::describe(qubits) + ", streaming path alone");
                qmarg_test::expect_streaming_path_matches(gpu, qubits, qmarg::marginal_probabilities(cpu, qubits));
            }
#endif
            if (this->HasFatalFailure()) return;
        }
    }
}

}  // namespace
