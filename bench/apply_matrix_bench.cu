// Dense gates (apply_matrix with a random dense unitary on k = 1..10 targets)
// on a 30-qubit double and a 28-qubit float GPU state, targets low, high,
// scattered (a random subset in random order) and descending (the low ones,
// highest first), against a floor measured in the same process:
//
//   floor = max(copy roofline of the state (read + write once: the fastest
//               of a copy kernel, cudaMemcpy and an in-place kernel,
//               measure_copy_roofline in bench_support.cuh),
//               8 * 2^k flops per amplitude at the rate cuBLAS reaches on a
//               large square ZGEMM (CGEMM for float states), measured right
//               before the case where it may set the floor: gemm_paired = 1,
//               paired_gemm_rate).
//
// The label names the targets and the dense kernel that ran (small, tiled or
// mma: cuda/apply_matrix.cuh).
//
// Counters per case: ms (median of many runs, CUDA events), GB/s of state read
// and written, of_floor (floor / time: 1 is the floor), TFLOP/s, copy_ms (the
// copy floor) with its three measurements (copy_kernel_ms, memcpy_ms,
// in_place_ms), gemm_TFLOP/s (the rate of the floor) with gemm_paired, and
// cuBLAS ZGEMM/CGEMM on the k lowest qubits, where the gate is exactly the product
// (2^k x 2^k) * (2^k x 2^(n-k)), as a comparison column (cublas_low_ms,
// vs_cublas = cublas / ours; cuBLAS writes a separate output, we work in place).
//
// Nothing is timed before it is checked: for each case a sample of output
// amplitudes is recomputed in double from a copy of the input and compared
// (relative error 1e-12 in double, 1e-5 in float); so is cuBLAS's result. A
// mismatch fails the case.
//
// While the timed runs of a case (and of the ZGEMM/CGEMM that sets the rate)
// execute, a thread reads the SM clock and the board power from NVML
// (power_sampler.hpp): counters sm_MHz, power_W and power_capped (the
// fraction of samples in which the driver held the clock down to stay under
// the board's power limit), temperature_C, gemm_sm_MHz, gemm_power_W and
// gemm_temperature_C for the GEMM, and the limit in the context
// (power_limit_W). Without NVML they are left out and the context says why
// (power_sampling). With NVML each case first runs untimed for
// --power_settle_ms (1000 by default; 0 for the single warm-up run of
// sweeps before it): NVML's power is a second-long average, and a case
// timed at once carried the power, and the clock, of the case before it.
//
// Usage: apply_matrix_bench [--double_qubits=30] [--float_qubits=28]
//                           [--tensor_cores=0] [--fma_paths=0]
//                           [--power_settle_ms=1000] [--paired_gemm=1]
//                           [benchmark flags]
// (0 skips a precision). --tensor_cores=1 runs every gate on k >= 4 targets
// on the tensor-core kernel, whatever the rule of cuda/apply_matrix.cuh picks,
// and --fma_paths=1 every gate on the FMA kernels (the register kernel up to
// 5 targets, the tiled one above): the runs that check the rule; labels say
// "path mma (forced)", "path small (forced)" or "path tiled (forced)".
// --paired_gemm=0 gives every case the GEMM rate measured as the context is
// made (gemm_paired = 0 throughout): a sweep without the paired GEMMs' heat,
// to set beside one with them. States must be far larger than L2 for the
// numbers to mean memory bandwidth; the defaults are 16 GiB and 2 GiB.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "apply_matrix.cuh"
#include "bench_support.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "power_sampler.hpp"
#include "qmarg/qmarg.hpp"

