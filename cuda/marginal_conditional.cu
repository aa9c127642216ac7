// gpu::conditional_marginal_probabilities and gpu::outcome_probability: sums of
// |a_i|^2 over only the amplitudes whose condition qubits hold given values,
// so that a condition on m qubits reads 2^(n-m) amplitudes, not 2^n.
//
// Conditional marginal: BinStationary over the compact state of the matching
// amplitudes (conditional_marginal_bin_stationary, marginal_fixed_bits.hpp):
// the same kernels, plans and rules as a plain marginal of an (n - m)-qubit
// state, with the plan's index images spread over the free positions. So it
// reads at the engine's rate, adds in a fixed order with no floating-point
// atomics, and repeats bitwise. Both paths load amplitude pairs (index bit 0
// varies within a load), so a condition on qubit 0 is a listed qubit
// instead: the engine writes the bins of both its values and the call keeps
// one half.
//
// Memory delivers 64-byte pieces (4 double or 8 float amplitudes), so a
// condition on the qubits within one (0, 1, and 2 in float) reads what the
// whole state costs: measured on an H100, a double state conditioned on
// qubit 1 (the lanes' reads spread to every other 32-byte sector) took as
// long as a plain read of all of it (bench/results/README.md).
//
// Outcome probability: the tree reduction of reduce.cuh over the 2^(n-k)
// amplitudes of the outcome; item j maps to its index by inserting the fixed
// bits (insert_zero_bits of qmarg/bits.hpp, as the CPU reference does).
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "backend/gpu.hpp"
#include "check.cuh"
#include "device_array.cuh"
#include "device_complex.cuh"
#include "marginal_common.cuh"
#include "qmarg/bits.hpp"
#include "reduce.cuh"

namespace qmarg {
namespace gpu {
namespace {

// The sum of |a|^2 over the amplitudes of one outcome (an Op of reduce.cuh).
template <class Real>
struct OutcomeTerm {
    using Acc = double;
    using Item = DeviceComplex<Real>;
    const Item* amps;
    std::uint64_t base;  // the outcome's bits at the listed qubits
    int k;
    int sorted_qubits[kMaxMarginalQubits];

    __device__ Item load(Index j) const { return __ldg(amps + (base | insert_zero_bits(j, sorted_qubits, k))); }
    __device__ Acc term(const Item& v, Index) const { return probability(v); }
};

}  // namespace

template <class Real>
void conditional_marginal_probabilities(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                                        const Qubits& condition_qubits, const std::vector<int>& condition_values,
                                        double* out) {
    FixedBits fixed;
    int qubit0_value = -1;  // the condition's value of qubit 0, -1 where it has none
    for (std::size_t j = 0; j < condition_qubits.size(); ++j) {
        const int q = condition_qubits[j];
        if (q == 0) {
            qubit0_value = condition_values[j];
            continue;
        }
        fixed.mask |= std::uint64_t{1} << q;
        if (condition_values[j]) fixed.values |= std::uint64_t{1} << q;
    }
    if (qubit0_value < 0) {
        conditional_marginal_bin_stationary(amps, num_qubits, qubits, fixed, out);
        return;
    }
    // Qubit 0 listed last: its value is the top bin bit, so the bins of the
    // condition's value are one contiguous half.
    Qubits with_qubit0 = qubits;
    with_qubit0.push_back(0);
    const std::uint64_t bins = std::uint64_t{1} << qubits.size();
    DeviceArray<double> both(2 * bins, "conditional marginal, both values of qubit 0");
    conditional_marginal_bin_stationary(amps, num_qubits, with_qubit0, fixed, both.data());
    QMARG_CUDA_CHECK(cudaMemcpyAsync(out, both.data() + static_cast<std::uint64_t>(qubit0_value) * bins,
                                     bins * sizeof(double), cudaMemcpyDeviceToDevice, 0));
    // `both` returns to the stream-ordered pool after the copy.
}

template <class Real>
double outcome_probability(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                           std::uint64_t outcome) {
    OutcomeTerm<Real> op{};
    op.amps = reinterpret_cast<const DeviceComplex<Real>*>(amps);
    op.k = static_cast<int>(qubits.size());
    op.base = scatter_bits(outcome, qubits.data(), op.k);
    Qubits sorted_qubits = qubits;
    std::sort(sorted_qubits.begin(), sorted_qubits.end());
    std::copy(sorted_qubits.begin(), sorted_qubits.end(), op.sorted_qubits);
    return tree_reduce(op, Index{1} << (num_qubits - op.k));
}

#define QMARG_INSTANTIATE(Real)                                                                                     \
    template void conditional_marginal_probabilities<Real>(const std::complex<Real>*, int, const Qubits&,          \
                                                           const Qubits&, const std::vector<int>&, double*);       \
    template double outcome_probability<Real>(const std::complex<Real>*, int, const Qubits&, std::uint64_t);
QMARG_INSTANTIATE(float)
QMARG_INSTANTIATE(double)
#undef QMARG_INSTANTIATE

}  // namespace gpu
}  // namespace qmarg
