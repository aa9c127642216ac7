// The CPU reference backend (OpenMP, Eigen for small dense matrices): simple,
// obviously correct, still parallel. Every GPU result is tested against it.
// Inputs arrive validated; pointers are host pointers to 2^n amplitudes.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "qmarg/matrix.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace cpu {

// src/cpu/state_init.cpp
template <class Real> void set_zero_state(std::complex<Real>* amps, Index size);
template <class Real> void set_basis_state(std::complex<Real>* amps, Index size, Index index);
template <class Real> void set_uniform_superposition(std::complex<Real>* amps, Index size);
template <class Real> void set_random_state(std::complex<Real>* amps, Index size, std::uint64_t seed);

// src/cpu/marginal.cpp: the 2^k marginal probabilities (conventions in qmarg/marginal.hpp).
template <class Real>
std::vector<double> marginal_probabilities(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits);

// src/cpu/marginal_queries.cpp (conventions in qmarg/marginal_queries.hpp).
// condition_qubits/condition_values: m qubits outside `qubits` and their 0/1 values.
template <class Real>
std::vector<std::vector<double>> marginal_probabilities_of_lists(const std::complex<Real>* amps, int num_qubits,
                                                                 const std::vector<Qubits>& lists);
template <class Real>
std::vector<double> conditional_marginal_probabilities(const std::complex<Real>* amps, int num_qubits,
                                                       const Qubits& qubits, const Qubits& condition_qubits,
                                                       const std::vector<int>& condition_values);
template <class Real>
double outcome_probability(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits,
                           std::uint64_t outcome);

// src/cpu/read_roofline.cpp: the sum of every real and imaginary part, read
// in parallel: the CPU's read roofline (qmarg/benchmark.hpp).
template <class Real> double read_roofline(const std::complex<Real>* amps, Index size);

// src/cpu/reductions.cpp
template <class Real> double total_probability(const std::complex<Real>* amps, Index size);
template <class Real>
std::complex<double> inner_product(const std::complex<Real>* a, const std::complex<Real>* b, Index size);

// src/cpu/expectation_z.cpp: sum_i |a_i|^2 (-1)^parity(bits of i on `qubits`).
template <class Real> double expectation_z(const std::complex<Real>* amps, int num_qubits, const Qubits& qubits);

// src/cpu/apply_matrix.cpp: control_values is empty (all controls 1) or one 0/1 per control.
template <class Real>
void apply_matrix(std::complex<Real>* amps, int num_qubits, const Qubits& targets, const Matrix& matrix,
                  const Qubits& controls, const std::vector<int>& control_values);

}  // namespace cpu
}  // namespace qmarg