namespace qmarg {
namespace bench {
namespace {

using gpu::DeviceArray;
using Cd = std::complex<double>;

int g_double_qubits = 30;
int g_float_qubits = 28;
bool g_force_tensor_cores = false;
bool g_force_fma = false;
int g_power_settle_ms = 1000;
bool g_paired_gemm = true;

// ---- cuBLAS ---------------------------------------------------------------------

void check_cublas(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS) {
        throw Error(std::string(call) + " failed with cuBLAS status " + std::to_string(static_cast<int>(status)));
    }
}
#define QMARG_CUBLAS_CHECK(call) check_cublas((call), #call)

cublasHandle_t g_cublas = nullptr;

cublasHandle_t cublas() {
    if (g_cublas == nullptr) QMARG_CUBLAS_CHECK(cublasCreate(&g_cublas));
    return g_cublas;
}

// The complex GEMM of each precision, on device pointers in our layout.
template <class Real>
struct Gemm;
template <>
struct Gemm<double> {
    using C = cuDoubleComplex;
    static constexpr const char* name = "ZGEMM";
    static void run(cublasOperation_t op_a, int m, int n, int k, const void* a, int lda, const void* b, int ldb,
                    void* c, int ldc) {
        const C one = make_cuDoubleComplex(1, 0), zero = make_cuDoubleComplex(0, 0);
        QMARG_CUBLAS_CHECK(cublasZgemm(cublas(), op_a, CUBLAS_OP_N, m, n, k, &one, static_cast<const C*>(a), lda,
                                       static_cast<const C*>(b), ldb, &zero, static_cast<C*>(c), ldc));
    }
};
template <>
struct Gemm<float> {
    using C = cuComplex;
    static constexpr const char* name = "CGEMM";
    static void run(cublasOperation_t op_a, int m, int n, int k, const void* a, int lda, const void* b, int ldb,
                    void* c, int ldc) {
        const C one = make_cuComplex(1, 0), zero = make_cuComplex(0, 0);
        QMARG_CUBLAS_CHECK(cublasCgemm(cublas(), op_a, CUBLAS_OP_N, m, n, k, &one, static_cast<const C*>(a), lda,
                                       static_cast<const C*>(b), ldb, &zero, static_cast<C*>(c), ldc));
    }
};

template <class Real>
__global__ void fill_uniform_kernel(std::complex<Real>* data, Index count, std::uint64_t seed) {
    const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
    for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        std::uint64_t h = (i + seed) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 32;
        const Real re = static_cast<Real>(static_cast<double>(h & 0xFFFFFFu) / 8388608.0 - 1.0);
        const Real im = static_cast<Real>(static_cast<double>((h >> 24) & 0xFFFFFFu) / 8388608.0 - 1.0);
        reinterpret_cast<Real*>(data)[2 * i] = re;
        reinterpret_cast<Real*>(data)[2 * i + 1] = im;
    }
}

// The one sampler of the process (NVML is opened once), for the current GPU.
PowerSampler& power_sampler() {
    static PowerSampler sampler([] {
        int device = 0;
        QMARG_CUDA_CHECK(cudaGetDevice(&device));
        char bus_id[32] = {};
        QMARG_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device));
        return std::string(bus_id);
    }());
    return sampler;
}

// The median of `runs` timed runs of `work` after `warmup` untimed ones, with
// the clock, power and temperature while the timed ones ran. Where NVML is
// read, the untimed runs also last g_power_settle_ms at least, so that its
// power average (about a second) covers the work itself and not the case
// before it (power_sampler.hpp); the clock then settles where the power
// controller holds this work.
struct TimedRuns {
    double ms = 0;
    PowerSummary power;
};
TimedRuns time_runs_with_power(const std::function<void()>& work, int runs, int warmup) {
    const double settle_ms = power_sampler().available() ? g_power_settle_ms : 0;
    run_for_at_least([&] { time_runs(work, 0, 1); }, warmup, settle_ms);
    power_sampler().start();
    TimedRuns timed;
    timed.ms = median(time_runs(work, runs, 0));
    timed.power = power_sampler().stop();
    return timed;
}

struct GemmRate {
    double tflops = 0;
    PowerSummary power;
};

