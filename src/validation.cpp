#include "validation.hpp"

#include <algorithm>
#include <string>

#include "qmarg/error.hpp"

namespace qmarg {
namespace validation {
namespace {

std::string state_name(int num_qubits) { return "a " + std::to_string(num_qubits) + "-qubit state"; }

std::string counted(std::size_t count, const char* one, const char* many) {
    return std::to_string(count) + " " + (count == 1 ? one : many);
}

void check_in_range(int qubit, int num_qubits, const char* what) {
    if (qubit < 0 || qubit >= num_qubits) {
        throw Error(std::string(what) + ": qubit " + std::to_string(qubit) + " is out of range for " +
                    state_name(num_qubits) + " (valid qubits are 0.." + std::to_string(num_qubits - 1) + ")");
    }
}

void check_distinct(const Qubits& qubits, const char* what) {
    for (std::size_t i = 0; i < qubits.size(); ++i) {
        for (std::size_t j = i + 1; j < qubits.size(); ++j) {
            if (qubits[i] == qubits[j]) {
                throw Error(std::string(what) + ": qubit " + std::to_string(qubits[i]) +
                            " appears more than once (at positions " + std::to_string(i) + " and " +
                            std::to_string(j) + ")");
            }
        }
    }
}

}  // namespace

void check_qubit_list(const Qubits& qubits, int num_qubits, const char* what) {
    if (qubits.empty()) throw Error(std::string(what) + " is empty: at least 1 qubit is needed");
    if (static_cast<long long>(qubits.size()) > num_qubits) {
        throw Error(std::string(what) + " has " + std::to_string(qubits.size()) + " qubits but " +
                    state_name(num_qubits) + " has only " + std::to_string(num_qubits));
    }
    for (int q : qubits) check_in_range(q, num_qubits, what);
    check_distinct(qubits, what);
}

void check_condition(const Qubits& qubits, const Qubits& condition_qubits, const std::vector<int>& condition_values,
                     int num_qubits) {
    for (int q : condition_qubits) check_in_range(q, num_qubits, "condition qubit list");
    check_distinct(condition_qubits, "condition qubit list");
    for (int c : condition_qubits) {
        if (std::find(qubits.begin(), qubits.end(), c) != qubits.end()) {
            throw Error("qubit " + std::to_string(c) + " is both a marginal qubit and a condition qubit");
        }
    }
    if (condition_values.size() != condition_qubits.size()) {
        throw Error("the condition has " + counted(condition_values.size(), "value", "values") + " for " +
                    counted(condition_qubits.size(), "qubit", "qubits") + ": give one value per condition qubit");
    }
    for (std::size_t i = 0; i < condition_values.size(); ++i) {
        if (condition_values[i] != 0 && condition_values[i] != 1) {
            throw Error("condition value " + std::to_string(condition_values[i]) + " for condition qubit " +
                        std::to_string(condition_qubits[i]) + " must be 0 or 1");
        }
    }
}

void check_gate(int num_qubits, const Qubits& targets, const Matrix& matrix, const Qubits& controls,
                const std::vector<int>& control_values) {
    check_qubit_list(targets, num_qubits, "target list");
    for (int q : controls) check_in_range(q, num_qubits, "control list");
    check_distinct(controls, "control list");
    for (int c : controls) {
        if (std::find(targets.begin(), targets.end(), c) != targets.end()) {
            throw Error("qubit " + std::to_string(c) + " is both a target and a control");
        }
    }
    const int k = static_cast<int>(targets.size());
    if (k > 30) throw Error("a gate on " + std::to_string(k) + " targets is too large: at most 30 targets");
    const long long dim = 1LL << k;
    if (matrix.dim() != dim) {
        throw Error("a " + std::to_string(k) + "-target gate needs a " + std::to_string(dim) + "x" +
                    std::to_string(dim) + " matrix, got " + std::to_string(matrix.dim()) + "x" +
                    std::to_string(matrix.dim()));
    }
    if (!control_values.empty()) {
        if (control_values.size() != controls.size()) {
            throw Error("control_values has " + counted(control_values.size(), "entry", "entries") + " for " +
                        counted(controls.size(), "control", "controls") + ": give one value per control, or none");
        }
        for (std::size_t i = 0; i < control_values.size(); ++i) {
            if (control_values[i] != 0 && control_values[i] != 1) {
                throw Error("control value " + std::to_string(control_values[i]) + " for control qubit " +
                            std::to_string(controls[i]) + " must be 0 or 1");
            }
        }
    }
}

void check_num_qubits(int num_qubits, int max_qubits) {
    if (num_qubits < 1 || num_qubits > max_qubits) {
        throw Error("number of qubits " + std::to_string(num_qubits) + " is out of range: a state has 1.." +
                    std::to_string(max_qubits) + " qubits");
    }
}

void check_same_shape(int qubits_a, Device device_a, int qubits_b, Device device_b, const char* operation) {
    if (device_a != device_b) {
        throw Error(std::string(operation) + ": the states live on different devices (" + to_string(device_a) +
                    " and " + to_string(device_b) + "); copy one with to() first");
    }
    if (qubits_a != qubits_b) {
        throw Error(std::string(operation) + ": the states have different numbers of qubits (" +
                    std::to_string(qubits_a) + " and " + std::to_string(qubits_b) + ")");
    }
}

void check_on_gpu(Device device, const char* operation) {
    if (device != Device::Gpu) {
        throw Error(std::string(operation) + " needs a state on the GPU, but this state lives on the " +
                    to_string(device));
    }
}

}  // namespace validation
}  // namespace qmarg
