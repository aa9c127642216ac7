// StateVector<Real>: the 2^n interleaved-complex amplitudes of an n-qubit pure
// state, owned on one device (host memory for Device::Cpu, cudaMalloc'd device
// memory for Device::Gpu; never managed memory).
//
// It is movable but not copyable: a copy of a 30-qubit state is 16 GiB and
// should be written down (clone(), to()). The size is checked against the
// memory of the target device before anything is allocated, so asking for too
// many qubits is an Error that says what would fit, not an OOM kill.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "qmarg/types.hpp"

namespace qmarg {

template <class Real>
class StateVector {
    static_assert(std::is_same<Real, float>::value || std::is_same<Real, double>::value,
                  "StateVector is defined for float and double");

public:
    using real_type = Real;
    using value_type = std::complex<Real>;

    // The most qubits any state may have: indices are 64-bit and byte counts
    // must not overflow.
    static constexpr int kMaxQubits = 58;

    // Allocates 2^num_qubits amplitudes on `device` and sets |0...0>.
    explicit StateVector(int num_qubits, Device device = Device::Cpu);
    ~StateVector();

    StateVector(StateVector&& other) noexcept;
    StateVector& operator=(StateVector&& other) noexcept;
    StateVector(const StateVector&) = delete;
    StateVector& operator=(const StateVector&) = delete;

    // A deep copy on the same device, and a deep copy on another (or the same) device.
    StateVector clone() const;
    StateVector to(Device device) const;

    int num_qubits() const { return num_qubits_; }
    Device device() const { return device_; }
    Index size() const { return Index{1} << num_qubits_; }
    std::size_t bytes() const { return static_cast<std::size_t>(size()) * sizeof(value_type); }

    // Raw amplitude storage: a host pointer for Device::Cpu, a device pointer
    // for Device::Gpu (for handing the state to CUDA code of your own).
    value_type* data() { return data_; }
    const value_type* data() const { return data_; }

    // Initialisers. set_random_state draws a Haar-random normalised state from
    // `seed` with a counter-based generator, so the same seed gives the same
    // state (up to rounding) on either device and any thread count.
    void set_zero_state();
    void set_basis_state(Index index);
    void set_uniform_superposition();
    void set_random_state(std::uint64_t seed);

    // Host copies in and out, whatever the device.
    std::vector<value_type> amplitudes() const;
    void set_amplitudes(const std::vector<value_type>& amplitudes);
    value_type amplitude(Index index) const;
    void set_amplitude(Index index, value_type value);

    // Copies the amplitudes of `other` (same number of qubits, any device).
    void copy_from(const StateVector& other);

private:
    StateVector(int num_qubits, Device device, bool initialise);
    void release() noexcept;
    void check_index(Index index, const char* what) const;

    int num_qubits_ = 0;
    Device device_ = Device::Cpu;
    value_type* data_ = nullptr;
};

extern template class StateVector<float>;
extern template class StateVector<double>;

// Bytes of memory that a state of `num_qubits` qubits of `Real` amplitudes needs,
// and the largest number of qubits whose state fits in what `device` has free now.
std::size_t state_bytes(int num_qubits, std::size_t bytes_per_amplitude);
int max_qubits(Device device, std::size_t bytes_per_amplitude);

}  // namespace qmarg
