// The GPU tree reductions against the read roofline, CUB and the seed's
// reduction ladder, on fresh random double-complex states, n = 20 ... 30.
//
//   roofline/read               the plain read kernel of bench_support.cuh, this run
//   roofline/read_call          the read roofline as a call that returns to the
//                               host: launch, then cudaStreamSynchronize, timed
//                               on the host clock
//   ours/<op>                   the library call (qmarg::total_probability, ...):
//                               launch, synchronisation, result on the host,
//                               timed on the host clock and compared with
//                               roofline/read_call (the like-for-like floor of a
//                               call that returns a value; also reported against
//                               the kernel roofline as of_kernel_roofline)
//   ours/<op>_kernel            the library's kernel alone, result left in device
//                               memory: the like-for-like comparison with the roofline
//   policy/<threads>x<unroll>   the same kernel under other launch policies
//   cub/transform_reduce        cub::DeviceReduce::TransformReduce of |a|^2
//   cub/expectation_z           the same with the Z-parity sign, over a counting iterator
//   ladder/v1_... ladder/v7_... the seed's ladder (bench/reduction_ladder.cuh)
//
// Every variant's answer is checked against the library's before it is timed
// (1e-12 relative to the sum of |terms|, which is 1 for these normalised
// states); a mismatch fails that benchmark. States that would fit in L2 are
// rotated over several copies, so that each timed run reads from DRAM, and the
// roofline is rotated the same way.
//
// Counters: GB/s of state bytes read (both states for the inner product), the
// roofline's GB/s measured in this run for this n, and the ratio of the two.
//
// Why the library calls are timed on the host clock: a CUDA event recorded
// after a call that synchronises is only submitted once the host has woken up,
// so event timing charges such a call a second host-to-GPU round trip that no
// kernel-only variant pays (about 5 us: 0.93 of the roofline at n = 24 on an
// H100 where the host clock says 0.99).
//
//   reduction_bench --benchmark_out=bench/results/reduction_H100.json --benchmark_out_format=json
//   python3 bench/plot_reduction_ladder.py bench/results/reduction_H100.json
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_support.cuh"
#include "device_array.cuh"
#include "qmarg/qmarg.hpp"
#include "reduce.cuh"
#include "reduction_ladder.cuh"
#include "reduction_terms.cuh"

