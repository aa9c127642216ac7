// Gate fusion at the circuit level: a random 28-qubit circuit of depth 20 run
// on the GPU as written and after fuse_gates with m = 2, 3, 4, 5, double and
// float states.
//
// The circuit (random_layered_circuit, fixed seed kCircuitSeed): each layer is
// a u3(theta, phi, lambda) gate with angles uniform in [0, 2 pi) on every qubit
// (dense 2x2), then a random perfect pairing of the qubits (a shuffle, paired
// in order), each pair a CX or a CZ (even odds) with the first of the pair as
// control. 28 + 14 operations per layer, 840 in all.
//
// Every pass of a gate of up to 3 or 4 qubits over the state is bound by memory
// bandwidth, so the floor of a circuit of N operations is N copies of the state:
// floor_ms = ops x copy_ms, with the copy roofline (measure_copy_roofline in
// bench_support.cuh: the fastest of three ways to read and write the state
// once) measured in the same run. Counters per case: ms per circuit (median
// of runs, CUDA events; fusion itself is host work done once and reported
// apart as fuse_ms), speedup against the unfused circuit of the same
// precision, ops, ops by width (w1 .. w5: targets plus controls), copy_ms
// (with copy_kernel_ms, memcpy_ms and in_place_ms, the three measurements it
// is the least of), floor_ms, of_floor (floor / ms).
//
// Nothing is timed before it is checked: the fused circuit is run on the same
// fresh random state as the unfused one, and the two results must agree to 1e-10
// (double; 1e-4 in float, whose 840 roundings add up) in the 2-norm of their
// difference, computed in double on the GPU; the largest amplitude difference
// is reported too. The unfused case checks that the norm stays 1.
//
// Usage: circuit_fusion_bench [--qubits=28] [--depth=20] [--float=1] [benchmark flags].
// Expected to run in about a minute on an H100 (double: three 4 GiB states;
// float: three of 2 GiB).
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "apply_matrix.cuh"
#include "bench_support.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "qmarg/qmarg.hpp"

// fuse_gates promises fused gates the GPU can apply.
static_assert(qmarg::kMaxFusedQubits == qmarg::gpu::kMaxGateTargets,
              "kMaxFusedQubits (qmarg/fusion.hpp) must be the GPU's largest gate (cuda/apply_matrix.cuh)");

