// DeviceArray<T>: scoped temporary device memory for launchers. Freed on every
// path out of the scope, exceptions included, so an error never leaks memory.
// It comes from qmarg's stream-ordered scratch pool (cudaMallocFromPoolAsync on
// the default stream): freeing does not synchronise the device, and a launcher
// called in a loop reuses the same memory instead of paying cudaMalloc/cudaFree.
#pragma once

#include <cstddef>
#include <utility>

#include "backend/gpu.hpp"

namespace qmarg {
namespace gpu {

template <class T>
class DeviceArray {
public:
    DeviceArray() = default;
    DeviceArray(std::size_t count, const char* what)
        : data_(count ? static_cast<T*>(allocate_scratch(count * sizeof(T), what)) : nullptr), size_(count) {}
    ~DeviceArray() { release_scratch(data_); }
    DeviceArray(DeviceArray&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    DeviceArray& operator=(DeviceArray&& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
        return *this;
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;

    T* data() const { return data_; }
    std::size_t size() const { return size_; }

private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace gpu
}  // namespace qmarg
