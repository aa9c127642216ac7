// DeviceBuffer<T>: an owned array in GPU memory, for results that stay on the
// device (marginals fed into further GPU work). Movable, not copyable.
#pragma once

#include <cstddef>
#include <vector>

namespace qmarg {

template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count);  // uninitialised device memory
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    // Reallocates only when the size changes; contents are then undefined.
    void resize(std::size_t count);

    std::size_t size() const { return size_; }
    T* data() { return data_; }  // a device pointer
    const T* data() const { return data_; }

    std::vector<T> to_host() const;

private:
    void release() noexcept;
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

extern template class DeviceBuffer<double>;
extern template class DeviceBuffer<float>;

}  // namespace qmarg
