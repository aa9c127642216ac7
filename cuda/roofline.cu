// The read-roofline kernel and its launcher (see roofline.cuh for why there is
// exactly one).
#include <cuda_runtime.h>

#include "check.cuh"
#include "launch.cuh"
#include "roofline.cuh"
#include "qmarg/types.hpp"

namespace qmarg {
namespace gpu {
namespace {

// 32-byte loads: the widest a thread can issue on sm_90, and what the marginal
// engine's lanes issue, so the roofline is not held back by load width.
__global__ void read_roofline_kernel(const double4_32a* data, Index count, double* sink) {
    double acc = 0;
    const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
    for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        const double4_32a v = data[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == -1.2345e300) *sink = acc;
}

}  // namespace

void launch_read_roofline(const void* data, std::size_t bytes, double* sink) {
    const Index count = bytes / sizeof(double4_32a);
    const unsigned blocks = grid_stride_blocks(count, 256, 16);
    read_roofline_kernel<<<blocks, 256>>>(static_cast<const double4_32a*>(data), count, sink);
    QMARG_CHECK_LAUNCH(read_roofline_kernel);
}

}  // namespace gpu
}  // namespace qmarg