// TFLOP/s of a square complex GEMM of size 8192 (8 flops per complex
// multiply-add), with the clock and power while it ran: the arithmetic rate
// this GPU reaches on the best-case shape, as the median of `runs` runs
// (20: about 1.5 s of ZGEMM) after 10 that bring the GPU to the power state
// the gates are timed in. Its software power cap (700 W on our H100) holds a ZGEMM at
// 1.5 to 1.9 GHz once it has run for about half a second: in one process,
// runs 2..6 (the window this used) ran at 61.8 TFLOP/s, later windows of ten
// at 56.8 to 60.0.
template <class Real>
GemmRate square_gemm_rate(int runs) {
    const int size = 8192;
    const Index count = static_cast<Index>(size) * size;
    DeviceArray<std::complex<Real>> a(count, "GEMM operand A"), b(count, "GEMM operand B"), c(count, "GEMM result");
    const unsigned blocks = gpu::grid_stride_blocks(count, 256);
    fill_uniform_kernel<Real><<<blocks, 256>>>(a.data(), count, 1);
    QMARG_CHECK_LAUNCH(fill_uniform_kernel);
    fill_uniform_kernel<Real><<<blocks, 256>>>(b.data(), count, 2);
    QMARG_CHECK_LAUNCH(fill_uniform_kernel);
    const auto product = [&] {
        Gemm<Real>::run(CUBLAS_OP_N, size, size, size, a.data(), size, b.data(), size, c.data(), size);
    };
    const TimedRuns timed = time_runs_with_power(product, runs, 10);
    GemmRate rate;
    rate.power = timed.power;
    rate.tflops = 8.0 * size * size * static_cast<double>(size) / (timed.ms * 1e-3) / 1e12;
    return rate;
}

// ---- matrices and targets ----------------------------------------------------

// A unitary by modified Gram-Schmidt (twice, for orthogonality to rounding)
// on the columns of a complex Gaussian matrix; row-major.
std::vector<Cd> gram_schmidt_unitary(int dim, std::mt19937_64& rng) {
    std::normal_distribution<double> gauss;
    std::vector<std::vector<Cd>> cols(dim, std::vector<Cd>(dim));
    for (auto& col : cols)
        for (auto& x : col) x = Cd(gauss(rng), gauss(rng));
    for (int pass = 0; pass < 2; ++pass) {
        for (int c = 0; c < dim; ++c) {
            for (int p = 0; p < c; ++p) {
                Cd dot = 0;
                for (int r = 0; r < dim; ++r) dot += std::conj(cols[p][r]) * cols[c][r];
                for (int r = 0; r < dim; ++r) cols[c][r] -= dot * cols[p][r];
            }
            double norm = 0;
            for (const Cd& x : cols[c]) norm += std::norm(x);
            for (Cd& x : cols[c]) x /= std::sqrt(norm);
        }
    }
    std::vector<Cd> out(static_cast<std::size_t>(dim) * dim);
    for (int r = 0; r < dim; ++r)
        for (int c = 0; c < dim; ++c) out[static_cast<std::size_t>(r) * dim + c] = cols[c][r];
    return out;
}

// A dense unitary on k qubits: Gram-Schmidt up to 64 x 64, above that the
// Kronecker product of two (every entry nonzero, so the gate is dense).
Matrix dense_unitary(int k, std::mt19937_64& rng) {
    if (k <= 6) return Matrix(1 << k, gram_schmidt_unitary(1 << k, rng));
    const int da = 1 << (k / 2), db = 1 << (k - k / 2);
    const std::vector<Cd> a = gram_schmidt_unitary(da, rng), b = gram_schmidt_unitary(db, rng);
    Matrix out(da * db);
    for (int r = 0; r < da * db; ++r)
        for (int c = 0; c < da * db; ++c)
            out(r, c) = a[(r / db) * da + c / db] * b[(r % db) * db + c % db];
    return out;
}

// Descending: the k lowest qubits, highest first (k - 1, ..., 0), so that
// the matrix's bit order is the reverse of the state's on cuBLAS's home ground.
enum class Layout { Low, High, Scattered, Descending };
const char* to_string(Layout layout) {
    switch (layout) {
        case Layout::Low: return "low";
        case Layout::High: return "high";
        case Layout::Scattered: return "scattered";
        case Layout::Descending: return "descending";
    }
    return "?";
}

