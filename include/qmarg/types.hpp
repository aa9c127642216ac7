// Basic vocabulary shared by every public header.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace qmarg {

// Where the amplitudes of a state live.
enum class Device { Cpu, Gpu };

inline const char* to_string(Device device) { return device == Device::Cpu ? "CPU" : "GPU"; }

// An ordered list of qubit indices. Qubit q is bit q of an amplitude index
// (little-endian). For marginals and gate targets, qubits[0] is the least
// significant bit of the output / matrix index.
using Qubits = std::vector<int>;

// Amplitude indices are 64-bit: states of 2^30 amplitudes and beyond are normal.
using Index = std::uint64_t;

}  // namespace qmarg
