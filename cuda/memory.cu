// Device memory: state vectors and buffers through cudaMalloc (never managed
// memory), launcher scratch through a stream-ordered pool, and copies; each
// call checked, and out-of-memory says how much was asked and how much is free.
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <string>

#include "backend/gpu.hpp"
#include "check.cuh"
#include "format.hpp"

namespace qmarg {
namespace gpu {

namespace {

// qmarg's scratch pool on the current device. Memory the pool holds beyond
// kKeepBytes goes back to the device at synchronisation points; a failing
// cudaMalloc trims the pool to zero and tries once more, so cached scratch
// never stands in the way of a state vector.
constexpr std::uint64_t kKeepBytes = std::uint64_t{1} << 30;

cudaMemPool_t scratch_pool() {
    static cudaMemPool_t pools[64] = {};
    static std::mutex mutex;
    int device = 0;
    QMARG_CUDA_CHECK(cudaGetDevice(&device));
    std::lock_guard<std::mutex> lock(mutex);
    if (pools[device] == nullptr) {
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        QMARG_CUDA_CHECK(cudaMemPoolCreate(&pools[device], &props));
        std::uint64_t keep = kKeepBytes;
        QMARG_CUDA_CHECK(cudaMemPoolSetAttribute(pools[device], cudaMemPoolAttrReleaseThreshold, &keep));
    }
    return pools[device];
}

std::string free_memory_text() {
    std::size_t free_bytes = 0, total_bytes = 0;
    std::string text = "unknown";
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) text = detail::human_bytes(free_bytes);
    (void)cudaGetLastError();
    return text;
}

}  // namespace

void* allocate_scratch(std::size_t bytes, const char* what) {
    void* pointer = nullptr;
    const cudaError_t status = cudaMallocFromPoolAsync(&pointer, bytes, scratch_pool(), 0);
    if (status != cudaSuccess) {
        (void)cudaGetLastError();
        throw CudaError("allocation of " + detail::human_bytes(bytes) + " of scratch for " + what + " failed: " +
                        cudaGetErrorString(status) + " (" + free_memory_text() + " of device memory free)");
    }
    return pointer;
}

void release_scratch(void* pointer) noexcept {
    if (pointer != nullptr) (void)cudaFreeAsync(pointer, 0);
}

void* allocate(std::size_t bytes, const char* what) {
    void* pointer = nullptr;
    cudaError_t status = cudaMalloc(&pointer, bytes);
    if (status == cudaErrorMemoryAllocation) {
        // Cached scratch may hold the memory: give it back and try once more.
        (void)cudaGetLastError();
        (void)cudaDeviceSynchronize();
        (void)cudaMemPoolTrimTo(scratch_pool(), 0);
        status = cudaMalloc(&pointer, bytes);
    }
    if (status != cudaSuccess) {
        (void)cudaGetLastError();
        throw CudaError("cudaMalloc of " + detail::human_bytes(bytes) + " for " + what + " failed: " +
                        cudaGetErrorString(status) + " (" + free_memory_text() + " of device memory free)");
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

void copy_to_device_async(void* device, const void* host, std::size_t bytes) {
    QMARG_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, 0));
}

void copy_on_device(void* device_dst, const void* device_src, std::size_t bytes) {
    QMARG_CUDA_CHECK(cudaMemcpy(device_dst, device_src, bytes, cudaMemcpyDeviceToDevice));
}

// Free device memory, counting the scratch that qmarg's pool holds but no
// allocation uses: that memory serves the next scratch allocation directly,
// and a cudaMalloc that needs it trims the pool first (allocate, above). The
// synchronisation lets scratch freed in stream order reach the pool.
std::size_t free_memory() {
    QMARG_CUDA_CHECK(cudaStreamSynchronize(0));
    std::size_t free_bytes = 0, total_bytes = 0;
    QMARG_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    std::uint64_t reserved = 0, used = 0;
    QMARG_CUDA_CHECK(cudaMemPoolGetAttribute(scratch_pool(), cudaMemPoolAttrReservedMemCurrent, &reserved));
    QMARG_CUDA_CHECK(cudaMemPoolGetAttribute(scratch_pool(), cudaMemPoolAttrUsedMemCurrent, &used));
    return free_bytes + static_cast<std::size_t>(reserved > used ? reserved - used : 0);
}

}  // namespace gpu
}  // namespace qmarg
