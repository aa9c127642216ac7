// cpu::expectation_z: <psi| Z_{q1} ... Z_{qm} |psi> = sum_i |a_i|^2 (-1)^parity(i & mask),
// accumulated in double as a fixed-order tree (src/cpu/tree_reduce.hpp), so the
// result does not depend on the OpenMP thread count.
// The sign comes from qmarg::parity (qmarg/bits.hpp), the helper the GPU uses.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "backend/cpu.hpp"
#include "cpu/tree_reduce.hpp"
#include "qmarg/bits.hpp"

namespace qmarg {
namespace cpu {

template <class Real>
double expectation_z(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits) {
    const int k = static_cast<int>(qubits.size());
    const std::uint64_t mask = scatter_bits((std::uint64_t{1} << k) - 1, qubits.data(), k);
    return tree_reduce<double>(Index{1} << num_qubits, [amps, mask](Index begin, Index end) {
        double sum = 0;
        for (Index i = begin; i < end; ++i) {
            const double re = amps[i].real();
            const double im = amps[i].imag();
            const double p = re * re + im * im;
            sum += parity(i & mask) ? -p : p;
        }
        return sum;
    });
}

template double expectation_z<float>(const std::complex<float>*, int, const Qubits&);
template double expectation_z<double>(const std::complex<double>*, int, const Qubits&);

}  // namespace cpu
}  // namespace qmarg