Qubits targets_for(Layout layout, int n, int k) {
    Qubits targets;
    if (layout == Layout::Low) {
        for (int j = 0; j < k; ++j) targets.push_back(j);
    } else if (layout == Layout::High) {
        for (int j = 0; j < k; ++j) targets.push_back(n - k + j);
    } else if (layout == Layout::Descending) {
        for (int j = 0; j < k; ++j) targets.push_back(k - 1 - j);
    } else {  // a fixed pseudo-random subset in random order, the same in every run
        std::mt19937_64 rng(1000 + k);
        Qubits all(n);
        for (int q = 0; q < n; ++q) all[q] = q;
        std::shuffle(all.begin(), all.end(), rng);
        targets.assign(all.begin(), all.begin() + k);
    }
    return targets;
}

std::uint64_t fresh_seed() {
    static std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

// ---- checking --------------------------------------------------------------------

struct TargetList {
    int qubit[16];
};

// For sample j: amplitude i (pseudo-random; samples 0 and 1 are the first and
// last amplitude) of the product, recomputed in double from `in`, against `out`.
template <class Real>
__global__ void sampled_error_kernel(const std::complex<Real>* in, const std::complex<Real>* out, int num_qubits,
                                     const double2* matrix, int k, TargetList targets, int samples,
                                     std::uint64_t salt, double* error2, double* reference2) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= samples) return;
    const Index size_mask = (Index{1} << num_qubits) - 1;
    std::uint64_t h = (j + salt) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    const Index i = j == 0 ? 0 : j == 1 ? size_mask : (h & size_mask);
    const Index row = gather_bits(i, targets.qubit, k);
    Index base = i;
    for (int t = 0; t < k; ++t) base &= ~(Index{1} << targets.qubit[t]);
    double re = 0, im = 0;
    for (int c = 0; c < (1 << k); ++c) {
        const double2 m = matrix[(row << k) + c];
        const std::complex<Real> v = in[base | scatter_bits(c, targets.qubit, k)];
        re += m.x * static_cast<double>(v.real()) - m.y * static_cast<double>(v.imag());
        im += m.x * static_cast<double>(v.imag()) + m.y * static_cast<double>(v.real());
    }
    const double dre = static_cast<double>(out[i].real()) - re, dim = static_cast<double>(out[i].imag()) - im;
    error2[j] = dre * dre + dim * dim;
    reference2[j] = re * re + im * im;
}

// sqrt(sum |out - reference|^2 / sum |reference|^2) over 4096 sampled amplitudes.
template <class Real>
double sampled_relative_error(const StateVector<Real>& in, const StateVector<Real>& out, const Qubits& targets,
                              const Matrix& matrix) {
    const int k = static_cast<int>(targets.size());
    const std::size_t entries = static_cast<std::size_t>(matrix.dim()) * matrix.dim();
    DeviceArray<double2> device_matrix(entries, "reference matrix");
    gpu::copy_to_device(device_matrix.data(), matrix.data(), entries * sizeof(double2));
    TargetList list{};
    for (int j = 0; j < k; ++j) list.qubit[j] = targets[j];
    const int samples = 4096;
    DeviceArray<double> sums(2 * samples, "sampled errors");
    sampled_error_kernel<Real><<<samples / 128, 128>>>(in.data(), out.data(), in.num_qubits(), device_matrix.data(), k,
                                                       list, samples, fresh_seed(), sums.data(),
                                                       sums.data() + samples);
    QMARG_CHECK_LAUNCH(sampled_error_kernel);
    std::vector<double> host(2 * samples);
    gpu::copy_to_host(host.data(), sums.data(), host.size() * sizeof(double));
    double error = 0, reference = 0;
    for (int j = 0; j < samples; ++j) {
        error += host[j];
        reference += host[samples + j];
    }
    return std::sqrt(error / reference);
}

template <class Real>
constexpr double check_tolerance() {
    return sizeof(Real) == 8 ? 1e-12 : 1e-5;
}

// ---- per-precision context -------------------------------------------------------

