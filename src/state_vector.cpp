// StateVector: ownership, the memory check before allocation, and dispatch of
// the initialisers and copies to the CPU or GPU backend.
#include "qmarg/state_vector.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "backend/cpu.hpp"
#include "backend/gpu.hpp"
#include "format.hpp"
#include "qmarg/device.hpp"
#include "qmarg/error.hpp"
#include "validation.hpp"

namespace qmarg {
namespace detail {
void throw_built_without_cuda() {
    throw Error("qmarg was built without CUDA support: GPU operations are unavailable (rebuild with nvcc on PATH)");
}
}  // namespace detail

namespace {

// Host memory a new allocation can take without swapping: MemAvailable from
// /proc/meminfo, else physical memory.
std::size_t host_available_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    unsigned long long kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit) {
        if (key == "MemAvailable:") return static_cast<std::size_t>(kib) * 1024;
    }
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page_size > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size) : 0;
}

std::size_t available_bytes(Device device) {
    if (device == Device::Cpu) return host_available_bytes();
    if (!built_with_cuda()) detail::throw_built_without_cuda();
    if (!gpu_available()) throw Error("no usable GPU for a GPU state: " + gpu_unavailable_reason());
    QMARG_GPU_CALL(return gpu::free_memory());
}

const char* precision_name(std::size_t bytes_per_amplitude) {
    return bytes_per_amplitude == sizeof(std::complex<float>) ? "single-precision" : "double-precision";
}

}  // namespace

std::size_t state_bytes(int num_qubits, std::size_t bytes_per_amplitude) {
    return (std::size_t{1} << num_qubits) * bytes_per_amplitude;
}

int max_qubits(Device device, std::size_t bytes_per_amplitude) {
    const std::size_t available = available_bytes(device);
    int n = 0;
    while (n + 1 <= StateVector<double>::kMaxQubits && state_bytes(n + 1, bytes_per_amplitude) <= available) ++n;
    return n;
}

template <class Real>
StateVector<Real>::StateVector(int num_qubits, Device device) : StateVector(num_qubits, device, true) {}

template <class Real>
StateVector<Real>::StateVector(int num_qubits, Device device, bool initialise) {
    validation::check_num_qubits(num_qubits, kMaxQubits);
    const std::size_t needed = state_bytes(num_qubits, sizeof(value_type));
    const std::size_t available = available_bytes(device);
    if (needed > available) {
        const int fits = max_qubits(device, sizeof(value_type));
        throw Error("a " + std::to_string(num_qubits) + "-qubit " + precision_name(sizeof(value_type)) +
                    " state needs " + detail::human_bytes(needed) + " but the " + to_string(device) + " has " +
                    detail::human_bytes(available) + " available (at most " + std::to_string(fits) +
                    " qubits fit)");
    }
    if (device == Device::Cpu) {
        // 64-byte alignment: whole cache lines, and room for wide vector loads.
        const std::size_t rounded = (needed + 63) / 64 * 64;
        data_ = static_cast<value_type*>(std::aligned_alloc(64, rounded));
        if (data_ == nullptr) {
            throw Error("could not allocate " + detail::human_bytes(needed) + " of host memory for a " +
                        std::to_string(num_qubits) + "-qubit state");
        }
    } else {
        QMARG_GPU_CALL(data_ = static_cast<value_type*>(gpu::allocate(needed, "a state vector")));
    }
    num_qubits_ = num_qubits;
    device_ = device;
    if (initialise) {
        try {
            set_zero_state();
        } catch (...) {
            release();
            throw;
        }
    }
}

template <class Real>
StateVector<Real>::~StateVector() {
    release();
}

template <class Real>
void StateVector<Real>::release() noexcept {
    if (data_ == nullptr) return;
    if (device_ == Device::Cpu) {
        std::free(data_);
    } else {
#if defined(QMARG_WITH_CUDA)
        gpu::release(data_);
#endif
    }
    data_ = nullptr;
}

template <class Real>
StateVector<Real>::StateVector(StateVector&& other) noexcept
    : num_qubits_(other.num_qubits_), device_(other.device_), data_(std::exchange(other.data_, nullptr)) {}

template <class Real>
StateVector<Real>& StateVector<Real>::operator=(StateVector&& other) noexcept {
    if (this != &other) {
        release();
        num_qubits_ = other.num_qubits_;
        device_ = other.device_;
        data_ = std::exchange(other.data_, nullptr);
    }
    return *this;
}

