// Device discovery. With no driver, cudaGetDeviceCount returns an error rather
// than 0 devices; both mean "no usable GPU", and the reason is kept for messages.
#include <cuda_runtime.h>

#include <mutex>
#include <string>

#include "backend/gpu.hpp"
#include "check.cuh"
#include "device_attribute.cuh"

namespace qmarg {
namespace gpu {
namespace {

struct Probe {
    bool available = false;
    std::string reason;
};

const Probe& probe() {
    static Probe result;
    static std::once_flag once;
    std::call_once(once, [] {
        int count = 0;
        const cudaError_t status = cudaGetDeviceCount(&count);
        if (status != cudaSuccess) {
            (void)cudaGetLastError();
            result.reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(status);
        } else if (count == 0) {
            result.reason = "no CUDA device is present";
        } else {
            result.available = true;
        }
    });
    return result;
}

}  // namespace

bool available() { return probe().available; }

std::string unavailable_reason() { return probe().reason; }

GpuInfo info() {
    int device = 0;
    QMARG_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp props{};
    QMARG_CUDA_CHECK(cudaGetDeviceProperties(&props, device));
    GpuInfo out;
    out.name = props.name;
    out.compute_capability_major = props.major;
    out.compute_capability_minor = props.minor;
    out.multiprocessors = props.multiProcessorCount;
    out.global_memory_bytes = props.totalGlobalMem;
    out.l2_cache_bytes = static_cast<std::size_t>(props.l2CacheSize);
    out.shared_memory_per_block_optin = props.sharedMemPerBlockOptin;
    std::size_t total = 0;
    QMARG_CUDA_CHECK(cudaMemGetInfo(&out.free_memory_bytes, &total));
    QMARG_CUDA_CHECK(cudaDriverGetVersion(&out.driver_version));
    QMARG_CUDA_CHECK(cudaRuntimeGetVersion(&out.runtime_version));
    out.clock_rate_khz = attribute_or_zero(cudaDevAttrClockRate, device);
    out.memory_clock_rate_khz = attribute_or_zero(cudaDevAttrMemoryClockRate, device);
    out.memory_bus_width_bits = attribute_or_zero(cudaDevAttrGlobalMemoryBusWidth, device);
    return out;
}

}  // namespace gpu
}  // namespace qmarg