// Whether a case's floor takes a GEMM rate measured right before the case
// (10 runs after the settling warm-up) instead of the one measured as the
// context was made: where the flops at that first rate take at least half
// the copy's time (double k >= 6, float k >= 5 on an H100), so may set the
// floor. The GEMM runs at the board's power limit, and its rate there
// depends on the GPU's temperature: on an H100, 57.9 TFLOP/s at 52 C as the
// first case of a sweep and 56.5 at 60 C after one, a 2.4 % move in every
// flop-bound floor that a rate measured once, on a cooler or hotter GPU than
// the case's, puts on the case. Paired, both run in the same thermal state.
inline bool paired_gemm_rate(double flops, double first_tflops, double copy_ms) {
    return flops / (first_tflops * 1e12) * 1e3 >= 0.5 * copy_ms;
}

template <class Real>
struct Context {
    int n;
    StateVector<Real> state;
    StateVector<Real> scratch;  // input copies for checks; cuBLAS's separate output
    CopyRoofline copy;
    GemmRate first_gemm;  // measured as the context is made (paired_gemm_rate)
    std::map<int, Matrix> matrices;
    std::map<int, double> cublas_low;  // ms by k; NaN where cuBLAS cannot take the shape

    explicit Context(int qubits) : n(qubits), state(qubits, Device::Gpu), scratch(qubits, Device::Gpu) {
        state.set_random_state(fresh_seed());
        scratch.set_random_state(fresh_seed());
        copy = measure_copy_roofline(state.data(), scratch.data(), state.bytes());
        first_gemm = square_gemm_rate<Real>(20);
    }

    const Matrix& matrix(int k) {
        auto found = matrices.find(k);
        if (found == matrices.end()) {
            std::mt19937_64 rng(fresh_seed());
            found = matrices.emplace(k, dense_unitary(k, rng)).first;
        }
        return found->second;
    }

    // cuBLAS on the k lowest qubits: state <- M * scratch, scratch a copy of a
    // random state. Checked against the sampled reference, then timed.
    double cublas_low_ms(int k) {
        auto found = cublas_low.find(k);
        if (found != cublas_low.end()) return found->second;
        const Index columns = Index{1} << (n - k);
        if (columns > static_cast<Index>(INT_MAX)) return cublas_low[k] = std::nan("");
        const int dim = 1 << k;
        const Matrix& m = matrix(k);
        std::vector<std::complex<Real>> entries(static_cast<std::size_t>(dim) * dim);
        for (std::size_t e = 0; e < entries.size(); ++e) entries[e] = std::complex<Real>(m.data()[e]);
        DeviceArray<std::complex<Real>> device_matrix(entries.size(), "cuBLAS matrix");
        gpu::copy_to_device(device_matrix.data(), entries.data(), entries.size() * sizeof(entries[0]));
        // The row-major matrix read column-major is its transpose: op T gives M.
        auto product = [&] {
            Gemm<Real>::run(CUBLAS_OP_T, dim, static_cast<int>(columns), dim, device_matrix.data(), dim,
                            scratch.data(), dim, state.data(), dim);
        };
        scratch.set_random_state(fresh_seed());
        product();
        Qubits low(k);
        for (int j = 0; j < k; ++j) low[j] = j;
        const double error = sampled_relative_error(scratch, state, low, m);
        if (!(error <= check_tolerance<Real>())) {
            throw Error(std::string("cuBLAS ") + Gemm<Real>::name + " on the " + std::to_string(k) +
                        " lowest qubits does not match the reference: relative error " + std::to_string(error));
        }
        const double probe = median(time_runs(product, 1, 1));
        const int runs = std::max(3, std::min(20, static_cast<int>(2000 / std::max(probe, 1e-3))));
        return cublas_low[k] = median(time_runs(product, runs, 1));
    }
};

std::unique_ptr<Context<double>> g_double_context;
std::unique_ptr<Context<float>> g_float_context;

