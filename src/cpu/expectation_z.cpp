// cpu::expectation_z: <psi| Z_{q1} ... Z_{qm} |psi> = sum_i |a_i|^2 (-1)^parity(i & mask),
// accumulated in double. The sum runs over fixed chunks whose partials are
// added in order, so the result does not depend on the OpenMP thread count.
// The sign comes from qmarg::parity (qmarg/bits.hpp), the helper the GPU uses.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "backend/cpu.hpp"
#include "qmarg/bits.hpp"

namespace qmarg {
namespace cpu {

template <class Real>
double expectation_z(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits) {
    const int k = static_cast<int>(qubits.size());
    const std::uint64_t mask = scatter_bits((std::uint64_t{1} << k) - 1, qubits.data(), k);
    constexpr std::int64_t kChunk = 1 << 12;
    const std::int64_t n = std::int64_t{1} << num_qubits;
    const std::int64_t chunks = (n + kChunk - 1) / kChunk;
    std::vector<double> partial(static_cast<std::size_t>(chunks), 0.0);
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
        double sum = 0;
        const std::int64_t end = std::min(n, (c + 1) * kChunk);
        for (std::int64_t i = c * kChunk; i < end; ++i) {
            const double re = amps[i].real();
            const double im = amps[i].imag();
            const double p = re * re + im * im;
            sum += parity(static_cast<std::uint64_t>(i) & mask) ? -p : p;
        }
        partial[static_cast<std::size_t>(c)] = sum;
    }
    double total = 0;
    for (double p : partial) total += p;
    return total;
}

template double expectation_z<float>(const std::complex<float>*, int, const Qubits&);
template double expectation_z<double>(const std::complex<double>*, int, const Qubits&);

}  // namespace cpu
}  // namespace qmarg
