// gpu::total_probability, gpu::inner_product and gpu::expectation_z: the terms
// of cuda/reduction_terms.cuh summed by the deterministic tree reduction of
// cuda/reduce.cuh (fixed grid, per-thread double accumulation, fixed trees, no
// floating-point atomics), so each returns the same bits on every run on the
// same GPU.
#include <complex>
#include <cstdint>

#include "backend/gpu.hpp"
#include "qmarg/bits.hpp"
#include "reduce.cuh"
#include "reduction_terms.cuh"

namespace qmarg {
namespace gpu {

template <class Real>
double total_probability(const std::complex<Real>* amps, Index size) {
    const TotalProbabilityTerm<Real> op{as_packs(amps, size, "total_probability")};
    return tree_reduce(op, pack_count<Real>(size));
}

template <class Real>
std::complex<double> inner_product(const std::complex<Real>* a, const std::complex<Real>* b, Index size) {
    const InnerProductTerm<Real> op{as_packs(a, size, "inner_product"), as_packs(b, size, "inner_product")};
    const ComplexSum sum = tree_reduce(op, pack_count<Real>(size));
    return {sum.re, sum.im};
}

template <class Real>
double expectation_z(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits) {
    const Index size = Index{1} << num_qubits;
    const int k = static_cast<int>(qubits.size());
    const std::uint64_t mask = scatter_bits((std::uint64_t{1} << k) - 1, qubits.data(), k);
    const ExpectationZTerm<Real> op{as_packs(amps, size, "expectation_z"), mask};
    return tree_reduce(op, pack_count<Real>(size));
}

#define QMARG_INSTANTIATE(Real)                                                                                 \
    template double total_probability<Real>(const std::complex<Real>*, Index);                                  \
    template std::complex<double> inner_product<Real>(const std::complex<Real>*, const std::complex<Real>*,     \
                                                      Index);                                                   \
    template double expectation_z<Real>(const std::complex<Real>*, int, const Qubits&);
QMARG_INSTANTIATE(float)
QMARG_INSTANTIATE(double)
#undef QMARG_INSTANTIATE

}  // namespace gpu
}  // namespace qmarg