template <class Real>
StateVector<Real> StateVector<Real>::clone() const {
    return to(device_);
}

template <class Real>
StateVector<Real> StateVector<Real>::to(Device device) const {
    StateVector copy(num_qubits_, device, false);
    copy.copy_from(*this);
    return copy;
}

template <class Real>
void StateVector<Real>::copy_from(const StateVector& other) {
    if (other.num_qubits_ != num_qubits_) {
        throw Error("copy_from: the states have different numbers of qubits (" + std::to_string(num_qubits_) +
                    " and " + std::to_string(other.num_qubits_) + ")");
    }
    if (this == &other) return;
    if (device_ == Device::Cpu && other.device_ == Device::Cpu) {
        std::memcpy(data_, other.data_, bytes());
    } else if (device_ == Device::Cpu) {
        QMARG_GPU_CALL(gpu::copy_to_host(data_, other.data_, bytes()));
    } else if (other.device_ == Device::Cpu) {
        QMARG_GPU_CALL(gpu::copy_to_device(data_, other.data_, bytes()));
    } else {
        QMARG_GPU_CALL(gpu::copy_on_device(data_, other.data_, bytes()));
    }
}

template <class Real>
void StateVector<Real>::check_index(Index index, const char* what) const {
    if (index >= size()) {
        throw Error(std::string(what) + ": amplitude index " + std::to_string(index) + " is out of range for a " +
                    std::to_string(num_qubits_) + "-qubit state (valid indices are 0.." +
                    std::to_string(size() - 1) + ")");
    }
}

template <class Real>
void StateVector<Real>::set_zero_state() {
    set_basis_state(0);
}

template <class Real>
void StateVector<Real>::set_basis_state(Index index) {
    check_index(index, "set_basis_state");
    if (device_ == Device::Cpu) {
        cpu::set_basis_state(data_, size(), index);
    } else {
        QMARG_GPU_CALL(gpu::set_basis_state(data_, size(), index));
    }
}

template <class Real>
void StateVector<Real>::set_uniform_superposition() {
    if (device_ == Device::Cpu) {
        cpu::set_uniform_superposition(data_, size());
    } else {
        QMARG_GPU_CALL(gpu::set_uniform_superposition(data_, size()));
    }
}

template <class Real>
void StateVector<Real>::set_random_state(std::uint64_t seed) {
    if (device_ == Device::Cpu) {
        cpu::set_random_state(data_, size(), seed);
    } else {
        QMARG_GPU_CALL(gpu::set_random_state(data_, size(), seed));
    }
}

template <class Real>
std::vector<typename StateVector<Real>::value_type> StateVector<Real>::amplitudes() const {
    std::vector<value_type> host(static_cast<std::size_t>(size()));
    if (device_ == Device::Cpu) {
        std::memcpy(host.data(), data_, bytes());
    } else {
        QMARG_GPU_CALL(gpu::copy_to_host(host.data(), data_, bytes()));
    }
    return host;
}

template <class Real>
void StateVector<Real>::set_amplitudes(const std::vector<value_type>& amplitudes) {
    if (amplitudes.size() != size()) {
        throw Error("set_amplitudes: got " + std::to_string(amplitudes.size()) + " amplitudes for a " +
                    std::to_string(num_qubits_) + "-qubit state, which has " + std::to_string(size()));
    }
    if (device_ == Device::Cpu) {
        std::memcpy(data_, amplitudes.data(), bytes());
    } else {
        QMARG_GPU_CALL(gpu::copy_to_device(data_, amplitudes.data(), bytes()));
    }
}

template <class Real>
typename StateVector<Real>::value_type StateVector<Real>::amplitude(Index index) const {
    check_index(index, "amplitude");
    if (device_ == Device::Cpu) return data_[index];
    value_type value;
    QMARG_GPU_CALL(gpu::copy_to_host(&value, data_ + index, sizeof(value_type)));
    return value;
}

template <class Real>
void StateVector<Real>::set_amplitude(Index index, value_type value) {
    check_index(index, "set_amplitude");
    if (device_ == Device::Cpu) {
        data_[index] = value;
    } else {
        QMARG_GPU_CALL(gpu::copy_to_device(data_ + index, &value, sizeof(value_type)));
    }
}

template class StateVector<float>;
template class StateVector<double>;

}  // namespace qmarg
