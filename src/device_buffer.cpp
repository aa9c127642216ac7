#include "qmarg/device_buffer.hpp"

#include <string>
#include <utility>

#include "backend/gpu.hpp"
#include "qmarg/device.hpp"
#include "qmarg/error.hpp"

namespace qmarg {

template <class T>
DeviceBuffer<T>::DeviceBuffer(std::size_t count) {
    resize(count);
}

template <class T>
DeviceBuffer<T>::~DeviceBuffer() {
    release();
}

template <class T>
DeviceBuffer<T>::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

template <class T>
DeviceBuffer<T>& DeviceBuffer<T>::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        release();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

template <class T>
void DeviceBuffer<T>::resize(std::size_t count) {
    if (count == size_) return;
    if (count > 0 && !gpu_available()) throw Error("DeviceBuffer needs a usable GPU: " + gpu_unavailable_reason());
    release();
    if (count == 0) return;
    QMARG_GPU_CALL(data_ = static_cast<T*>(gpu::allocate(count * sizeof(T), "a device buffer")));
    size_ = count;
}

template <class T>
void DeviceBuffer<T>::release() noexcept {
#if defined(QMARG_WITH_CUDA)
    if (data_ != nullptr) gpu::release(data_);
#endif
    data_ = nullptr;
    size_ = 0;
}

template <class T>
std::vector<T> DeviceBuffer<T>::to_host() const {
    std::vector<T> host(size_);
    if (size_ > 0) QMARG_GPU_CALL(gpu::copy_to_host(host.data(), data_, size_ * sizeof(T)));
    return host;
}

template class DeviceBuffer<double>;
template class DeviceBuffer<float>;

}  // namespace qmarg
