// The GPU marginal strategies (GlobalAtomic, SharedPrivatized, Partitioned and
// Auto) against the CPU reference on a CPU copy of the same fresh random state,
// for float and double states: every ordered subset for small n, random subsets
// up to n = 24, the edge cases, the device-buffer overload, the limit errors,
// Auto on every k, and one 2^31-amplitude state that needs 64-bit indices.
//
// A strategy is checked wherever it can run the case; where its bins cannot fit
// (shared memory per block, free device memory) it must throw a limit Error
// instead. Every failure names the seed, n, the qubit list and the strategy.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <iomanip>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "format.hpp"
#include "marginal_support.hpp"
#include "test_support.hpp"

namespace {

using qmarg_test::expect_bins_near;

using qmarg::Device;
using qmarg::MarginalOptions;
using qmarg::MarginalStrategy;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg_test::fresh_seed;

const MarginalStrategy kStrategies[] = {MarginalStrategy::Auto, MarginalStrategy::GlobalAtomic,
                                        MarginalStrategy::SharedPrivatized, MarginalStrategy::Partitioned,
                                        MarginalStrategy::BinStationary, MarginalStrategy::BinStationaryAtomic};

template <class Real>
using MarginalStrategiesTest = qmarg_test::GpuTest<Real>;

TYPED_TEST_SUITE(MarginalStrategiesTest, qmarg_test::Reals, qmarg_test::RealName);

std::string to_text(const Qubits& qubits) {
    std::string text = "{";
    for (std::size_t j = 0; j < qubits.size(); ++j) text += (j ? ", " : "") + std::to_string(qubits[j]);
    return text + "}";
}

std::string case_text(std::uint64_t seed, int n, const Qubits& qubits, MarginalStrategy strategy) {
    return "random seed " + std::to_string(seed) + ", n = " + std::to_string(n) + ", qubits " + to_text(qubits) +
           ", strategy " + qmarg::to_string(strategy);
}

Qubits ascending(int first, int count) {
    Qubits qubits(count);
    std::iota(qubits.begin(), qubits.end(), first);
    return qubits;
}

Qubits descending(int n) {
    Qubits qubits = ascending(0, n);
    std::reverse(qubits.begin(), qubits.end());
    return qubits;
}

// What the test expects of a strategy on a case, from the same footprints the
// library checks: SharedPrivatized needs 2^k doubles of shared memory per block;
// Partitioned needs ceil(2^n / 128) partitions of 2^k doubles. Partitioned runs
// are kept to a budget so the suite stays quick; between that budget and the
// GPU's whole memory either outcome is legitimate, and the case is not checked.
enum class Expect { Runs, Throws, NotChecked };

struct GpuLimits {
    std::size_t shared_bytes_per_block = 0;
    std::size_t total_memory = 0;
    std::size_t partitioned_budget = 0;

    static GpuLimits query() {
        const qmarg::GpuInfo info = qmarg::gpu_info();
        GpuLimits limits;
        limits.shared_bytes_per_block = info.shared_memory_per_block_optin;
        limits.total_memory = info.global_memory_bytes;
        limits.partitioned_budget = std::min(info.free_memory_bytes / 4, std::size_t{2} << 30);
        return limits;
    }

    int shared_max_qubits() const {
        int k = 0;
        while ((std::size_t{8} << (k + 1)) <= shared_bytes_per_block) ++k;
        return k;
    }
};

long double partitioned_bytes(int n, int k) {
    const long double blocks = std::max<long double>(1, std::ceil(std::ldexp(1.0L, n) / 128));
    return std::ldexp(blocks, k) * sizeof(double);
}

Expect expectation(MarginalStrategy strategy, int n, int k, const GpuLimits& limits) {
    switch (strategy) {
        case MarginalStrategy::SharedPrivatized: return k <= limits.shared_max_qubits() ? Expect::Runs : Expect::Throws;
        case MarginalStrategy::Partitioned: {
            const long double bytes = partitioned_bytes(n, k);
            if (bytes <= limits.partitioned_budget) return Expect::Runs;
            return bytes > limits.total_memory ? Expect::Throws : Expect::NotChecked;
        }
        default: return Expect::Runs;
    }
}

// A limit Error from the library's own check, not a CUDA failure (nothing may be
// allocated or launched before the check), naming the strategy.
template <class Call>
void expect_limit_error(Call call, MarginalStrategy strategy) {
    try {
        call();
        ADD_FAILURE() << "expected a limit Error from " << qmarg::to_string(strategy);
    } catch (const qmarg::CudaError& e) {
        ADD_FAILURE() << "expected a limit Error, got a CUDA error: " << e.what();
    } catch (const qmarg::Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(qmarg::to_string(strategy), 0), 0u) << e.what();
    }
}

