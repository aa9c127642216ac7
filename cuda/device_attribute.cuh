// A device attribute that the driver may not report (the memory clock, the
// bus width: reported 0 or refused on some systems).
#pragma once

#include <cuda_runtime.h>

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

}  // namespace gpu
}  // namespace qmarg
