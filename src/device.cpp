// Whether the GPU backend exists in this build and can be used now.
#include "qmarg/device.hpp"

#include "backend/gpu.hpp"
#include "qmarg/error.hpp"

namespace qmarg {

bool built_with_cuda() {
#if defined(QMARG_WITH_CUDA)
    return true;
#else
    return false;
#endif
}

bool gpu_available() {
#if defined(QMARG_WITH_CUDA)
    return gpu::available();
#else
    return false;
#endif
}

std::string gpu_unavailable_reason() {
#if defined(QMARG_WITH_CUDA)
    return gpu::available() ? std::string() : gpu::unavailable_reason();
#else
    return "qmarg was built without CUDA support";
#endif
}

GpuInfo gpu_info() {
    if (!gpu_available()) throw Error("no usable GPU: " + gpu_unavailable_reason());
    QMARG_GPU_CALL(return gpu::info());
}

}  // namespace qmarg