// Every strategy on one qubit list against the CPU reference.
template <class Real>
void check_strategies(const StateVector<Real>& gpu, const StateVector<Real>& cpu, std::uint64_t seed,
                      const Qubits& qubits, const GpuLimits& limits) {
    const int n = gpu.num_qubits();
    const std::vector<double> reference = qmarg::marginal_probabilities(cpu, qubits);
    for (MarginalStrategy strategy : kStrategies) {
        SCOPED_TRACE(case_text(seed, n, qubits, strategy));
        const MarginalOptions options{strategy};
        switch (expectation(strategy, n, static_cast<int>(qubits.size()), limits)) {
            case Expect::Runs:
                expect_bins_near<Real>(qmarg::marginal_probabilities(gpu, qubits, options), reference);
                break;
            case Expect::Throws:
                expect_limit_error([&] { qmarg::marginal_probabilities(gpu, qubits, options); }, strategy);
                break;
            case Expect::NotChecked: break;
        }
    }
}

template <class Real>
StateVector<Real> random_gpu_state(int n, std::uint64_t seed) {
    StateVector<Real> state(n, Device::Gpu);
    state.set_random_state(seed);
    return state;
}

// A fresh random state on the GPU and its CPU copy.
template <class Real>
struct StatePair {
    std::uint64_t seed;
    StateVector<Real> gpu;
    StateVector<Real> cpu;

    explicit StatePair(int n) : seed(fresh_seed()), gpu(random_gpu_state<Real>(n, seed)), cpu(gpu.to(Device::Cpu)) {}
};

TYPED_TEST(MarginalStrategiesTest, SmallStatesEveryOrderedSubset) {
    const GpuLimits limits = GpuLimits::query();
    std::mt19937_64 rng(fresh_seed());
    for (int n = 1; n <= 5; ++n) {
        StatePair<TypeParam> state(n);
        // n <= 4: every ordered subset of every size; n = 5: every one of up to
        // 3 qubits, and random orders of 4 and 5.
        std::vector<Qubits> lists = qmarg_test::all_ordered_subsets(n, n <= 4 ? n : 3);
        if (n == 5) {
            for (int i = 0; i < 8; ++i) lists.push_back(qmarg_test::random_qubits(n, 4 + i % 2, rng));
        }
        for (const Qubits& qubits : lists) check_strategies(state.gpu, state.cpu, state.seed, qubits, limits);
    }
}

TYPED_TEST(MarginalStrategiesTest, EdgeCases) {
    const GpuLimits limits = GpuLimits::query();
    for (int n : {1, 2, 3, 7, 13, 20}) {
        StatePair<TypeParam> state(n);
        std::vector<Qubits> lists = {{0}, {n - 1}, descending(n), ascending(0, n)};
        if (n >= 2) {
            lists.push_back({n - 1, 0});
            lists.push_back({0, n - 1});
        }
        for (const Qubits& qubits : lists) check_strategies(state.gpu, state.cpu, state.seed, qubits, limits);
    }
}

// k = 1, 2, a random k, n - 1 and n, each on random qubits in random order.
template <class Real>
void check_random_subsets(int n, const GpuLimits& limits, std::mt19937_64& rng) {
    StatePair<Real> state(n);
    const int ks[] = {1, std::min(2, n), std::uniform_int_distribution<int>(1, n)(rng), std::max(1, n - 1), n};
    for (int k : ks) {
        check_strategies(state.gpu, state.cpu, state.seed, qmarg_test::random_qubits(n, k, rng), limits);
    }
}

TYPED_TEST(MarginalStrategiesTest, RandomSubsetsMediumStates) {
    const GpuLimits limits = GpuLimits::query();
    std::mt19937_64 rng(fresh_seed());
    for (int n = 6; n <= 16; ++n) check_random_subsets<TypeParam>(n, limits, rng);
}

