// gpu::apply_matrix: checks what only the GPU limits (the number of targets),
// describes the gate's qubits once for every kernel, reads the matrix's
// structure on the host and hands the gate to one path (cuda/apply_matrix.cuh
// lists them). The structure is read exactly: a matrix is diagonal only if
// every off-diagonal entry is exactly zero, so no path ever changes a result.
#include <algorithm>
#include <string>
#include <vector>

#include "apply_matrix.cuh"
#include "backend/gpu.hpp"
#include "device_attribute.cuh"
#include "qmarg/error.hpp"

namespace qmarg {
namespace gpu {
namespace {

enum class MatrixStructure { Identity, Diagonal, Permutation, Dense };

// Stops at the first row with two nonzeros, so a dense matrix costs one row.
MatrixStructure structure_of(const Matrix& matrix) {
    const int dim = matrix.dim();
    const Matrix::value_type zero(0.0, 0.0);
    std::vector<char> column_used(dim, 0);
    bool diagonal = true;
    bool identity = true;
    for (int r = 0; r < dim; ++r) {
        int nonzero_column = -1;
        for (int c = 0; c < dim; ++c) {
            if (matrix(r, c) == zero) continue;
            if (nonzero_column >= 0) return MatrixStructure::Dense;
            nonzero_column = c;
        }
        if (nonzero_column >= 0 && nonzero_column != r) diagonal = false;
        if (nonzero_column != r || matrix(r, r) != Matrix::value_type(1.0, 0.0)) identity = false;
        if (nonzero_column >= 0) {
            if (column_used[nonzero_column]) return MatrixStructure::Dense;
            column_used[nonzero_column] = 1;
        }
    }
    if (identity) return MatrixStructure::Identity;
    // A zero row (a projector such as |0><0|) is still diagonal when every
    // other row is; it is not a permutation.
    if (diagonal) return MatrixStructure::Diagonal;
    for (int c = 0; c < dim; ++c) {
        if (!column_used[c]) return MatrixStructure::Dense;
    }
    return MatrixStructure::Permutation;
}

}  // namespace

GateQubits describe_gate(int num_qubits, const Qubits& targets, const Qubits& controls,
                         const std::vector<int>& control_values) {
    GateQubits gate;
    gate.num_qubits = num_qubits;
    gate.num_targets = static_cast<int>(targets.size());
    gate.num_controls = static_cast<int>(controls.size());
    gate.num_fixed = gate.num_targets + gate.num_controls;
    gate.min_target = *std::min_element(targets.begin(), targets.end());
    for (int j = 0; j < gate.num_targets; ++j) {
        gate.targets[j] = targets[j];
        gate.target_stride[j] = Index{1} << targets[j];
    }
    for (int i = 0; i < gate.num_controls; ++i) {
        const bool one = control_values.empty() || control_values[i] != 0;
        if (one) gate.control_mask |= Index{1} << controls[i];
    }
    std::vector<int> sorted(controls.begin(), controls.end());
    std::sort(sorted.begin(), sorted.end());
    std::copy(sorted.begin(), sorted.end(), gate.controls_sorted);
    sorted.insert(sorted.end(), targets.begin(), targets.end());
    std::sort(sorted.begin(), sorted.end());
    std::copy(sorted.begin(), sorted.end(), gate.fixed_sorted);
    return gate;
}

TileLayout make_tile_layout(const GateQubits& gate, int free_bits) {
    const int n = gate.num_qubits;
    const int k = gate.num_targets;
    TileLayout layout;
    layout.num_free = std::max(0, std::min(free_bits, n - gate.num_fixed));
    layout.tile_bits = k + layout.num_free;
    if (layout.tile_bits > kMaxTileBits) {
        throw Error("apply_matrix: a tile of " + std::to_string(layout.tile_bits) +
                    " local bits exceeds the limit of " + std::to_string(kMaxTileBits));
    }
    layout.num_tiles = Index{1} << (n - gate.num_fixed - layout.num_free);
    layout.control_mask = gate.control_mask;

    // role[q]: what global qubit q is to this gate.
    constexpr int kFree = -1, kControl = -2;
    std::vector<int> role(n, kFree);
    for (int j = 0; j < k; ++j) role[gate.targets[j]] = j;
    for (int i = 0; i < gate.num_controls; ++i) role[gate.controls_sorted[i]] = kControl;

    std::vector<int> local;  // ascending global bits
    int free_taken = 0;
    for (int q = 0; q < n; ++q) {
        if (role[q] >= 0) {
            local.push_back(q);
        } else if (role[q] == kFree && free_taken < layout.num_free) {
            local.push_back(q);
            ++free_taken;
        }
    }
    int free_index = 0;
    for (int p = 0; p < layout.tile_bits; ++p) {
        const int q = local[p];
        layout.local_bits[p] = q;
        if (role[q] >= 0) {
            layout.local_role[p] = role[q];
            layout.target_local[role[q]] = p;
        } else {
            layout.local_role[p] = -1 - free_index;
            layout.free_stride[free_index] = Index{1} << q;
            ++free_index;
        }
    }
    for (int j = 0; j < k; ++j) {
        layout.target_local_sorted[j] = layout.target_local[j];
        layout.target_stride[j] = gate.target_stride[j];
    }
    std::sort(layout.target_local_sorted, layout.target_local_sorted + k);

    std::vector<int> outer(local.begin(), local.end());
    outer.insert(outer.end(), gate.controls_sorted, gate.controls_sorted + gate.num_controls);
    std::sort(outer.begin(), outer.end());
    layout.num_outer_fixed = static_cast<int>(outer.size());
    std::copy(outer.begin(), outer.end(), layout.outer_fixed);
    return layout;
}

// The rule is documented in cuda/apply_matrix.cuh. The three lowest qubits
// share a 128-byte line of double amplitudes, the four lowest one of float
// amplitudes.
DensePath dense_path(const GateQubits& gate, std::size_t real_bytes, const DenseDevice& device) {
    const int k = gate.num_targets;
    const bool lowest_float_k4 = real_bytes == sizeof(float) && k == 4 &&
                                 std::all_of(gate.targets, gate.targets + k, [](int q) { return q < 4; });
    const bool mma_wins =
        real_bytes == sizeof(double)
            ? k >= 5 || (k == 4 && gate.min_target < 3)
            : k >= 6 || (k == 5 && gate.min_target < 4) ||
                  (lowest_float_k4 && device.multiprocessor_bytes_per_us <
                                          kLowestFloatK4MmaMaxSpeedup * kH100MultiprocessorBytesPerUs);
    if (mma_wins && device.mma) {
        return DensePath::Mma;
    }
    return fma_path(k);
}

DenseDevice dense_device() {
    return once_per_device<DenseDevice>(
        [](int device) { return DenseDevice{mma_available(), multiprocessor_bytes_per_us_of(device)}; });
}

DensePath dense_path(const GateQubits& gate, std::size_t real_bytes) {
    return dense_path(gate, real_bytes, dense_device());
}

DensePath fma_path(int num_targets) { return num_targets <= kMaxSmallTargets ? DensePath::Small : DensePath::Tiled; }

const char* to_string(DensePath path) {
    switch (path) {
        case DensePath::Small: return "small";
        case DensePath::Tiled: return "tiled";
        case DensePath::Mma: return "mma";
    }
    return "?";
}


template <class Real>
void apply_matrix(std::complex<Real>* amps, int num_qubits, const Qubits& targets, const Matrix& matrix,
                  const Qubits& controls, const std::vector<int>& control_values) {
    const int k = static_cast<int>(targets.size());
    if (k > kMaxGateTargets) {
        throw Error("apply_matrix on the GPU: a gate on " + std::to_string(k) +
                    " targets is too large: the GPU backend applies at most " + std::to_string(kMaxGateTargets) +
                    " targets (split the gate, or apply it to a CPU state)");
    }
    const GateQubits gate = describe_gate(num_qubits, targets, controls, control_values);
    switch (structure_of(matrix)) {
        case MatrixStructure::Identity:
            return;
        case MatrixStructure::Diagonal:
            apply_matrix_diagonal(amps, gate, matrix);
            return;
        case MatrixStructure::Permutation:
            apply_matrix_permutation(amps, gate, matrix);
            return;
        case MatrixStructure::Dense:
            apply_matrix_dense(amps, gate, matrix, dense_path(gate, sizeof(Real)));
            return;
    }
}

template <class Real>
void apply_matrix_dense(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix, DensePath path) {
    switch (path) {
        case DensePath::Small: apply_matrix_small(amps, gate, matrix); return;
        case DensePath::Tiled: apply_matrix_tiled(amps, gate, matrix); return;
        case DensePath::Mma: apply_matrix_mma(amps, gate, matrix); return;
    }
}

template void apply_matrix_dense<float>(std::complex<float>*, const GateQubits&, const Matrix&, DensePath);
template void apply_matrix_dense<double>(std::complex<double>*, const GateQubits&, const Matrix&, DensePath);
template void apply_matrix<float>(std::complex<float>*, int, const Qubits&, const Matrix&, const Qubits&,
                                  const std::vector<int>&);
template void apply_matrix<double>(std::complex<double>*, int, const Qubits&, const Matrix&, const Qubits&,
                                   const std::vector<int>&);

}  // namespace gpu
}  // namespace qmarg
