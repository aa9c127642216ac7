// Device memory: allocation through cudaMalloc (never managed memory) and
// copies, each checked; out-of-memory says how much was asked and how much is free.
#include <cuda_runtime.h>

#include <string>

#include "backend/gpu.hpp"
#include "check.cuh"
#include "format.hpp"

namespace qmarg {
namespace gpu {

void* allocate(std::size_t bytes, const char* what) {
    void* pointer = nullptr;
    const cudaError_t status = cudaMalloc(&pointer, bytes);
    if (status != cudaSuccess) {
        (void)cudaGetLastError();
        std::size_t free_bytes = 0, total_bytes = 0;
        std::string free_text = "unknown";
        if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) free_text = detail::human_bytes(free_bytes);
        (void)cudaGetLastError();
        throw CudaError("cudaMalloc of " + detail::human_bytes(bytes) + " for " + what + " failed: " +
                        cudaGetErrorString(status) + " (" + free_text + " of device memory free)");
    }
    return pointer;
}

void release(void* pointer) noexcept {
    if (pointer != nullptr) (void)cudaFree(pointer);
}

void copy_to_host(void* host, const void* device, std::size_t bytes) {
    QMARG_CUDA_CHECK(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
}

void copy_to_device(void* device, const void* host, std::size_t bytes) {
    QMARG_CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
}

void copy_on_device(void* device_dst, const void* device_src, std::size_t bytes) {
    QMARG_CUDA_CHECK(cudaMemcpy(device_dst, device_src, bytes, cudaMemcpyDeviceToDevice));
}

std::size_t free_memory() {
    std::size_t free_bytes = 0, total_bytes = 0;
    QMARG_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return free_bytes;
}

}  // namespace gpu
}  // namespace qmarg
