// Shared pieces of the GPU benchmarks: CUDA-event timing with warm-up and the
// median of many runs, and the rooflines every benchmark measures in the same
// process (a plain read of the state, and the fastest of three ways to read
// and write it once: measure_copy_roofline), so that each result is reported
// as a ratio to what this GPU does today. The read
// roofline is the library's one kernel (cuda/roofline.cu), the same that
// `qmarg bench marginal` times.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "check.cuh"
#include "launch.cuh"
#include "roofline.cuh"
#include "statistics.hpp"
#include "qmarg/device.hpp"
#include "qmarg/types.hpp"
#if defined(QMARG_HAVE_GIT_COMMIT)
#include "qmarg_git_commit.hpp"  // QMARG_GIT_COMMIT, rewritten before every build (tools/CMakeLists.txt)
#else
#define QMARG_GIT_COMMIT "unknown"  // built without the qmarg tool, which records it
#endif

namespace qmarg {
namespace bench {

// Runs `work` `warmup` times, then times `runs` runs one by one with CUDA
// events; returns the per-run times in milliseconds.
inline std::vector<double> time_runs(const std::function<void()>& work, int runs, int warmup = 3) {
    for (int i = 0; i < warmup; ++i) work();
    QMARG_CUDA_CHECK(cudaDeviceSynchronize());
    cudaEvent_t start, stop;
    QMARG_CUDA_CHECK(cudaEventCreate(&start));
    QMARG_CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<double> ms;
    ms.reserve(runs);
    for (int i = 0; i < runs; ++i) {
        QMARG_CUDA_CHECK(cudaEventRecord(start));
        work();
        QMARG_CUDA_CHECK(cudaEventRecord(stop));
        QMARG_CUDA_CHECK(cudaEventSynchronize(stop));
        float elapsed = 0;
        QMARG_CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
        ms.push_back(elapsed);
    }
    QMARG_CUDA_CHECK(cudaEventDestroy(start));
    QMARG_CUDA_CHECK(cudaEventDestroy(stop));
    return ms;
}

// Checks for a usable GPU (else says why on stderr, naming `program`) and
// records it in the JSON context of every benchmark program: name, compute
// capability, multiprocessors, memory, L2, shared memory per block and the
// driver and runtime versions, with the git commit of the build. Returns
// false without a GPU.
inline bool record_gpu(const char* program, GpuInfo* info_out = nullptr) {
    if (!gpu_available()) {
        std::fprintf(stderr, "%s: no usable GPU: %s\n", program, gpu_unavailable_reason().c_str());
        return false;
    }
    const GpuInfo info = gpu_info();
    benchmark::AddCustomContext("gpu", info.name);
    benchmark::AddCustomContext("gpu_compute_capability", std::to_string(info.compute_capability_major) + "." +
                                                              std::to_string(info.compute_capability_minor));
    benchmark::AddCustomContext("gpu_multiprocessors", std::to_string(info.multiprocessors));
    benchmark::AddCustomContext("gpu_memory_bytes", std::to_string(info.global_memory_bytes));
    benchmark::AddCustomContext("gpu_l2_bytes", std::to_string(info.l2_cache_bytes));
    benchmark::AddCustomContext("gpu_shared_memory_per_block_optin_bytes",
                                std::to_string(info.shared_memory_per_block_optin));
    benchmark::AddCustomContext("cuda_driver", std::to_string(info.driver_version));
    benchmark::AddCustomContext("cuda_runtime", std::to_string(info.runtime_version));
    benchmark::AddCustomContext("git_commit", QMARG_GIT_COMMIT);
    if (info_out != nullptr) *info_out = info;
    return true;
}

// Copy roofline: read and write each byte once, from one buffer to another.
__global__ void copy_roofline_kernel(const double4_32a* in, double4_32a* out, Index count) {
    const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
    for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) out[i] = in[i];
}

// The same in place, as a gate updates its state: each 32 bytes read and
// written back negated (so the store cannot be dropped).
__global__ void in_place_roofline_kernel(double4_32a* data, Index count) {
    const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
    for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        double4_32a v = data[i];
        v.x = -v.x;
        v.y = -v.y;
        v.z = -v.z;
        v.w = -v.w;
        data[i] = v;
    }
}

// Median milliseconds to read `bytes` (a multiple of 32) at `data`.
inline double read_roofline_ms(const void* data, std::size_t bytes, double* sink, int runs = 30) {
    return median(time_runs([&] { gpu::launch_read_roofline(data, bytes, sink); }, runs));
}

// The time to read and write every byte of a buffer once, measured three ways
// in the same process, each the median of `runs` runs: the floor is the
// fastest of them. One way alone is not a floor: on an H200 (a 16 GiB double
// state) the copy kernel and the in-place kernel took 10.95 ms (3.1 TB/s read
// + write), cudaMemcpyAsync 7.99 ms (4.3 TB/s), and the gates on 1 to 3
// targets, timed against the copy kernel alone, ran at 1.21 to 1.26 times
// "the floor". On the H100 of bench/results/apply_matrix_H100.json the
// kernel took 14.0 ms, where a device-to-device copy had been measured at
// 3.03 TB/s (11.3 ms).
struct CopyRoofline {
    double kernel_ms = 0;    // copy_roofline_kernel, `in` to `out`
    double memcpy_ms = 0;    // cudaMemcpyAsync device to device, `in` to `out`
    double in_place_ms = 0;  // in_place_roofline_kernel on `out`
    double ms() const { return std::min({kernel_ms, memcpy_ms, in_place_ms}); }
};

// `bytes` is a multiple of 32; `out`'s contents are overwritten (and negated
// an unspecified number of times).
inline CopyRoofline measure_copy_roofline(const void* in, void* out, std::size_t bytes, int runs = 30) {
    const Index count = bytes / sizeof(double4_32a);
    const unsigned blocks = gpu::grid_stride_blocks(count, 256, 16);
    CopyRoofline r;
    r.kernel_ms = median(time_runs(
        [&] {
            copy_roofline_kernel<<<blocks, 256>>>(static_cast<const double4_32a*>(in), static_cast<double4_32a*>(out),
                                                  count);
            QMARG_CHECK_LAUNCH(copy_roofline_kernel);
        },
        runs));
    r.memcpy_ms =
        median(time_runs([&] { QMARG_CUDA_CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice)); }, runs));
    r.in_place_ms = median(time_runs(
        [&] {
            in_place_roofline_kernel<<<blocks, 256>>>(static_cast<double4_32a*>(out), count);
            QMARG_CHECK_LAUNCH(in_place_roofline_kernel);
        },
        runs));
    return r;
}

// The copy floor and its three measurements as a benchmark's counters.
inline void record_copy_roofline(benchmark::State& st, const CopyRoofline& copy) {
    st.counters["copy_ms"] = copy.ms();
    st.counters["copy_kernel_ms"] = copy.kernel_ms;
    st.counters["memcpy_ms"] = copy.memcpy_ms;
    st.counters["in_place_ms"] = copy.in_place_ms;
}

// Removes --name=value (an integer flag of a benchmark program, read before
// Google Benchmark sees argv) from argv and returns value, or `fallback`.
inline int take_flag(int& argc, char** argv, const char* name, int fallback) {
    const std::string prefix = std::string("--") + name + "=";
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) {
            const int value = std::atoi(argv[i] + prefix.size());
            for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
            --argc;
            return value;
        }
    }
    return fallback;
}

}  // namespace bench
}  // namespace qmarg
