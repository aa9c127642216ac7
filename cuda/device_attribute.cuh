// A device attribute that the driver may not report (the memory clock, the
// bus width: reported 0 or refused on some systems), and the figure the rules
// derive from them.
#pragma once

#include <cuda_runtime.h>

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

}  // namespace gpu
}  // namespace qmarg
