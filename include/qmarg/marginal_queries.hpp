// Marginal queries beyond one plain marginal: many marginals in one pass over
// the state, marginals conditioned on the values of other qubits, the
// probability of one outcome, and sampling outcomes of a qubit list.
//
// Bin conventions are those of marginal_probabilities (qmarg/marginal.hpp):
// bit j of an output index is the value of qubits[j]. Probabilities are
// accumulated in double, also for a single-precision state. None of these
// normalises the state: each result is a sum of |a_i|^2 over the amplitudes it
// names (for a normalised state, a probability).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "qmarg/state_vector.hpp"
#include "qmarg/types.hpp"

namespace qmarg {

// One marginal per qubit list: result[j] has 2^k_j entries, exactly what
// marginal_probabilities(state, lists[j]) returns up to rounding. Lists may
// overlap and come in any order; each is validated like the single-list call
// (non-empty, in range, no duplicates) and a bad one is named by its index
// ("marginal qubit list 2: qubit 31 is out of range ..."). No lists: no results.
//
// A distinct name, not an overload of marginal_probabilities: a braced
// {{0}, {1}} would silently bind to the single list Qubits{0, 1}.
//
// GPU (cuda/marginal_lists.cu): with U the union of all listed qubits,
//  - if 2^|U| is small beside the state (|U| <= 16 and |U| <= n - 4, or any U
//    for n < 17), the U-marginal is computed in one BinStationary pass and
//    folded into every list's marginal by a small kernel;
//  - otherwise the single-qubit lists are served together by one pass that
//    accumulates, per thread, the mass with each qubit set (p(q=0) is the total
//    minus p(q=1), exact to about 1e-16 of the total), and the other lists are
//    grouped greedily, in the order given, into groups whose union meets the
//    fold rule: one BinStationary pass per group (a list too long for any
//    group gets a BinStationary pass of its own).
// So all n single-qubit marginals take one read of the state. Every kernel
// involved adds in a fixed order with no floating-point atomics, and the plan
// depends only on n and the lists: repeated calls give bitwise-identical
// results.
template <class Real>
std::vector<std::vector<double>> marginal_probabilities_of_lists(const StateVector<Real>& state,
                                                                 const std::vector<Qubits>& lists);

// A condition on qubits outside the marginal: only amplitudes whose qubit
// qubits[j] holds values[j] (0 or 1) count (cuStateVec's mask bit string and
// mask ordering). An empty condition selects every amplitude.
struct Condition {
    Qubits qubits;
    std::vector<int> values;
};

// The marginal of `qubits` over the amplitudes that satisfy `condition`: 2^k
// entries, bin conventions as marginal_probabilities. The result is the
// unnormalised probability mass (like cuStateVec's abs2sum): the entries sum to
// the probability of the condition, not to 1. Errors (qmarg::Error, naming the
// value): the marginal list as for marginal_probabilities; a condition qubit
// out of range, repeated, or also in `qubits`; a value other than 0 or 1; a
// different number of values and qubits.
//
// GPU (cuda/marginal_conditional.cu): the BinStationary engine over only the
// 2^(n-m) amplitudes that satisfy the condition (m condition qubits), planned
// as a state of n - m qubits of its own: it adds in a fixed order with no
// floating-point atomics (bitwise repeatable). Memory delivers 64-byte
// pieces (4 double or 8 float amplitudes), so a condition on qubits 0, 1
// (and, for a float state, 2) does not shrink what is read: those
// amplitudes share pieces with the ones it drops.
template <class Real>
std::vector<double> conditional_marginal_probabilities(const StateVector<Real>& state, const Qubits& qubits,
                                                       const Condition& condition);

// The probability of one outcome of `qubits`: the sum of |a_i|^2 over the
// 2^(n-k) amplitudes whose qubit qubits[j] equals bit j of `outcome`. Errors:
// the list as for marginal_probabilities, and outcome >= 2^k. On the GPU a
// deterministic tree reduction (cuda/reduce.cuh) over those amplitudes only.
template <class Real>
double outcome_probability(const StateVector<Real>& state, const Qubits& qubits, std::uint64_t outcome);

// `shots` outcomes of `qubits` (bin conventions of marginal_probabilities)
// drawn from their marginal distribution: the marginal is computed where the
// state lives, then sampled on the host by sample_outcomes (qmarg/sampling.hpp),
// so a seed gives the same outcomes on every run. Errors: the list as for
// marginal_probabilities, and those of sample_outcomes (a zero state).
template <class Real>
std::vector<std::uint64_t> sample_marginal(const StateVector<Real>& state, const Qubits& qubits, std::size_t shots,
                                           std::uint64_t seed);

}  // namespace qmarg