TYPED_TEST(MarginalStrategiesTest, RandomSubsetsLargeStates) {
    const GpuLimits limits = GpuLimits::query();
    std::mt19937_64 rng(fresh_seed());
    for (int n : {17, 19, 21, 22, 23, 24}) check_random_subsets<TypeParam>(n, limits, rng);
}

TYPED_TEST(MarginalStrategiesTest, DeviceBufferResultsStayOnTheGpu) {
    StatePair<TypeParam> state(12);
    const Qubits qubits = {3, 0, 11, 7};
    const std::vector<double> reference = qmarg::marginal_probabilities(state.cpu, qubits);
    for (MarginalStrategy strategy : kStrategies) {
        SCOPED_TRACE(case_text(state.seed, 12, qubits, strategy));
        qmarg::DeviceBuffer<double> out(5);  // the wrong size: the call resizes it
        qmarg::marginal_probabilities(state.gpu, qubits, out, MarginalOptions{strategy});
        EXPECT_EQ(out.size(), 16u);
        expect_bins_near<TypeParam>(out.to_host(), reference);
        // Reusing the buffer: the bins are zeroed again, not added to the last result.
        qmarg::marginal_probabilities(state.gpu, qubits, out, MarginalOptions{strategy});
        expect_bins_near<TypeParam>(out.to_host(), reference);
    }
    // A CPU state cannot fill a device buffer.
    qmarg::DeviceBuffer<double> out;
    EXPECT_THROW(qmarg::marginal_probabilities(state.cpu, qubits, out), qmarg::Error);
}

TYPED_TEST(MarginalStrategiesTest, SharedPrivatizedBeyondSharedMemoryIsAnError) {
    const GpuLimits limits = GpuLimits::query();
    const int k_max = limits.shared_max_qubits();
    ASSERT_GE(k_max, 1);
    StatePair<TypeParam> state(k_max + 1);
    const MarginalOptions shared{MarginalStrategy::SharedPrivatized};

    // The largest bins that fit (past 48 KiB they need the opt-in shared memory).
    for (int k = std::max(1, k_max - 2); k <= k_max; ++k) {
        const Qubits qubits = descending(k_max + 1);
        const Qubits first_k(qubits.begin(), qubits.begin() + k);
        SCOPED_TRACE(case_text(state.seed, k_max + 1, first_k, MarginalStrategy::SharedPrivatized));
        expect_bins_near<TypeParam>(qmarg::marginal_probabilities(state.gpu, first_k, shared),
                                    qmarg::marginal_probabilities(state.cpu, first_k));
    }

    const int k = k_max + 1;
    const std::string expected =
        "SharedPrivatized needs 2^" + std::to_string(k) + " bins = " + qmarg::detail::human_bytes(std::size_t{8} << k) +
        " of shared memory per block but this GPU allows " + qmarg::detail::human_bytes(limits.shared_bytes_per_block) +
        ": at most " + std::to_string(k_max) + " qubits";
    if (limits.shared_bytes_per_block == 232448) {  // an H100: the message as a user reads it
        EXPECT_EQ(expected,
                  "SharedPrivatized needs 2^15 bins = 256.0 KiB of shared memory per block but this GPU "
                  "allows 227.0 KiB: at most 14 qubits");
    }
    try {
        qmarg::marginal_probabilities(state.gpu, ascending(0, k), shared);
        FAIL() << "SharedPrivatized with " << k << " qubits should not fit";
    } catch (const qmarg::CudaError& e) {
        FAIL() << "expected the limit Error, got a CUDA error: " << e.what();
    } catch (const qmarg::Error& e) {
        EXPECT_EQ(std::string(e.what()), expected);
    }
    // The failed call left nothing behind: the GPU and the state still work.
    const Qubits zero = {0};
    expect_bins_near<TypeParam>(qmarg::marginal_probabilities(state.gpu, zero, shared),
                                qmarg::marginal_probabilities(state.cpu, zero));
}

