// The GPU backend as the host code sees it: plain C++ declarations of the
// launchers that live in cuda/*.cu. No CUDA type appears here, so src/*.cpp
// compile with the host compiler alone.
//
// All pointers to amplitudes and results are device pointers. Every function
// checks each CUDA call and launch and throws CudaError on failure; temporary
// device memory is released on every path.
//
// When qmarg is built without CUDA, no GPU state can exist (its constructor
// throws), and dispatch code reaches this backend only through QMARG_GPU_CALL,
// which then compiles to a throw.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "qmarg/device.hpp"
#include "qmarg/marginal.hpp"
#include "qmarg/matrix.hpp"
#include "qmarg/types.hpp"

#if defined(QMARG_WITH_CUDA)
#define QMARG_GPU_CALL(...) __VA_ARGS__
#else
#define QMARG_GPU_CALL(...) ::qmarg::detail::throw_built_without_cuda()
#endif

namespace qmarg {
namespace detail {
[[noreturn]] void throw_built_without_cuda();
}  // namespace detail

namespace gpu {

// cuda/device_info.cu
bool available();
std::string unavailable_reason();
GpuInfo info();

// cuda/memory.cu. `what` names the allocation in the error message.
void* allocate(std::size_t bytes, const char* what);
void release(void* pointer) noexcept;
void copy_to_host(void* host, const void* device, std::size_t bytes);
void copy_to_device(void* device, const void* host, std::size_t bytes);
// In order on the default stream, without waiting for the work before it (no
// stream synchronisation, unlike copy_to_device). `host` must be pageable
// memory (a std::vector's, say): that is staged before the call returns, so it
// may go away at once. Pinned memory would be read later, by the copy itself.
void copy_to_device_async(void* device, const void* host, std::size_t bytes);
void copy_on_device(void* device_dst, const void* device_src, std::size_t bytes);
std::size_t free_memory();
// Stream-ordered scratch memory from a pool owned by qmarg: no device-wide
// synchronisation on free, and repeated calls reuse memory. Ordered on the
// default stream, so a release waits for the kernels launched before it.
void* allocate_scratch(std::size_t bytes, const char* what);
void release_scratch(void* pointer) noexcept;

// cuda/state_init.cu
template <class Real> void set_zero_state(std::complex<Real>* amps, Index size);
template <class Real> void set_basis_state(std::complex<Real>* amps, Index size, Index index);
template <class Real> void set_uniform_superposition(std::complex<Real>* amps, Index size);
template <class Real> void set_random_state(std::complex<Real>* amps, Index size, std::uint64_t seed);

// cuda/marginal.cu and cuda/marginal_*.cu: writes the 2^k probabilities to the
// device array `out`. Throws Error when an explicitly requested strategy cannot
// run this case (bins that do not fit), saying why and what would fit.
template <class Real>
void marginal_probabilities(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits, double* out,
                            MarginalStrategy strategy);

// cuda/marginal_lists.cu: the marginals of every list, concatenated in list
// order into `out` (sum of 2^k_j doubles). The plan is in qmarg/marginal_queries.hpp.
template <class Real>
void marginal_probabilities_of_lists(const std::complex<Real>* amps, int num_qubits, const std::vector<Qubits>& lists,
                                     double* out);
// cuda/marginal_conditional.cu: writes the 2^k conditional marginal to `out`.
template <class Real>
void conditional_marginal_probabilities(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                        const Qubits& condition_qubits, const std::vector<int>& condition_values,
                                        double* out);
// cuda/marginal_conditional.cu: tree reduction over the 2^(n-k) matching amplitudes.
template <class Real>
double outcome_probability(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                           std::uint64_t outcome);

// cuda/benchmark.cu: per-run milliseconds (conventions in qmarg/benchmark.hpp).
// time_marginal_ms keeps the 2^k results in a device temporary.
template <class Real>
std::vector<double> time_marginal_ms(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                     MarginalStrategy strategy, int warmup, int runs);
std::vector<double> time_read_roofline_ms(const void* data, std::size_t bytes, int warmup, int runs);

// cuda/reductions.cu: deterministic tree reductions (cuda/reduce.cuh).
template <class Real> double total_probability(const std::complex<Real>* amps, Index size);
template <class Real>
std::complex<double> inner_product(const std::complex<Real>* a, const std::complex<Real>* b, Index size);
template <class Real> double expectation_z(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits);

// cuda/apply_matrix.cu
template <class Real>
void apply_matrix(std::complex<Real>* amps, int num_qubits, const Qubits& targets, const Matrix& matrix,
                  const Qubits& controls, const std::vector<int>& control_values);

}  // namespace gpu
}  // namespace qmarg
