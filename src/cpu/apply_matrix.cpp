// CPU dense gate application: the reference for every GPU gate kernel.
//
// A k-target gate with c controls mixes disjoint groups of 2^k amplitudes: one
// group per assignment of the n-k-c qubits that are neither targets nor controls
// (the controls are pinned to their required values). Groups are independent,
// so threads split them statically with no synchronisation. Each thread gathers
// a batch of groups as the columns of a 2^k x B matrix, multiplies it by the gate
// with Eigen, and scatters the columns back; batching turns 2^k x 2^k
// matrix-vector products into a matrix product without changing any result.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include <Eigen/Dense>

#include "backend/cpu.hpp"
#include "qmarg/bits.hpp"

namespace qmarg {
namespace cpu {
namespace {

// Amplitudes gathered per batch (2^k rows x B columns): a few KiB per thread.
constexpr std::int64_t kBatchAmplitudes = 1 << 10;

}  // namespace

template <class Real>
void apply_matrix(std::complex<Real>* amps, int num_qubits, const Qubits& targets, const Matrix& matrix,
                  const Qubits& controls, const std::vector<int>& control_values) {
    using Complex = std::complex<Real>;
    using ComplexMatrix = Eigen::Matrix<Complex, Eigen::Dynamic, Eigen::Dynamic>;
    const int k = static_cast<int>(targets.size());
    const int c = static_cast<int>(controls.size());
    const std::int64_t dim = std::int64_t{1} << k;

    // The matrix in the state's precision (see qmarg/matrix.hpp).
    ComplexMatrix gate(dim, dim);
    for (std::int64_t r = 0; r < dim; ++r)
        for (std::int64_t col = 0; col < dim; ++col)
            gate(r, col) = Complex(matrix(static_cast<int>(r), static_cast<int>(col)));

    // Row r of the matrix is the amplitude at group base | offset[r].
    std::vector<Index> offset(static_cast<std::size_t>(dim));
    for (std::int64_t r = 0; r < dim; ++r) offset[r] = scatter_bits(static_cast<Index>(r), targets.data(), k);

    // Group bases: the free qubits from a counter, the controls at their values.
    Qubits pinned = targets;
    pinned.insert(pinned.end(), controls.begin(), controls.end());
    std::sort(pinned.begin(), pinned.end());
    Index control_bits = 0;
    for (int j = 0; j < c; ++j) {
        if (control_values.empty() || control_values[j] == 1) control_bits |= Index{1} << controls[j];
    }

    const std::int64_t groups = std::int64_t{1} << (num_qubits - k - c);
    const std::int64_t batch = std::clamp<std::int64_t>(kBatchAmplitudes >> k, 1, groups);
    const std::int64_t batches = (groups + batch - 1) / batch;

#pragma omp parallel if (batches > 1)
    {
        ComplexMatrix in(dim, batch);
        ComplexMatrix out(dim, batch);
        std::vector<Index> base(static_cast<std::size_t>(batch));
#pragma omp for schedule(static)
        for (std::int64_t b = 0; b < batches; ++b) {
            const std::int64_t first = b * batch;
            const std::int64_t columns = std::min(batch, groups - first);
            for (std::int64_t j = 0; j < columns; ++j) {
                base[j] = insert_zero_bits(static_cast<Index>(first + j), pinned.data(), k + c) | control_bits;
                for (std::int64_t r = 0; r < dim; ++r) in(r, j) = amps[base[j] | offset[r]];
            }
            out.leftCols(columns).noalias() = gate * in.leftCols(columns);
            for (std::int64_t j = 0; j < columns; ++j) {
                for (std::int64_t r = 0; r < dim; ++r) amps[base[j] | offset[r]] = out(r, j);
            }
        }
    }
}

template void apply_matrix<float>(std::complex<float>*, int, const Qubits&, const Matrix&, const Qubits&,
                                  const std::vector<int>&);
template void apply_matrix<double>(std::complex<double>*, int, const Qubits&, const Matrix&, const Qubits&,
                                   const std::vector<int>&);

}  // namespace cpu
}  // namespace qmarg