// One context at a time: the double one alone is 32 GiB of states.
template <class Real>
Context<Real>& context();
template <>
Context<double>& context<double>() {
    g_float_context.reset();
    if (!g_double_context) g_double_context.reset(new Context<double>(g_double_qubits));
    return *g_double_context;
}
template <>
Context<float>& context<float>() {
    g_double_context.reset();
    if (!g_float_context) g_float_context.reset(new Context<float>(g_float_qubits));
    return *g_float_context;
}

// ---- the benchmark ------------------------------------------------------------------

template <class Real>
void apply_matrix_case(benchmark::State& st, Layout layout, int k) {
    try {
        Context<Real>& ctx = context<Real>();
        const int n = ctx.n;
        const Qubits targets = targets_for(layout, n, k);
        const Matrix& matrix = ctx.matrix(k);
        const double cublas_ms = ctx.cublas_low_ms(k);

        const gpu::GateQubits gate = gpu::describe_gate(n, targets, {}, {});
        const bool forced = (g_force_tensor_cores && k >= 4) || g_force_fma;
        const gpu::DensePath path = !forced    ? gpu::dense_path(gate, sizeof(Real))
                                    : g_force_fma ? gpu::fma_path(k)
                                                  : gpu::DensePath::Mma;
        auto apply = [&] {
            if (forced) {
                gpu::apply_matrix_dense(ctx.state.data(), gate, matrix, path);
            } else {
                apply_matrix(ctx.state, targets, matrix);
            }
        };

        ctx.state.set_random_state(fresh_seed());
        ctx.scratch.copy_from(ctx.state);
        apply();
        const double error = sampled_relative_error(ctx.scratch, ctx.state, targets, matrix);
        if (!(error <= check_tolerance<Real>())) {
            st.SkipWithError(("result does not match the reference: relative error " + std::to_string(error)).c_str());
            return;
        }

        const double amplitudes = std::ldexp(1.0, n);
        const double flops = 8.0 * std::ldexp(1.0, k) * amplitudes;
        const bool paired = g_paired_gemm && paired_gemm_rate(flops, ctx.first_gemm.tflops, ctx.copy.ms());
        const GemmRate gemm = paired ? square_gemm_rate<Real>(10) : ctx.first_gemm;

        auto work = apply;
        const double probe = median(time_runs(work, 1, 1));
        const int runs = std::max(3, std::min(30, static_cast<int>(3000 / std::max(probe, 1e-3))));
        const TimedRuns timed = time_runs_with_power(work, runs, 1);
        const double ms = timed.ms;
        const PowerSummary& power = timed.power;
        for (auto _ : st) st.SetIterationTime(ms * 1e-3);

        const double flop_ms = flops / (gemm.tflops * 1e12) * 1e3;
        const double floor_ms = std::max(ctx.copy.ms(), flop_ms);
        const std::string path_name = std::string(gpu::to_string(path)) + (forced ? " (forced)" : "");
        st.SetLabel(std::string(to_string(layout)) + " targets " + [&] {
            std::string s;
            for (int q : targets) s += (s.empty() ? "" : ",") + std::to_string(q);
            return s;
        }() + " path " + path_name);
        st.counters["n"] = n;
        st.counters["k"] = k;
        st.counters["ms"] = ms;
        st.counters["GB/s"] = 2.0 * static_cast<double>(ctx.state.bytes()) / (ms * 1e-3) / 1e9;
        st.counters["TFLOP/s"] = flops / (ms * 1e-3) / 1e12;
        record_copy_roofline(st, ctx.copy);
        st.counters["flop_ms"] = flop_ms;
        st.counters["floor_ms"] = floor_ms;
        st.counters["of_floor"] = floor_ms / ms;
        st.counters["gemm_TFLOP/s"] = gemm.tflops;
        st.counters["gemm_paired"] = paired ? 1 : 0;
        st.counters["cublas_low_ms"] = cublas_ms;
        st.counters["vs_cublas"] = cublas_ms / ms;
        st.counters["check_error"] = error;
        if (power_sampler().available()) {
            st.counters["sm_MHz"] = power.sm_mhz;
            st.counters["power_W"] = power.power_w;
            st.counters["power_capped"] = power.power_capped;
            st.counters["gemm_sm_MHz"] = gemm.power.sm_mhz;
            st.counters["gemm_power_W"] = gemm.power.power_w;
            if (power.temperature_c > 0) st.counters["temperature_C"] = power.temperature_c;
            if (gemm.power.temperature_c > 0) st.counters["gemm_temperature_C"] = gemm.power.temperature_c;
        }
    } catch (const std::exception& e) {
        st.SkipWithError(e.what());
    }
}