TYPED_TEST(MarginalStrategiesTest, PartitionedBeyondFreeMemoryIsAnError) {
    constexpr int n = 24;
    StatePair<TypeParam> state(n);
    const MarginalOptions partitioned{MarginalStrategy::Partitioned};
    std::mt19937_64 rng(fresh_seed());
    const Qubits qubits = qmarg_test::random_qubits(n, n, rng);
    // 2^24 / 128 = 131072 partitions of 2^24 doubles: 16 TiB.
    const std::string prefix = "Partitioned needs 131072 partitions of 2^24 bins = 16.0 TiB of device memory but ";
    const auto attempt = [&] {
        try {
            qmarg::marginal_probabilities(state.gpu, qubits, partitioned);
            ADD_FAILURE() << "Partitioned with 16 TiB of partitions should not fit";
        } catch (const qmarg::CudaError& e) {
            ADD_FAILURE() << "expected the limit Error, got a CUDA error: " << e.what();
        } catch (const qmarg::Error& e) {
            const std::string message = e.what();
            EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
            EXPECT_NE(message.find(" is free: at most "), std::string::npos) << message;
            EXPECT_EQ(message.substr(message.size() - std::string(" qubits for a 24-qubit state").size()),
                      " qubits for a 24-qubit state")
                << message;
        }
    };
    attempt();
    // Nothing leaked by the failed call (a second one, so that first-use
    // allocations by the runtime are out of the picture; the slack is far below
    // the 128 MiB output the call allocates and must free).
    const std::size_t free_before = qmarg::gpu_info().free_memory_bytes;
    attempt();
    EXPECT_GE(qmarg::gpu_info().free_memory_bytes + (std::size_t{1} << 20), free_before);
    // A k within the suite's memory budget does run.
    const GpuLimits limits = GpuLimits::query();
    int k = 1;
    while (k < n && partitioned_bytes(n, k + 1) <= limits.partitioned_budget) ++k;
    const Qubits fits(qubits.begin(), qubits.begin() + k);
    SCOPED_TRACE(case_text(state.seed, n, fits, MarginalStrategy::Partitioned));
    expect_bins_near<TypeParam>(qmarg::marginal_probabilities(state.gpu, fits, partitioned),
                                qmarg::marginal_probabilities(state.cpu, fits));
}

TYPED_TEST(MarginalStrategiesTest, AutoRunsEveryK) {
    std::mt19937_64 rng(fresh_seed());
    const MarginalOptions automatic{MarginalStrategy::Auto};
    for (int n : {1, 5, 11, 18, 24}) {
        StatePair<TypeParam> state(n);
        for (int k = 1; k <= n; ++k) {
            for (const Qubits& qubits : {ascending(0, k), ascending(n - k, k), qmarg_test::random_qubits(n, k, rng)}) {
                SCOPED_TRACE(case_text(state.seed, n, qubits, MarginalStrategy::Auto));
                std::vector<double> got;
                ASSERT_NO_THROW(got = qmarg::marginal_probabilities(state.gpu, qubits, automatic));
                expect_bins_near<TypeParam>(got, qmarg::marginal_probabilities(state.cpu, qubits));
            }
        }
    }
}

