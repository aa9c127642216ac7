// Error checking for every CUDA call and every launch. A failure becomes a
// qmarg::CudaError carrying the CUDA error string, the call and its place.
//
// Build with -DQMARG_SYNC_AFTER_LAUNCH=ON to synchronise after each launch, so
// that an asynchronous fault is reported at the launch that caused it.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "qmarg/error.hpp"

namespace qmarg {
namespace gpu {

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
    if (status == cudaSuccess) return;
    // Clear the (non-sticky) error so that later calls do not report it again.
    (void)cudaGetLastError();
    throw CudaError(std::string(call) + " failed: " + cudaGetErrorString(status) + " (" +
                    cudaGetErrorName(status) + ") at " + file + ":" + std::to_string(line));
}

inline void check_launch(const char* kernel, const char* file, int line) {
    check_cuda(cudaGetLastError(), kernel, file, line);
#if defined(QMARG_SYNC_AFTER_LAUNCH)
    check_cuda(cudaDeviceSynchronize(), kernel, file, line);
#endif
}

}  // namespace gpu
}  // namespace qmarg

#define QMARG_CUDA_CHECK(call) ::qmarg::gpu::check_cuda((call), #call, __FILE__, __LINE__)
#define QMARG_CHECK_LAUNCH(kernel) ::qmarg::gpu::check_launch("launch of " #kernel, __FILE__, __LINE__)
