// The per-device workspace of tree_reduce (cuda/reduce.cuh): device memory for
// the block partials and the ticket, and a pinned host slot for the result.
//
// Kept between calls because allocating and freeing it per reduction costs
// more than the reduction of a small state. Never freed: freeing device memory
// from a static destructor races the CUDA runtime's own teardown at exit, and
// the driver reclaims everything when the process ends.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/gpu.hpp"
#include "check.cuh"
#include "reduce.cuh"

namespace qmarg {
namespace gpu {

struct ReduceWorkspace::Slot {
    std::mutex mutex;
    // [ticket, padded to kTicketBytes][partials: partial_capacity bytes]
    void* device = nullptr;
    std::size_t partial_capacity = 0;
    void* result_host = nullptr;
    void* result_device_address = nullptr;
};

namespace {

constexpr std::size_t kTicketBytes = 256;  // keeps the partials 256-byte aligned

ReduceWorkspace::Slot& slot_of_current_device() {
    static std::mutex registry_mutex;
    static auto* slots = new std::vector<std::unique_ptr<ReduceWorkspace::Slot>>();  // see the file comment
    int device = 0;
    QMARG_CUDA_CHECK(cudaGetDevice(&device));
    std::lock_guard<std::mutex> lock(registry_mutex);
    if (slots->size() <= static_cast<std::size_t>(device)) slots->resize(static_cast<std::size_t>(device) + 1);
    auto& slot = (*slots)[static_cast<std::size_t>(device)];
    if (!slot) slot = std::make_unique<ReduceWorkspace::Slot>();
    return *slot;
}

}  // namespace

ReduceWorkspace::ReduceWorkspace(std::size_t partial_bytes) : slot_(&slot_of_current_device()), lock_(slot_->mutex) {
    if (slot_->result_host == nullptr) {
        void* host = nullptr;
        QMARG_CUDA_CHECK(cudaHostAlloc(&host, kResultBytes, cudaHostAllocMapped | cudaHostAllocPortable));
        void* device_address = nullptr;
        const cudaError_t status = cudaHostGetDevicePointer(&device_address, host, 0);
        if (status != cudaSuccess) (void)cudaFreeHost(host);
        QMARG_CUDA_CHECK(status);
        slot_->result_host = host;
        slot_->result_device_address = device_address;
    }
    if (partial_bytes > slot_->partial_capacity) {
        const std::size_t capacity = std::max(partial_bytes, 2 * slot_->partial_capacity);
        void* fresh = allocate(kTicketBytes + capacity, "reduction partials");
        const cudaError_t status = cudaMemset(fresh, 0, kTicketBytes);  // the ticket starts at 0
        if (status != cudaSuccess) release(fresh);
        QMARG_CUDA_CHECK(status);
        release(slot_->device);
        slot_->device = fresh;
        slot_->partial_capacity = capacity;
    }
}

void* ReduceWorkspace::partials() const { return static_cast<char*>(slot_->device) + kTicketBytes; }
unsigned* ReduceWorkspace::ticket() const { return static_cast<unsigned*>(slot_->device); }
void* ReduceWorkspace::result_device_address() const { return slot_->result_device_address; }
const void* ReduceWorkspace::result_host() const { return slot_->result_host; }

}  // namespace gpu
}  // namespace qmarg
