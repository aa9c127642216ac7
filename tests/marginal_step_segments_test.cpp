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
// Float states of 2^24 to 2^28 amplitudes end those segments as a
// reduce-scatter over the lanes (step_scatter_kernel) where at least two
// lane bits are unselected: ScatteredSegmentEndsMatchTheCpuReference runs
// such lists at n = 24 (double states run them through the butterflies), and
// WhichListsScatter checks on the host which lists take that form.
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "marginal_bin_stationary_plan.hpp"
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
// Lists whose unselected lane bits are exactly two (the fewest a scatter of
// four segments needs), with bit 0 selected and not.
const std::vector<std::vector<int>> kTwoLaneLows = {{0, 1, 2, 3}, {3, 4, 5}};

// The lane bits (index bits 1..5) that `low` leaves unselected.
int unselected_lane_bits(const std::vector<int>& low) {
    return 5 - static_cast<int>(std::count_if(low.begin(), low.end(), [](int q) { return q >= 1; }));
}

// The lists of `lows` (k >= n - 4) through the streaming path alone, which
// the library may not take for them (CUDA builds; the path is internal).
template <class Real>
void expect_streaming_lists_match(const StateVector<Real>& gpu, const StateVector<Real>& cpu,
                                  const std::vector<std::vector<int>>& lows, const std::string& order,
                                  std::mt19937_64& rng, std::uint64_t seed) {
#if defined(QMARG_TESTS_WITH_CUDA)
    const int n = gpu.num_qubits();
    for (const std::vector<int>& low : lows) {
        const Qubits qubits = step_list(n, low, order, rng);
        SCOPED_TRACE("random seed " + std::to_string(seed) + ", n = " + std::to_string(n) + ", " +
                     qmarg_test::describe(qubits) + ", streaming path alone");
        qmarg_test::expect_streaming_path_matches(gpu, qubits, qmarg::marginal_probabilities(cpu, qubits));
    }
#else
    (void)gpu, (void)cpu, (void)lows, (void)order, (void)rng, (void)seed;
#endif
}

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
            expect_streaming_lists_match(gpu, cpu, kStreamingLows, order, rng, seed);
            if (this->HasFatalFailure()) return;
        }
    }
}

// The rule's side (host work alone, so it runs in every build): float
// states of 2^24 amplitudes and more (up to 2^28) scatter every list of the
// GPU test whose segments are one or two loads and leave two or more lane
// bits unselected; double states and smaller float states do not, and
// neither do lists with fewer unselected lane bits.
TEST(MarginalStepScatterPlan, WhichListsScatter) {
    using qmarg::gpu::streaming_scatters_segments;
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    for (int n : {22, 23, 24, 25, 26, 28, 29}) {
        for (bool single : {false, true}) {
            const bool scatters = single && n >= 24 && n <= 28;
            for (const char* order : {"ascending", "descending", "random"}) {
                std::vector<std::vector<int>> lows = kLibraryLows;
                lows.insert(lows.end(), kStreamingLows.begin(), kStreamingLows.end());
                lows.insert(lows.end(), kTwoLaneLows.begin(), kTwoLaneLows.end());
                for (const std::vector<int>& low : lows) {
                    for (const int gap : {-1, 6, n - 1}) {
                        const Qubits qubits = step_list(n, low, order, rng, gap);
                        EXPECT_EQ(scatters && unselected_lane_bits(low) >= 2,
                                  streaming_scatters_segments(n, qubits, single))
                            << "random seed " << seed << ", n = " << n << ", " << qmarg_test::describe(qubits)
                            << (single ? ", float" : ", double");
                    }
                }
            }
        }
    }
    // The sweep's cells that it was written for: float n = 26, k = 20 and
    // n = 24, k = 17..19 on the highest qubits, either order.
    for (const auto& [n, k] : std::vector<std::pair<int, int>>{{26, 20}, {24, 17}, {24, 18}, {24, 19}}) {
        Qubits highest = qmarg_test::highest_qubits(n, k, false);
        EXPECT_TRUE(streaming_scatters_segments(n, highest, true)) << "n = " << n << ", k = " << k;
        std::reverse(highest.begin(), highest.end());
        EXPECT_TRUE(streaming_scatters_segments(n, highest, true)) << "n = " << n << ", k = " << k << " descending";
    }
}

// The step form at n = 24, where float states scatter: one or two loads a
// segment, bit 0 selected or not, two to five lane bits unselected, in
// descending and random order; through BinStationary (bitwise equal on
// repeat) and, for lists of k >= n - 4, the streaming path alone.
TYPED_TEST(MarginalStepSegmentsTest, ScatteredSegmentEndsMatchTheCpuReference) {
    const std::uint64_t seed = qmarg_test::fresh_seed();
    std::mt19937_64 rng(seed);
    const int n = 24;
    StateVector<TypeParam> gpu(n, Device::Gpu);
    gpu.set_random_state(rng());
    const StateVector<TypeParam> cpu = gpu.to(Device::Cpu);
    for (const char* order : {"descending", "random"}) {
        std::vector<Qubits> lists;
        for (const std::vector<int>& low : kLibraryLows) {
            for (const int gap : {-1, 6, n - 1}) lists.push_back(step_list(n, low, order, rng, gap));
        }
        for (const Qubits& qubits : lists) {
            SCOPED_TRACE("random seed " + std::to_string(seed) + ", n = " + std::to_string(n) + ", " +
                         qmarg_test::describe(qubits));
            const MarginalOptions options{MarginalStrategy::BinStationary};
            const std::vector<double> first = qmarg::marginal_probabilities(gpu, qubits, options);
            expect_bins_near<TypeParam>(first, qmarg::marginal_probabilities(cpu, qubits));
            const std::vector<double> again = qmarg::marginal_probabilities(gpu, qubits, options);
            EXPECT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * sizeof(double)))
                << "not bitwise equal on repeat";
        }
        std::vector<std::vector<int>> lows = kStreamingLows;
        lows.insert(lows.end(), kTwoLaneLows.begin(), kTwoLaneLows.end());
        expect_streaming_lists_match(gpu, cpu, lows, order, rng, seed);
        if (this->HasFatalFailure()) return;
    }
}

}  // namespace