template <class Real>
void register_cases(int n) {
    if (n <= 0) return;
    const char* precision = sizeof(Real) == 8 ? "double" : "float";
    for (Layout layout : {Layout::Low, Layout::High, Layout::Scattered, Layout::Descending}) {
        for (int k = 1; k <= 10; ++k) {
            const std::string name = std::string("apply_matrix/") + precision + "/n" + std::to_string(n) + "/" +
                                     to_string(layout) + "/k" + std::to_string(k);
            benchmark::RegisterBenchmark(name.c_str(),
                                         [layout, k](benchmark::State& st) { apply_matrix_case<Real>(st, layout, k); })
                ->UseManualTime()
                ->Iterations(1)
                ->Unit(benchmark::kMillisecond);
        }
    }
}

}  // namespace
}  // namespace bench
}  // namespace qmarg

int main(int argc, char** argv) {
    using namespace qmarg::bench;
    g_double_qubits = take_flag(argc, argv, "double_qubits", g_double_qubits);
    g_float_qubits = take_flag(argc, argv, "float_qubits", g_float_qubits);
    const int tensor_cores = take_flag(argc, argv, "tensor_cores", 0);
    if (tensor_cores != 0 && tensor_cores != 1) {
        std::fprintf(stderr, "apply_matrix_bench: --tensor_cores takes 0 or 1 (got %d)\n", tensor_cores);
        return 1;
    }
    const int fma_paths = take_flag(argc, argv, "fma_paths", 0);
    if ((fma_paths != 0 && fma_paths != 1) || (fma_paths == 1 && tensor_cores == 1)) {
        std::fprintf(stderr, "apply_matrix_bench: --fma_paths takes 0 or 1, and not with --tensor_cores=1 (got %d)\n",
                     fma_paths);
        return 1;
    }
    g_power_settle_ms = take_flag(argc, argv, "power_settle_ms", g_power_settle_ms);
    if (g_power_settle_ms < 0 || g_power_settle_ms > 60000) {
        std::fprintf(stderr, "apply_matrix_bench: --power_settle_ms takes 0 to 60000 (got %d)\n", g_power_settle_ms);
        return 1;
    }
    const int paired_gemm = take_flag(argc, argv, "paired_gemm", 1);
    if (paired_gemm != 0 && paired_gemm != 1) {
        std::fprintf(stderr, "apply_matrix_bench: --paired_gemm takes 0 or 1 (got %d)\n", paired_gemm);
        return 1;
    }
    g_force_tensor_cores = tensor_cores == 1;
    g_force_fma = fma_paths == 1;
    g_paired_gemm = paired_gemm == 1;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    if (!record_gpu("apply_matrix_bench")) return 1;
    benchmark::AddCustomContext("paired_gemm", std::to_string(paired_gemm));
    if (power_sampler().available()) {
        benchmark::AddCustomContext("power_limit_W", std::to_string(power_sampler().power_limit_w()));
        benchmark::AddCustomContext("power_settle_ms", std::to_string(g_power_settle_ms));
    } else {
        benchmark::AddCustomContext("power_sampling", power_sampler().unavailable_reason());
        std::fprintf(stderr, "apply_matrix_bench: no clock or power readings: %s\n",
                     power_sampler().unavailable_reason().c_str());
    }
    register_cases<double>(g_double_qubits);
    register_cases<float>(g_float_qubits);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    g_double_context.reset();
    g_float_context.reset();
    if (g_cublas != nullptr) cublasDestroy(g_cublas);
    return 0;
}
