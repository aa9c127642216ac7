// Facts about the GPU backend: whether it was compiled in and whether a usable
// device is present now. Tests and tools ask here before touching Device::Gpu.
#pragma once

#include <cstddef>
#include <string>

namespace qmarg {

// True when this build of qmarg contains the CUDA backend.
bool built_with_cuda();

// True when the CUDA backend is built in and at least one device can be used.
// Never throws: with no driver or no device it returns false, and
// gpu_unavailable_reason() says why.
bool gpu_available();
std::string gpu_unavailable_reason();

struct GpuInfo {
    std::string name;
    int compute_capability_major = 0;
    int compute_capability_minor = 0;
    int multiprocessors = 0;
    std::size_t global_memory_bytes = 0;
    std::size_t free_memory_bytes = 0;
    std::size_t l2_cache_bytes = 0;
    std::size_t shared_memory_per_block_optin = 0;
    int driver_version = 0;   // CUDA driver API version, e.g. 13000
    int runtime_version = 0;  // CUDA runtime version
    // Peak clocks and memory bus width as the driver reports them; 0 where the
    // driver does not report one.
    int clock_rate_khz = 0;
    int memory_clock_rate_khz = 0;
    int memory_bus_width_bits = 0;
};

// Properties of the current device. Throws Error when gpu_available() is false.
GpuInfo gpu_info();

}  // namespace qmarg
