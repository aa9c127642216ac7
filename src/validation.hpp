// Input checks shared by every public call. Each throws qmarg::Error with a
// message that names the bad value and the limit it broke.
#pragma once

#include <string>
#include <vector>

#include "qmarg/matrix.hpp"
#include "qmarg/types.hpp"

namespace qmarg {
namespace validation {

// `what` names the list in messages ("marginal qubit list", "target list", ...).
void check_qubit_list(const Qubits& qubits, int num_qubits, const char* what);
// The condition of a conditional marginal: condition qubits in range, distinct
// and outside `qubits`; one value, 0 or 1, per condition qubit.
void check_condition(const Qubits& qubits, const Qubits& condition_qubits, const std::vector<int>& condition_values,
                     int num_qubits);
void check_gate(int num_qubits, const Qubits& targets, const Matrix& matrix, const Qubits& controls,
                const std::vector<int>& control_values);
void check_num_qubits(int num_qubits, int max_qubits);
void check_same_shape(int qubits_a, Device device_a, int qubits_b, Device device_b, const char* operation);
void check_on_gpu(Device device, const char* operation);

}  // namespace validation
}  // namespace qmarg
