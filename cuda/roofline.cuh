// The read roofline: a plain read of a buffer at the speed this GPU reads
// memory today. Every marginal benchmark (the qmarg tool's `bench marginal`
// through qmarg/benchmark.hpp, and the Google Benchmark programs in bench/)
// times this one kernel in the same process, on the same state, and reports
// its results as a ratio to it. It is defined once, in cuda/roofline.cu, so
// that the library and the benchmark programs cannot drift apart.
#pragma once

#include <cstddef>

namespace qmarg {
namespace gpu {

// Launches the read roofline over `bytes` (a multiple of 32) at the device
// pointer `data` on the default stream: a grid-stride loop of 32-byte vector
// loads, 256 threads per block, 16 blocks per multiprocessor. `sink` is one
// device double, written only if the sum of the data is impossible, so the
// loads cannot be removed and nothing else is written. Checks the launch.
void launch_read_roofline(const void* data, std::size_t bytes, double* sink);

}  // namespace gpu
}  // namespace qmarg