// 2^31 amplitudes (a 16 GiB float state): indices past 2^31 - 1 overflow any
// 32-bit int on the way (the thread index, the loop stride, the size), so every
// strategy must count each amplitude once and bin the highest ones right.
// Closed-form answers: a few exact dyadic probabilities at chosen indices
// (compared exactly), and the uniform superposition (every bin 2^(n-k) a^2).
TEST(MarginalStrategiesLargeState, ThirtyOneQubitsNeedSixtyFourBitIndices) {
    QMARG_SKIP_IF_UNAVAILABLE(Device::Gpu);
    constexpr int n = 31;
    const std::size_t needed = qmarg::state_bytes(n, sizeof(std::complex<float>)) + (std::size_t{2} << 30);
    const std::size_t free_bytes = qmarg::gpu_info().free_memory_bytes;
    if (free_bytes < needed) {
        GTEST_SKIP() << "needs " << qmarg::detail::human_bytes(needed) << " of free GPU memory, "
                     << qmarg::detail::human_bytes(free_bytes) << " is free";
    }
    StateVector<float> state(n, Device::Gpu);
    const std::vector<Qubits> lists = {{30}, {0}, {30, 0}, {0, 30}};
    const qmarg::Index top = (qmarg::Index{1} << n) - 1;

    // |amplitude|^2 = 1/16, 1/4 and 9/16 at indices 1, 2^30 and 2^31 - 1, zero elsewhere.
    state.set_basis_state(top);
    state.set_amplitude(top, {0.0f, 0.75f});
    state.set_amplitude(qmarg::Index{1} << 30, {0.5f, 0.0f});
    state.set_amplitude(1, {0.25f, 0.0f});
    const std::vector<std::pair<qmarg::Index, double>> sparse = {
        {1, 0.0625}, {qmarg::Index{1} << 30, 0.25}, {top, 0.5625}};
    for (const Qubits& qubits : lists) {
        std::vector<double> expected(std::size_t{1} << qubits.size(), 0.0);
        for (const auto& entry : sparse) {
            expected[qmarg::gather_bits(entry.first, qubits.data(), static_cast<int>(qubits.size()))] += entry.second;
        }
        for (MarginalStrategy strategy : kStrategies) {
            SCOPED_TRACE("sparse state, n = 31, qubits " + to_text(qubits) + ", strategy " +
                         qmarg::to_string(strategy));
            EXPECT_EQ(qmarg::marginal_probabilities(state, qubits, MarginalOptions{strategy}), expected);
        }
    }

    state.set_uniform_superposition();
    const double a = state.amplitude(0).real();
    for (const Qubits& qubits : lists) {
        const int k = static_cast<int>(qubits.size());
        const std::vector<double> expected(std::size_t{1} << k, std::ldexp(a * a, n - k));
        for (MarginalStrategy strategy : kStrategies) {
            SCOPED_TRACE("uniform state, n = 31, qubits " + to_text(qubits) + ", strategy " +
                         qmarg::to_string(strategy));
            expect_bins_near<float>(qmarg::marginal_probabilities(state, qubits, MarginalOptions{strategy}), expected);
        }
    }
}

}  // namespace

namespace {

// BinStationary promises bitwise-identical results on every call: no
// floating-point atomics, and a launch shape fixed by (n, qubits). Checked on
// the shapes that take each of its paths: the small-state kernel (n < 12),
// direct writes, one and several levels of partial rows, and the transposed
// path (k = n - 1 and n in random orders, at n = 12, 16 and 22, where
// takes_transposed_path picks it; tests/marginal_transpose_test.cpp checks it
// further).
TYPED_TEST(MarginalStrategiesTest, BinStationaryIsBitwiseRepeatable) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE("random seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const MarginalOptions engine{MarginalStrategy::BinStationary};
    for (int n : {5, 11, 12, 16, 22}) {
        StateVector<TypeParam> state(n, Device::Gpu);
        state.set_random_state(rng());
        for (int k : {1, 2, n / 2, n - 1, n}) {
            if (k < 1) continue;
            const Qubits qubits = qmarg_test::random_qubits(n, k, rng);
            const std::vector<double> first = qmarg::marginal_probabilities(state, qubits, engine);
            for (int repeat = 0; repeat < 5; ++repeat) {
                const std::vector<double> again = qmarg::marginal_probabilities(state, qubits, engine);
                ASSERT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * sizeof(double)))
                    << "n=" << n << " k=" << k << " repeat " << repeat;
            }
        }
    }
}

// The plans whose few parts cut each of 128 segments in two (double) or in
// four (float states of up to 24 qubits, Parts::FewInFours): k = 10 on the
// highest qubits, ascending and descending, and k = 14 spread over the
// range, at n = 22 and 24. Every strategy against the CPU reference, and
// BinStationary bitwise repeatable.
TYPED_TEST(MarginalStrategiesTest, SegmentsCutInTwoOrFour) {
    const GpuLimits limits = GpuLimits::query();
    const MarginalOptions engine{MarginalStrategy::BinStationary};
    for (int n : {22, 24}) {
        StatePair<TypeParam> state(n);
        Qubits spread(14);
        for (int j = 0; j < 14; ++j) spread[j] = j * (n - 1) / 13;
        Qubits highest_descending = ascending(n - 10, 10);
        std::reverse(highest_descending.begin(), highest_descending.end());
        for (const Qubits& qubits : {ascending(n - 10, 10), highest_descending, spread}) {
            check_strategies(state.gpu, state.cpu, state.seed, qubits, limits);
            const std::vector<double> first = qmarg::marginal_probabilities(state.gpu, qubits, engine);
            const std::vector<double> again = qmarg::marginal_probabilities(state.gpu, qubits, engine);
            EXPECT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * sizeof(double)))
                << case_text(state.seed, n, qubits, MarginalStrategy::BinStationary);
        }
    }
}

}  // namespace

