// Selecting and printing outcomes. Probabilities are printed with enough digits
// to tell 0.5 from 0.4999999 (float states) in the table, and in full
// (shortest round-trip form) in json and csv.
#include "report.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdlib>

#include <nlohmann/json.hpp>

namespace qmarg_cli {
namespace {

bool more_likely(const Outcome& a, const Outcome& b) {
    if (a.probability != b.probability) return a.probability > b.probability;
    return a.index < b.index;
}

bool more_frequent(const Outcome& a, const Outcome& b) {
    if (a.count != b.count) return a.count > b.count;
    return a.index < b.index;
}

// Keeps the first `top` outcomes in `order` (all if top is 0 or larger).
template <class Order>
void keep_top(std::vector<Outcome>& outcomes, std::size_t top, Order order) {
    if (top == 0 || top >= outcomes.size()) {
        std::sort(outcomes.begin(), outcomes.end(), order);
        return;
    }
    std::partial_sort(outcomes.begin(), outcomes.begin() + static_cast<std::ptrdiff_t>(top), outcomes.end(), order);
    outcomes.resize(top);
}

std::string shortest(double x) {
    char text[40];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, x);
        if (std::strtod(text, nullptr) == x) break;
    }
    return text;
}

}  // namespace

std::string bitstring(std::uint64_t index, std::size_t bits) {
    std::string text(bits, '0');
    for (std::size_t j = 0; j < bits; ++j)
        if ((index >> j) & 1u) text[bits - 1 - j] = '1';
    return text;
}

std::string given_text(const Report& report) {
    std::string text;
    for (std::size_t j = 0; j < report.given_qubits.size(); ++j) {
        text += (j ? " " : "") + report.given_names[j] + "=" + std::to_string(report.given_values[j]);
    }
    return text;
}

void select_probabilities(const std::vector<double>& probabilities, double threshold, std::size_t top,
                          Report& report) {
    std::vector<Outcome> kept;
    double kept_probability = 0, total = 0;
    for (std::size_t i = 0; i < probabilities.size(); ++i) {
        total += probabilities[i];
        if (probabilities[i] >= threshold) kept.push_back(Outcome{i, probabilities[i], 0});
    }
    keep_top(kept, top, more_likely);
    for (const Outcome& o : kept) kept_probability += o.probability;
    report.omitted = probabilities.size() - kept.size();
    report.omitted_probability = std::max(0.0, total - kept_probability);
    report.outcomes = std::move(kept);
}

void select_counts(const std::map<std::uint64_t, std::uint64_t>& counts, std::size_t top, Report& report) {
    std::vector<Outcome> kept;
    for (const auto& [index, count] : counts) kept.push_back(Outcome{index, 0, count});
    keep_top(kept, top, more_frequent);
    report.omitted = counts.size() - kept.size();
    report.outcomes = std::move(kept);
}

void print_table(const Report& report, std::FILE* out) {
    const std::size_t k = report.qubits.size();
    std::string order = "# bits, left to right:";
    for (std::size_t j = k; j-- > 0;) {
        order += " " + (report.clbit_names.empty() ? report.qubit_names[j]
                                                   : report.clbit_names[j] + "=" + report.qubit_names[j]);
    }
    std::fprintf(out, "%s\n", order.c_str());
    if (!report.given_qubits.empty()) {
        std::fprintf(out, "# given: %s (probability %.10g)\n", given_text(report).c_str(), report.given_probability);
    }
    const int width = static_cast<int>(std::max<std::size_t>(k, 7));
    std::fprintf(out, "%-*s  %s\n", width, "outcome", report.sampled ? "count" : "probability");
    for (const Outcome& o : report.outcomes) {
        if (report.sampled) {
            std::fprintf(out, "%-*s  %" PRIu64 "\n", width, bitstring(o.index, k).c_str(), o.count);
        } else {
            std::fprintf(out, "%-*s  %.10g\n", width, bitstring(o.index, k).c_str(), o.probability);
        }
    }
}

void print_csv(const Report& report, std::FILE* out) {
    const std::size_t k = report.qubits.size();
    std::fprintf(out, "outcome,%s\n", report.sampled ? "count" : "probability");
    for (const Outcome& o : report.outcomes) {
        if (report.sampled) {
            std::fprintf(out, "%s,%" PRIu64 "\n", bitstring(o.index, k).c_str(), o.count);
        } else {
            std::fprintf(out, "%s,%s\n", bitstring(o.index, k).c_str(), shortest(o.probability).c_str());
        }
    }
}

void print_json(const Report& report, std::FILE* out) {
    using nlohmann::ordered_json;
    const std::size_t k = report.qubits.size();
    ordered_json j;
    j["circuit"] = report.circuit;
    j["num_qubits"] = report.num_qubits;
    j["device"] = report.device;
    j["precision"] = report.precision;
    j["qubits"] = report.qubits;
    j["qubit_names"] = report.qubit_names;
    if (!report.clbit_names.empty()) j["clbit_names"] = report.clbit_names;
    if (!report.given_qubits.empty()) {
        ordered_json given = ordered_json::array();
        for (std::size_t g = 0; g < report.given_qubits.size(); ++g) {
            given.push_back({{"qubit", report.given_qubits[g]},
                             {"name", report.given_names[g]},
                             {"value", report.given_values[g]}});
        }
        j["given"] = std::move(given);
        j["given_probability"] = report.given_probability;
    }
    ordered_json rows = ordered_json::array();
    for (const Outcome& o : report.outcomes) {
        ordered_json row;
        row["outcome"] = bitstring(o.index, k);
        if (report.sampled) {
            row["count"] = o.count;
        } else {
            row["probability"] = o.probability;
        }
        rows.push_back(std::move(row));
    }
    if (report.sampled) {
        j["shots"] = report.shots;
        j["seed"] = report.seed;
        j["counts"] = std::move(rows);
        j["omitted_outcomes"] = report.omitted;
    } else {
        j["probabilities"] = std::move(rows);
        j["omitted_outcomes"] = report.omitted;
        j["omitted_probability"] = report.omitted_probability;
    }
    std::fprintf(out, "%s\n", j.dump(2).c_str());
}

}  // namespace qmarg_cli