namespace qmarg {
namespace bench {
namespace {

using gpu::DeviceArray;

constexpr std::uint64_t kCircuitSeed = 20260528;
constexpr int kMaxWidthCounted = 5;

int g_qubits = 28;
int g_depth = 20;
int g_float = 1;

Circuit random_layered_circuit(int n, int depth, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    constexpr double kTwoPi = 6.283185307179586;
    std::uniform_real_distribution<double> angle(0.0, kTwoPi);
    Circuit circuit;
    circuit.source_name = "random layered circuit";
    circuit.num_qubits = n;
    std::vector<int> order(n);
    for (int layer = 0; layer < depth; ++layer) {
        for (int q = 0; q < n; ++q) {
            Operation op;
            op.name = "u3";
            op.targets = {q};
            const double theta = angle(rng), phi = angle(rng), lambda = angle(rng);
            op.matrix = gates::u3(theta, phi, lambda);
            circuit.operations.push_back(std::move(op));
        }
        for (int q = 0; q < n; ++q) order[q] = q;
        std::shuffle(order.begin(), order.end(), rng);
        for (int i = 0; i + 1 < n; i += 2) {
            const bool cz = rng() % 2 == 1;
            Operation op;
            op.name = cz ? "cz" : "cx";
            op.targets = {order[i + 1]};
            op.controls = {order[i]};
            op.matrix = cz ? gates::z() : gates::x();
            circuit.operations.push_back(std::move(op));
        }
    }
    return circuit;
}

// ---- checking -----------------------------------------------------------------

constexpr int kDiffThreads = 256;

// Per block: the sum of |a_i - b_i|^2 and the largest |a_i - b_i|, in double.
template <class Real>
__global__ void difference_kernel(const Real* a, const Real* b, Index count, double* block_sum2, double* block_max) {
    __shared__ double sum2[kDiffThreads];
    __shared__ double most[kDiffThreads];
    double s = 0, m = 0;
    const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
    for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        const double re = static_cast<double>(a[2 * i]) - static_cast<double>(b[2 * i]);
        const double im = static_cast<double>(a[2 * i + 1]) - static_cast<double>(b[2 * i + 1]);
        const double d2 = re * re + im * im;
        s += d2;
        m = fmax(m, d2);
    }
    sum2[threadIdx.x] = s;
    most[threadIdx.x] = m;
    __syncthreads();  // every partial written before any is read
    for (int half = kDiffThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            sum2[threadIdx.x] += sum2[threadIdx.x + half];
            most[threadIdx.x] = fmax(most[threadIdx.x], most[threadIdx.x + half]);
        }
        __syncthreads();  // this level complete before the next reads it
    }
    if (threadIdx.x == 0) {
        block_sum2[blockIdx.x] = sum2[0];
        block_max[blockIdx.x] = sqrt(most[0]);
    }
}

struct Difference {
    double norm = 0;  // || a - b ||_2
    double max = 0;   // max_i |a_i - b_i|
};

template <class Real>
Difference difference(const StateVector<Real>& a, const StateVector<Real>& b) {
    const Index count = a.size();
    const unsigned blocks = gpu::grid_stride_blocks(count, kDiffThreads);
    DeviceArray<double> partial(2 * static_cast<std::size_t>(blocks), "difference partials");
    difference_kernel<Real><<<blocks, kDiffThreads>>>(reinterpret_cast<const Real*>(a.data()),
                                                      reinterpret_cast<const Real*>(b.data()), count, partial.data(),
                                                      partial.data() + blocks);
    QMARG_CHECK_LAUNCH(difference_kernel);
    std::vector<double> host(2 * static_cast<std::size_t>(blocks));
    gpu::copy_to_host(host.data(), partial.data(), host.size() * sizeof(double));
    Difference d;
    for (unsigned i = 0; i < blocks; ++i) {
        d.norm += host[i];
        d.max = std::max(d.max, host[blocks + i]);
    }
    d.norm = std::sqrt(d.norm);
    return d;
}

template <class Real>
constexpr double check_tolerance() {
    return sizeof(Real) == 8 ? 1e-10 : 1e-4;
}

// ---- per-precision context ------------------------------------------------------

template <class Real>
struct Context {
    Circuit circuit;
    StateVector<Real> start;      // the random input of every check
    StateVector<Real> state;      // where circuits run
    StateVector<Real> reference;  // the unfused circuit applied to `start`
    CopyRoofline copy;
    double unfused_ms = 0;        // 0 until measured

    Context()
        : circuit(random_layered_circuit(g_qubits, g_depth, kCircuitSeed)),
          start(g_qubits, Device::Gpu),
          state(g_qubits, Device::Gpu),
          reference(g_qubits, Device::Gpu) {
        start.set_random_state((static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}());
        copy = measure_copy_roofline(start.data(), state.data(), start.bytes());
        reference.copy_from(start);
        run(reference, circuit);
    }

