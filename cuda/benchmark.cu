// CUDA-event timing of library work for qmarg/benchmark.hpp. Each timed run is
// bracketed by two events on the default stream, the stream every launcher
// uses, so the time is the GPU's time for the call, launch overhead included
// and host work after the last launch excluded.
//
// L2: a state under four times the L2 cache would be partly served from L2
// after the first run and look faster than memory allows. For those, a scratch
// buffer of twice the L2 size is read with the roofline kernel before each run
// (between the events of no run), which leaves L2 full of clean lines of that
// buffer: nothing to write back, nothing of the state left.
#include <cuda_runtime.h>

#include <complex>
#include <functional>
#include <vector>

#include "backend/gpu.hpp"
#include "check.cuh"
#include "device_array.cuh"
#include "roofline.cuh"

namespace qmarg {
namespace gpu {
namespace {

// Destroys its events on every path, errors included.
class EventPair {
public:
    EventPair() {
        QMARG_CUDA_CHECK(cudaEventCreate(&start_));
        try {
            QMARG_CUDA_CHECK(cudaEventCreate(&stop_));
        } catch (...) {
            cudaEventDestroy(start_);
            throw;
        }
    }
    ~EventPair() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    EventPair(const EventPair&) = delete;
    EventPair& operator=(const EventPair&) = delete;
    cudaEvent_t start() const { return start_; }
    cudaEvent_t stop() const { return stop_; }

private:
    cudaEvent_t start_ = nullptr;
    cudaEvent_t stop_ = nullptr;
};

std::size_t l2_cache_bytes() {
    int device = 0;
    QMARG_CUDA_CHECK(cudaGetDevice(&device));
    int bytes = 0;
    QMARG_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device));
    return static_cast<std::size_t>(bytes);
}

// `work` `warmup` times, then `runs` timed runs; `state_bytes` decides whether
// L2 is flushed before each run (see the first comment).
std::vector<double> time_runs(const std::function<void()>& work, std::size_t state_bytes, int warmup, int runs) {
    const std::size_t l2 = l2_cache_bytes();
    const bool flush = l2 > 0 && state_bytes < 4 * l2;
    const std::size_t flush_bytes = (2 * l2 + 31) / 32 * 32;
    DeviceArray<unsigned char> scratch(flush ? flush_bytes : 0, "an L2 flush buffer for benchmark timing");
    DeviceArray<double> sink(1, "a roofline sink");
    if (flush) QMARG_CUDA_CHECK(cudaMemsetAsync(scratch.data(), 0, flush_bytes));

    for (int i = 0; i < warmup; ++i) work();
    EventPair events;
    std::vector<double> ms;
    ms.reserve(static_cast<std::size_t>(runs));
    for (int i = 0; i < runs; ++i) {
        if (flush) launch_read_roofline(scratch.data(), flush_bytes, sink.data());
        QMARG_CUDA_CHECK(cudaEventRecord(events.start()));
        work();
        QMARG_CUDA_CHECK(cudaEventRecord(events.stop()));
        QMARG_CUDA_CHECK(cudaEventSynchronize(events.stop()));
        float elapsed = 0;
        QMARG_CUDA_CHECK(cudaEventElapsedTime(&elapsed, events.start(), events.stop()));
        ms.push_back(static_cast<double>(elapsed));
    }
    return ms;
}

}  // namespace

template <class Real>
std::vector<double> time_marginal_ms(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                     MarginalStrategy strategy, int warmup, int runs) {
    // A strategy that cannot run the case throws its Error in the first call,
    // before anything is timed when warmup > 0.
    DeviceArray<double> out(std::size_t{1} << qubits.size(), "the marginal being timed");
    const std::size_t bytes = (std::size_t{1} << num_qubits) * sizeof(std::complex<Real>);
    return time_runs([&] { marginal_probabilities(amps, num_qubits, qubits, out.data(), strategy); }, bytes, warmup,
                     runs);
}

std::vector<double> time_read_roofline_ms(const void* data, std::size_t bytes, int warmup, int runs) {
    DeviceArray<double> sink(1, "a roofline sink");
    return time_runs([&] { launch_read_roofline(data, bytes, sink.data()); }, bytes, warmup, runs);
}

template std::vector<double> time_marginal_ms(const std::complex<float>*, int, const Qubits&, MarginalStrategy, int,
                                              int);
template std::vector<double> time_marginal_ms(const std::complex<double>*, int, const Qubits&, MarginalStrategy, int,
                                              int);

}  // namespace gpu
}  // namespace qmarg