namespace {

// BinStationary keeps the plans of its last 16 cases. 21 cases, some with the
// same qubit list on states of different sizes, each checked against the CPU
// reference: new (a plan made), again 5 cases later (a plan found), and once
// more after all 21 (made again, after its entry was replaced). A plan found
// for the wrong case gives wrong bins.
TYPED_TEST(MarginalStrategiesTest, BinStationaryCasesInTurnGetTheirOwnPlans) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE("random seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    std::vector<StatePair<TypeParam>> states;
    states.reserve(3);
    for (int n : {13, 14, 16}) states.emplace_back(n);
    struct Case {
        std::size_t state;
        Qubits qubits;
        std::vector<double> reference;
    };
    std::vector<Case> cases;
    for (int j = 0; j < 21; ++j) {
        const std::size_t state = static_cast<std::size_t>(j) % states.size();
        const int n = states[state].gpu.num_qubits();
        // Every third list is the previous case's (13 qubits) asked of the 14-qubit state.
        const Qubits qubits = j % 3 == 1 && j >= 3 ? cases[static_cast<std::size_t>(j) - 1].qubits
                                                   : qmarg_test::random_qubits(n, 1 + static_cast<int>(rng() % 12), rng);
        cases.push_back(Case{state, qubits, qmarg::marginal_probabilities(states[state].cpu, qubits)});
    }
    const MarginalOptions engine{MarginalStrategy::BinStationary};
    const auto check = [&](std::size_t j, const char* visit) {
        const Case& c = cases[j];
        const StatePair<TypeParam>& pair = states[c.state];
        SCOPED_TRACE(case_text(pair.seed, pair.gpu.num_qubits(), c.qubits, MarginalStrategy::BinStationary) +
                     ", case " + std::to_string(j) + " " + visit);
        expect_bins_near<TypeParam>(qmarg::marginal_probabilities(pair.gpu, c.qubits, engine), c.reference);
    };
    for (std::size_t j = 0; j < cases.size(); ++j) {
        check(j, "new");
        if (j >= 5) check(j - 5, "again");
    }
    for (std::size_t j = 0; j < cases.size(); ++j) check(j, "after all");
}

// MarginalOptions::deterministic: the seed strategies and BinStationaryAtomic
// refuse it by name, and Auto and BinStationary under it give BinStationary's
// bits on every call.
TYPED_TEST(MarginalStrategiesTest, DeterministicRequestRefusesTheAtomicStrategies) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE("random seed " + std::to_string(seed));
    const StateVector<TypeParam> state = random_gpu_state<TypeParam>(14, seed);
    const Qubits qubits = {13, 0, 6};
    for (MarginalStrategy strategy :
         {MarginalStrategy::GlobalAtomic, MarginalStrategy::SharedPrivatized, MarginalStrategy::Partitioned,
          MarginalStrategy::BinStationaryAtomic}) {
        MarginalOptions options{strategy};
        options.deterministic = true;
        try {
            qmarg::marginal_probabilities(state, qubits, options);
            ADD_FAILURE() << "expected an Error from " << qmarg::to_string(strategy) << " with deterministic = true";
        } catch (const qmarg::Error& e) {
            EXPECT_EQ(std::string(e.what()),
                      std::string("marginal strategy ") + qmarg::to_string(strategy) +
                          " is not deterministic (its floating-point atomic additions run in a different order on "
                          "every call); with MarginalOptions::deterministic = true use BinStationary or Auto");
        }
    }
    const std::vector<double> engine =
        qmarg::marginal_probabilities(state, qubits, MarginalOptions{MarginalStrategy::BinStationary});
    for (MarginalStrategy strategy : {MarginalStrategy::Auto, MarginalStrategy::BinStationary}) {
        MarginalOptions options{strategy};
        options.deterministic = true;
        for (int repeat = 0; repeat < 3; ++repeat) {
            const std::vector<double> got = qmarg::marginal_probabilities(state, qubits, options);
            ASSERT_EQ(got.size(), engine.size());
            EXPECT_EQ(0, std::memcmp(got.data(), engine.data(), got.size() * sizeof(double)))
                << qmarg::to_string(strategy) << " repeat " << repeat;
        }
    }
}

}  // namespace