    // Median ms of `circuit` applied to `state`: 3 to 11 runs, as many as fit
    // in about 5 s (the unfused double circuit takes about 2 s a run).
    double time_circuit(const Circuit& c) {
        auto work = [&] { run(state, c); };
        const double probe = median(time_runs(work, 1, 0));
        const int runs = std::max(3, std::min(11, static_cast<int>(5000 / std::max(probe, 1e-3))));
        return median(time_runs(work, runs, 0));
    }
};

std::unique_ptr<Context<double>> g_double_context;
std::unique_ptr<Context<float>> g_float_context;

// One context at a time: each holds three states.
template <class Real>
Context<Real>& context();
template <>
Context<double>& context<double>() {
    g_float_context.reset();
    if (!g_double_context) g_double_context.reset(new Context<double>());
    return *g_double_context;
}
template <>
Context<float>& context<float>() {
    g_double_context.reset();
    if (!g_float_context) g_float_context.reset(new Context<float>());
    return *g_float_context;
}

// ---- the benchmark ---------------------------------------------------------------

// fuse = 0: the circuit as written.
template <class Real>
void circuit_case(benchmark::State& st, int fuse) {
    try {
        Context<Real>& ctx = context<Real>();
        const auto fuse_start = std::chrono::steady_clock::now();
        const Circuit circuit = fuse > 0 ? fuse_gates(ctx.circuit, fuse) : ctx.circuit;
        const double fuse_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - fuse_start).count();

        ctx.state.copy_from(ctx.start);
        run(ctx.state, circuit);
        const Difference error = difference(ctx.state, ctx.reference);
        const double norm_error = std::abs(total_probability(ctx.state) - 1.0);
        if (!(error.norm <= check_tolerance<Real>()) || !(norm_error <= 10 * check_tolerance<Real>())) {
            st.SkipWithError(("fused and unfused results differ: |difference| = " + std::to_string(error.norm) +
                              ", |norm - 1| = " + std::to_string(norm_error))
                                 .c_str());
            return;
        }

        const double ms = ctx.time_circuit(circuit);
        if (fuse == 0) ctx.unfused_ms = ms;
        for (auto _ : st) st.SetIterationTime(ms * 1e-3);

        const double ops = static_cast<double>(circuit.operations.size());
        std::vector<int> by_width(kMaxWidthCounted + 1, 0);
        for (const Operation& op : circuit.operations) {
            const std::size_t width = op.targets.size() + op.controls.size();
            if (width <= static_cast<std::size_t>(kMaxWidthCounted)) ++by_width[width];
        }
        st.SetLabel(fuse > 0 ? "fused, m = " + std::to_string(fuse) : std::string("as written"));
        st.counters["n"] = ctx.circuit.num_qubits;
        st.counters["depth"] = g_depth;
        st.counters["m"] = fuse;
        st.counters["ops"] = ops;
        for (int w = 1; w <= kMaxWidthCounted; ++w) st.counters["w" + std::to_string(w)] = by_width[w];
        st.counters["ms"] = ms;
        st.counters["fuse_ms"] = fuse_ms;
        st.counters["speedup"] = ctx.unfused_ms > 0 ? ctx.unfused_ms / ms : std::nan("");
        record_copy_roofline(st, ctx.copy);
        st.counters["floor_ms"] = ops * ctx.copy.ms();
        st.counters["of_floor"] = ops * ctx.copy.ms() / ms;
        st.counters["ms_per_op"] = ms / ops;
        st.counters["check_error"] = error.norm;
        st.counters["check_max_error"] = error.max;
    } catch (const std::exception& e) {
        st.SkipWithError(e.what());
    }
}

template <class Real>
void register_cases() {
    const char* precision = sizeof(Real) == 8 ? "double" : "float";
    for (int fuse : {0, 2, 3, 4, 5}) {
        const std::string name = std::string("circuit_fusion/") + precision + "/n" + std::to_string(g_qubits) +
                                 "/depth" + std::to_string(g_depth) + "/" +
                                 (fuse == 0 ? std::string("unfused") : "m" + std::to_string(fuse));
        benchmark::RegisterBenchmark(name.c_str(), [fuse](benchmark::State& st) { circuit_case<Real>(st, fuse); })
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
    }
}

}  // namespace
}  // namespace bench
}  // namespace qmarg

int main(int argc, char** argv) {
    using namespace qmarg::bench;
    g_qubits = take_flag(argc, argv, "qubits", g_qubits);
    g_depth = take_flag(argc, argv, "depth", g_depth);
    g_float = take_flag(argc, argv, "float", g_float);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    if (g_qubits < 2 || g_depth < 1) {
        std::fprintf(stderr, "circuit_fusion_bench: --qubits must be at least 2 and --depth at least 1\n");
        return 1;
    }
    if (!record_gpu("circuit_fusion_bench")) return 1;
    benchmark::AddCustomContext("circuit", "random layered: u3 on every qubit, then CX/CZ on a random pairing; seed " +
                                               std::to_string(kCircuitSeed));
    register_cases<double>();
    if (g_float) register_cases<float>();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    g_double_context.reset();
    g_float_context.reset();
    return 0;
}
