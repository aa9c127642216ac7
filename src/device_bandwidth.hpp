// One multiprocessor's share of a GPU's peak memory bandwidth, the figure the
// rules that were measured on one GPU weigh another GPU by (BinStationaryAtomic's
// merge, src/marginal_atomic_merge.hpp; the dense-gate path, cuda/apply_matrix.cuh).
// A plain C++ header, so that the tests can ask it for an H100 or an H200 without
// a GPU.
#pragma once

namespace qmarg {
namespace gpu {

// Bytes per microsecond: two transfers a memory clock (double data rate) of
// bus width / 8 bytes each, over the multiprocessors; 0 where any of them is 0
// (the driver did not report it: unknown).
constexpr double multiprocessor_bytes_per_us(double memory_clock_mhz, int bus_width_bits, int multiprocessors) {
    return multiprocessors > 0 && memory_clock_mhz > 0 && bus_width_bits > 0
               ? 2.0 * memory_clock_mhz * (bus_width_bits / 8.0) / multiprocessors
               : 0.0;
}

// The H100 80GB HBM3 (2619 MHz, 5120 bits, 132 multiprocessors) the rules were
// first measured on: 25,397 B/us. An H200 (3201 MHz, 6016 bits) has 1.44 times that.
constexpr double kH100MultiprocessorBytesPerUs = multiprocessor_bytes_per_us(2619.0, 5120, 132);

}  // namespace gpu
}  // namespace qmarg
