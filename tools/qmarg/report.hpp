// The result of `qmarg run` and its three printed forms (table, json, csv).
//
// Outcomes are bitstrings written as Qiskit prints them: bit j of an outcome
// is qubits[j], and bit 0 is the rightmost character, so for measured qubits
// the highest classical bit is on the left.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "qmarg/types.hpp"

namespace qmarg_cli {

struct Outcome {
    std::uint64_t index = 0;
    double probability = 0;  // probabilities
    std::uint64_t count = 0;  // samples
};

struct Report {
    std::string circuit;
    int num_qubits = 0;
    std::string device;     // "CPU" or "GPU"
    std::string precision;  // "double" or "float"
    qmarg::Qubits qubits;   // qubits[j] is bit j of every outcome
    std::vector<std::string> qubit_names;
    std::vector<std::string> clbit_names;  // for measured qubits: the bit each one is stored in
    // --given: qubit given_qubits[j] (named given_names[j]) holds
    // given_values[j], with probability given_probability in the final state;
    // outcomes are then conditional on it.
    qmarg::Qubits given_qubits;
    std::vector<std::string> given_names;
    std::vector<int> given_values;
    double given_probability = 1;
    bool sampled = false;
    std::uint64_t shots = 0;
    std::uint64_t seed = 0;
    std::vector<Outcome> outcomes;  // most likely (or most frequent) first
    std::uint64_t omitted = 0;      // outcomes left out by --top / --threshold
    double omitted_probability = 0;
};

// Outcomes with probability >= threshold (all of them for threshold 0), most
// likely first (ties: lower index first), at most `top` of them (0: no limit).
void select_probabilities(const std::vector<double>& probabilities, double threshold, std::size_t top,
                          Report& report);
// Sampled outcomes, most frequent first, at most `top` (0: no limit).
void select_counts(const std::map<std::uint64_t, std::uint64_t>& counts, std::size_t top, Report& report);

std::string bitstring(std::uint64_t index, std::size_t bits);
// The --given condition as "q[2]=1 q[4]=0".
std::string given_text(const Report& report);

void print_table(const Report& report, std::FILE* out);
void print_json(const Report& report, std::FILE* out);
void print_csv(const Report& report, std::FILE* out);

}  // namespace qmarg_cli