namespace {

using qmarg::Index;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg::bench::median;
using qmarg::bench::time_runs;
using qmarg::gpu::ComplexSum;
using qmarg::gpu::DeviceArray;

const int kQubitCounts[] = {20, 22, 24, 26, 28, 30};
constexpr double kTolerance = 1e-12;

const double2* packs(const StateVector<double>& state) { return reinterpret_cast<const double2*>(state.data()); }

template <class T>
T read_back(const T* device) {
    T value;
    QMARG_CUDA_CHECK(cudaMemcpy(&value, device, sizeof value, cudaMemcpyDeviceToHost));
    return value;
}

// The random states of one n and the library's answers for them. Copies
// enough to span 4x the L2 cache (at least 2, the inner product reads pairs).
struct Pool {
    explicit Pool(int qubits) : n(qubits) {
        int device = 0, l2_bytes = 0;
        QMARG_CUDA_CHECK(cudaGetDevice(&device));
        QMARG_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
        const std::size_t state_bytes = qmarg::state_bytes(n, sizeof(std::complex<double>));
        const std::size_t span = 4 * static_cast<std::size_t>(l2_bytes);
        const std::size_t copies = std::max<std::size_t>(2, (span + state_bytes - 1) / state_bytes);
        std::random_device entropy;
        const std::uint64_t seed = (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy();
        z_qubits = {0, n / 2, n - 1};
        for (std::size_t k = 0; k < copies; ++k) {
            states.emplace_back(n, qmarg::Device::Gpu);
            states.back().set_random_state(seed + k);
        }
        for (std::size_t k = 0; k < copies; ++k) {
            total.push_back(qmarg::total_probability(states[k]));
            inner.push_back(qmarg::inner_product(states[k], states[next(k)]));
            z.push_back(qmarg::expectation_z(states[k], z_qubits));
        }
        measure_roofline();
        measure_roofline_call();
    }

    std::size_t copies() const { return states.size(); }
    std::size_t next(std::size_t k) const { return (k + 1) % states.size(); }
    std::size_t state_bytes() const { return states[0].bytes(); }
    Index size() const { return states[0].size(); }
    int runs() const { return n <= 24 ? 100 : 30; }

    // One run of the read roofline (cuda/roofline.cu) over copy k.
    void read_roofline(std::size_t k) const {
        qmarg::gpu::launch_read_roofline(states[k].data(), state_bytes(), sink.data());
    }

    // The roofline over the same rotation of copies as every variant.
    void measure_roofline() {
        std::size_t k = 0;
        const double ms = median(time_runs(
            [&] {
                read_roofline(k);
                k = next(k);
            },
            runs()));
        roofline_gbs = static_cast<double>(state_bytes()) / (ms * 1e-3) / 1e9;
    }

    // The roofline as a call that returns to the host, on the host clock.
    void measure_roofline_call() {
        std::size_t k = 0;
        const double ms = median(time_calls(
            [&] {
                read_roofline(k);
                QMARG_CUDA_CHECK(cudaStreamSynchronize(0));
                k = next(k);
            },
            runs()));
        roofline_call_gbs = static_cast<double>(state_bytes()) / (ms * 1e-3) / 1e9;
    }

    // Runs `call` a few times, then times `runs` calls one by one on the host
    // clock; each call must return only when its work is done.
    static std::vector<double> time_calls(const std::function<void()>& call, int runs, int warmup = 3) {
        for (int i = 0; i < warmup; ++i) call();
        std::vector<double> ms;
        ms.reserve(runs);
        for (int i = 0; i < runs; ++i) {
            const auto start = std::chrono::steady_clock::now();
            call();
            ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        }
        return ms;
    }

    int n;
    std::vector<StateVector<double>> states;
    std::vector<double> total;
    std::vector<std::complex<double>> inner;
    std::vector<double> z;
    Qubits z_qubits;
    DeviceArray<double> sink{1, "roofline sink"};
    double roofline_gbs = 0;
    double roofline_call_gbs = 0;
};

Pool& pool_for(int n) {
    static std::unique_ptr<Pool> pool;
    if (!pool || pool->n != n) {
        pool.reset();  // free the previous n's states first
        pool = std::make_unique<Pool>(n);
    }
    return *pool;
}

// Times `work(k)` over the rotation of copies and sets the counters.
void time_variant(benchmark::State& st, Pool& pool, double bytes_read, const std::function<void(std::size_t)>& work) {
    std::size_t k = 0;
    const auto rotating = [&] {
        work(k);
        k = pool.next(k);
    };
    double ms = 0;
    for (auto _ : st) {
        ms = median(time_runs(rotating, pool.runs()));
        st.SetIterationTime(ms * 1e-3);
    }
    const double gbs = bytes_read / (ms * 1e-3) / 1e9;
    st.counters["GB/s"] = gbs;
    st.counters["roofline_GB/s"] = pool.roofline_gbs;
    st.counters["of_roofline"] = gbs / pool.roofline_gbs;
    st.counters["n"] = pool.n;
}

// Times the library call `call(k)` over the rotation of copies on the host
// clock and sets the counters, against roofline/read_call.
void time_library_call(benchmark::State& st, Pool& pool, double bytes_read,
                       const std::function<void(std::size_t)>& call) {
    std::size_t k = 0;
    const auto rotating = [&] {
        call(k);
        k = pool.next(k);
    };
    double ms = 0;
    for (auto _ : st) {
        ms = median(Pool::time_calls(rotating, pool.runs()));
        st.SetIterationTime(ms * 1e-3);
    }
    const double gbs = bytes_read / (ms * 1e-3) / 1e9;
    st.counters["GB/s"] = gbs;
    st.counters["roofline_GB/s"] = pool.roofline_call_gbs;
    st.counters["of_roofline"] = gbs / pool.roofline_call_gbs;
    st.counters["of_kernel_roofline"] = gbs / pool.roofline_gbs;
    st.counters["n"] = pool.n;
}

// False (and the benchmark marked failed) when |got - want| > 1e-12 * scale.
bool agrees(benchmark::State& st, const std::string& what, double got, double want, double scale = 1.0) {
    if (std::fabs(got - want) <= kTolerance * scale) return true;
    st.SkipWithError((what + ": got " + std::to_string(got) + ", the library says " + std::to_string(want)).c_str());
    return false;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The kernel-level runs write their result here.
struct KernelWorkspace {
    KernelWorkspace()
        : partials(static_cast<std::size_t>(qmarg::gpu::multiprocessor_count()) * 64, "bench partials"),
          ticket(1, "bench ticket"),
          out(1, "bench result") {
        QMARG_CUDA_CHECK(cudaMemset(ticket.data(), 0, sizeof(unsigned)));
    }
    DeviceArray<ComplexSum> partials;  // room for 64 blocks of 16-byte partials per SM
    DeviceArray<unsigned> ticket;
    DeviceArray<ComplexSum> out;
};

KernelWorkspace& kernel_workspace() {
    static KernelWorkspace workspace;
    return workspace;
}

// The library's kernel under Policy, result in device memory.
template <class Policy, class Op>
void launch_kernel(const Op& op, Index items, unsigned blocks) {
    auto& ws = kernel_workspace();
    using Acc = typename Op::Acc;
    qmarg::gpu::launch_tree_reduce<Policy>(op, items, blocks, reinterpret_cast<Acc*>(ws.partials.data()),
                                           ws.ticket.data(), reinterpret_cast<Acc*>(ws.out.data()));
}

template <class Acc>
Acc kernel_result() {
    return read_back(reinterpret_cast<const Acc*>(kernel_workspace().out.data()));
}

// --- roofline and the library calls ----------------------------------------

// Re-measured here so that it appears in the results; the ratios of this n's
// other variants use this measurement from here on.
void bm_roofline(benchmark::State& st, int n) {
    Pool& pool = pool_for(n);
    time_variant(st, pool, static_cast<double>(pool.state_bytes()), [&](std::size_t k) { pool.read_roofline(k); });
    pool.roofline_gbs = st.counters["GB/s"];
    st.counters["roofline_GB/s"] = pool.roofline_gbs;
    st.counters["of_roofline"] = 1.0;
}

void bm_roofline_call(benchmark::State& st, int n) {
    Pool& pool = pool_for(n);
    time_library_call(st, pool, static_cast<double>(pool.state_bytes()), [&](std::size_t k) {
        pool.read_roofline(k);
        QMARG_CUDA_CHECK(cudaStreamSynchronize(0));
    });
    pool.roofline_call_gbs = st.counters["GB/s"];
    st.counters["roofline_GB/s"] = pool.roofline_call_gbs;
    st.counters["of_roofline"] = 1.0;
}

void bm_total_probability(benchmark::State& st, int n) {
    Pool& pool = pool_for(n);
    // The library's own answer must repeat to the bit.
    for (std::size_t k = 0; k < pool.copies(); ++k) {
        if (!same_bits(qmarg::total_probability(pool.states[k]), pool.total[k])) {
            st.SkipWithError("total_probability gave different bits on a repeat");
            return;
        }
    }
    time_library_call(st, pool, static_cast<double>(pool.state_bytes()),
                      [&](std::size_t k) { benchmark::DoNotOptimize(qmarg::total_probability(pool.states[k])); });
}

void bm_inner_product(benchmark::State& st, int n) {
    Pool& pool = pool_for(n);
    const std::complex<double> self = qmarg::inner_product(pool.states[0], pool.states[0]);
    if (!agrees(st, "<a|a>", self.real(), pool.total[0]) || !agrees(st, "Im <a|a>", self.imag(), 0.0)) return;
    const std::complex<double> again = qmarg::inner_product(pool.states[0], pool.states[1]);
    if (!same_bits(again.real(), pool.inner[0].real()) || !same_bits(again.imag(), pool.inner[0].imag())) {
        st.SkipWithError("inner_product gave different bits on a repeat");
        return;
    }
    time_library_call(st, pool, 2.0 * static_cast<double>(pool.state_bytes()), [&](std::size_t k) {
        benchmark::DoNotOptimize(qmarg::inner_product(pool.states[k], pool.states[pool.next(k)]));
    });
}

void bm_expectation_z(benchmark::State& st, int n) {
    Pool& pool = pool_for(n);
    if (!same_bits(qmarg::expectation_z(pool.states[0], pool.z_qubits), pool.z[0])) {
        st.SkipWithError("expectation_z gave different bits on a repeat");
        return;
    }
    time_library_call(st, pool, static_cast<double>(pool.state_bytes()), [&](std::size_t k) {
        benchmark::DoNotOptimize(qmarg::expectation_z(pool.states[k], pool.z_qubits));
    });
}

// --- the library's kernel alone, and other policies ---------------------------

template <class Policy>
void bm_total_probability_kernel(benchmark::State& st, int n) {
    Pool& pool = pool_for(n);
    using Op = qmarg::gpu::TotalProbabilityTerm<double>;
    const unsigned blocks = qmarg::gpu::tree_reduce_blocks<Policy, Op>(pool.size());
    for (std::size_t k = 0; k < pool.copies(); ++k) {
        launch_kernel<Policy>(Op{packs(pool.states[k])}, pool.size(), blocks);
        const double got = kernel_result<double>();
        if (!agrees(st, "kernel total", got, pool.total[k], pool.total[k])) return;
        st.counters["same_bits_as_library"] = same_bits(got, pool.total[k]);
    }
    st.counters["blocks"] = blocks;
    time_variant(st, pool, static_cast<double>(pool.state_bytes()), [&](std::size_t k) {
        launch_kernel<Policy>(Op{packs(pool.states[k])}, pool.size(), blocks);
    });
}

void bm_inner_product_kernel(benchmark::State& st, int n) {
    Pool& pool = pool_for(n);
    using Op = qmarg::gpu::InnerProductTerm<double>;
    using Policy = qmarg::gpu::DefaultReducePolicy;
    const unsigned blocks = qmarg::gpu::tree_reduce_blocks<Policy, Op>(pool.size());
    const auto op_for = [&](std::size_t k) { return Op{packs(pool.states[k]), packs(pool.states[pool.next(k)])}; };
    launch_kernel<Policy>(op_for(0), pool.size(), blocks);
    const ComplexSum got = kernel_result<ComplexSum>();
    if (!agrees(st, "kernel Re<a|b>", got.re, pool.inner[0].real()) ||
        !agrees(st, "kernel Im<a|b>", got.im, pool.inner[0].imag()))
        return;
    st.counters["blocks"] = blocks;
    time_variant(st, pool, 2.0 * static_cast<double>(pool.state_bytes()),
                 [&](std::size_t k) { launch_kernel<Policy>(op_for(k), pool.size(), blocks); });
}

std::uint64_t mask_of(const Qubits& qubits) {
    std::uint64_t mask = 0;
    for (int q : qubits) mask |= std::uint64_t{1} << q;
    return mask;
}

void bm_expectation_z_kernel(benchmark::State& st, int n) {
    Pool& pool = pool_for(n);
    using Op = qmarg::gpu::ExpectationZTerm<double>;
    using Policy = qmarg::gpu::DefaultReducePolicy;
    const unsigned blocks = qmarg::gpu::tree_reduce_blocks<Policy, Op>(pool.size());
    const std::uint64_t mask = mask_of(pool.z_qubits);
    launch_kernel<Policy>(Op{packs(pool.states[0]), mask}, pool.size(), blocks);
    if (!agrees(st, "kernel <Z>", kernel_result<double>(), pool.z[0])) return;
    st.counters["blocks"] = blocks;
    time_variant(st, pool, static_cast<double>(pool.state_bytes()), [&](std::size_t k) {
        launch_kernel<Policy>(Op{packs(pool.states[k]), mask}, pool.size(), blocks);
    });
}

// --- CUB ----------------------------------------------------------------------

struct Abs2 {
    __device__ double operator()(const double2& a) const { return a.x * a.x + a.y * a.y; }
};

struct SignedAbs2 {
    const double2* amps;
    std::uint64_t mask;
    __device__ double operator()(Index i) const {
        const double2 a = amps[i];
        const double p = a.x * a.x + a.y * a.y;
        return __popcll(i & mask) & 1 ? -p : p;
    }
};

void bm_cub_transform_reduce(benchmark::State& st, int n) {
    Pool& pool = pool_for(n);
    DeviceArray<double> out(1, "cub result");
    std::size_t temp_bytes = 0;
    QMARG_CUDA_CHECK(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, packs(pool.states[0]), out.data(),
                                                        pool.size(), cuda::std::plus<double>{}, Abs2{}, 0.0));
    DeviceArray<char> temp(temp_bytes, "cub temporary storage");
    const auto run = [&](std::size_t k) {
        std::size_t bytes = temp_bytes;
        QMARG_CUDA_CHECK(cub::DeviceReduce::TransformReduce(temp.data(), bytes, packs(pool.states[k]), out.data(),
                                                            pool.size(), cuda::std::plus<double>{}, Abs2{}, 0.0));
    };
    for (std::size_t k = 0; k < pool.copies(); ++k) {
        run(k);
        if (!agrees(st, "cub total", read_back(out.data()), pool.total[k], pool.total[k])) return;
    }
    time_variant(st, pool, static_cast<double>(pool.state_bytes()), run);
}

void bm_cub_expectation_z(benchmark::State& st, int n) {
    Pool& pool = pool_for(n);
    DeviceArray<double> out(1, "cub result");
    const std::uint64_t mask = mask_of(pool.z_qubits);
    const thrust::counting_iterator<Index> first(0);
    std::size_t temp_bytes = 0;
    QMARG_CUDA_CHECK(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, first, out.data(), pool.size(),
                                                        cuda::std::plus<double>{},
                                                        SignedAbs2{packs(pool.states[0]), mask}, 0.0));
    DeviceArray<char> temp(temp_bytes, "cub temporary storage");
    const auto run = [&](std::size_t k) {
        std::size_t bytes = temp_bytes;
        QMARG_CUDA_CHECK(cub::DeviceReduce::TransformReduce(temp.data(), bytes, first, out.data(), pool.size(),
                                                            cuda::std::plus<double>{},
                                                            SignedAbs2{packs(pool.states[k]), mask}, 0.0));
    };
    // An independent check of the library's expectation_z: another code path
    // (CUB, a plain popcount) must give the same number.
    for (std::size_t k = 0; k < pool.copies(); ++k) {
        run(k);
        if (!agrees(st, "cub <Z>", read_back(out.data()), pool.z[k])) return;
    }
    time_variant(st, pool, static_cast<double>(pool.state_bytes()), run);
}

// --- the seed's ladder ----------------------------------------------------------

void bm_ladder(benchmark::State& st, int n, int step) {
    namespace ladder = qmarg::bench::ladder;
    Pool& pool = pool_for(n);
    DeviceArray<double> first(ladder::first_buffer_size(pool.size()), "ladder partials");
    DeviceArray<double> second(ladder::second_buffer_size(pool.size()), "ladder partials");
    const unsigned v7_resident = ladder::v7_resident_blocks();
    for (std::size_t k = 0; k < pool.copies(); ++k) {
        const double* result =
            ladder::run(step, packs(pool.states[k]), pool.size(), first.data(), second.data(), v7_resident);
        if (!agrees(st, "ladder step " + std::to_string(step), read_back(result), pool.total[k], pool.total[k]))
            return;
    }
    time_variant(st, pool, static_cast<double>(pool.state_bytes()), [&](std::size_t k) {
        ladder::run(step, packs(pool.states[k]), pool.size(), first.data(), second.data(), v7_resident);
    });
}

const char* const kLadderNames[] = {"",
                                    "v1_interleaved_divergent",
                                    "v2_interleaved_strided_index",
                                    "v3_sequential_addressing",
                                    "v4_first_add_during_load",
                                    "v5_unrolled_last_warp",
                                    "v6_completely_unrolled",
                                    "v7_multiple_elements_per_thread"};

void register_all() {
    using qmarg::gpu::ReducePolicy;
    for (int n : kQubitCounts) {
        const std::string suffix = "/n:" + std::to_string(n);
        const auto add = [&](const std::string& name, auto fn) {
            benchmark::RegisterBenchmark((name + suffix).c_str(), [=](benchmark::State& st) { fn(st, n); })
                ->UseManualTime()
                ->Iterations(1)
                ->Unit(benchmark::kMicrosecond);
        };
        add("roofline/read", bm_roofline);
        add("roofline/read_call", bm_roofline_call);
        add("ours/total_probability", bm_total_probability);
        add("ours/total_probability_kernel", bm_total_probability_kernel<qmarg::gpu::DefaultReducePolicy>);
        add("ours/inner_product", bm_inner_product);
        add("ours/inner_product_kernel", bm_inner_product_kernel);
        add("ours/expectation_z", bm_expectation_z);
        add("ours/expectation_z_kernel", bm_expectation_z_kernel);
        add("policy/128x8", bm_total_probability_kernel<ReducePolicy<128, 8>>);
        add("policy/256x2", bm_total_probability_kernel<ReducePolicy<256, 2>>);
        add("policy/256x8", bm_total_probability_kernel<ReducePolicy<256, 8>>);
        add("policy/512x4", bm_total_probability_kernel<ReducePolicy<512, 4>>);
        add("policy/1024x2", bm_total_probability_kernel<ReducePolicy<1024, 2>>);
        add("cub/transform_reduce", bm_cub_transform_reduce);
        add("cub/expectation_z", bm_cub_expectation_z);
        for (int step = 1; step <= 7; ++step) {
            add(std::string("ladder/") + kLadderNames[step],
                [step](benchmark::State& st, int qubits) { bm_ladder(st, qubits, step); });
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    // Listing the benchmarks needs no GPU (Initialize consumes the flag, so look first).
    const bool listing = std::any_of(argv + 1, argv + argc, [](const char* arg) {
        return std::strncmp(arg, "--benchmark_list_tests", 22) == 0;
    });
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    register_all();
    if (!listing) {
        if (!qmarg::bench::record_gpu("reduction_bench")) return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
