// A device attribute that the driver may not report (the memory clock, the
// bus width: reported 0 or refused on some systems), the figure the rules
// derive from them, and the per-device memo their callers keep.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <mutex>

#include "check.cuh"
#include "device_bandwidth.hpp"

namespace qmarg {
namespace gpu {

// The attribute, or 0 when the driver does not report it (the error is
// cleared so that it does not surface at the next checked call).
inline int attribute_or_zero(cudaDeviceAttr attribute, int device) {
    int value = 0;
    if (cudaDeviceGetAttribute(&value, attribute, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return value;
}

// One multiprocessor's share of the device's peak memory bandwidth
// (src/device_bandwidth.hpp), 0 where the driver does not report the memory
// clock, the bus width or the multiprocessors.
inline double multiprocessor_bytes_per_us_of(int device) {
    return multiprocessor_bytes_per_us(attribute_or_zero(cudaDevAttrMemoryClockRate, device) * 1e-3,
                                       attribute_or_zero(cudaDevAttrGlobalMemoryBusWidth, device),
                                       attribute_or_zero(cudaDevAttrMultiProcessorCount, device));
}

// What ask(device) returns for the current device, asked once per device:
// what a device reports does not change while the process runs, and the
// rules that need it run before every launch. Each caller's lambda type
// instantiates its own memo. Throws CudaError when the device cannot be named.
template <class T, class Ask>
T once_per_device(Ask ask) {
    int device = 0;
    QMARG_CUDA_CHECK(cudaGetDevice(&device));
    static std::mutex mutex;
    static std::map<int, T> known;
    std::lock_guard<std::mutex> lock(mutex);
    const auto found = known.find(device);
    if (found != known.end()) return found->second;
    const T asked = ask(device);
    known.emplace(device, asked);
    return asked;
}

}  // namespace gpu
}  // namespace qmarg
