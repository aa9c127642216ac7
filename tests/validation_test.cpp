// Bad input to every public operation: the exact message of the Error thrown,
// which must name the bad value and the limit it broke. The checks run before
// any backend, so one precision on the CPU covers them; the cases that need a
// state on each device run on every backend.
#include <functional>

#include "test_support.hpp"

namespace {

using qmarg::Device;
using qmarg::Matrix;
using qmarg::StateVector;

// The message of the qmarg::Error `call` throws, or a note that it threw none.
std::string error_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const qmarg::Error& e) {
        return e.what();
    }
    return "(no error thrown)";
}

TEST(Validation, MarginalQubitLists) {
    const StateVector<double> state(3);
    auto marginal = [&state](const qmarg::Qubits& qubits) {
        return error_of([&] { qmarg::marginal_probabilities(state, qubits); });
    };
    EXPECT_EQ(marginal({0, 3}),
              "marginal qubit list: qubit 3 is out of range for a 3-qubit state (valid qubits are 0..2)");
    EXPECT_EQ(marginal({-1}),
              "marginal qubit list: qubit -1 is out of range for a 3-qubit state (valid qubits are 0..2)");
    EXPECT_EQ(marginal({2, 0, 2}), "marginal qubit list: qubit 2 appears more than once (at positions 0 and 2)");
    EXPECT_EQ(marginal({}), "marginal qubit list is empty: at least 1 qubit is needed");
    EXPECT_EQ(marginal({0, 1, 2, 0}), "marginal qubit list has 4 qubits but a 3-qubit state has only 3");
}

TEST(Validation, MarginalStrategiesAndDeviceBuffersNeedAGpuState) {
    const StateVector<float> state(3);
    qmarg::MarginalOptions options;
    options.strategy = qmarg::MarginalStrategy::SharedPrivatized;
    EXPECT_EQ(error_of([&] { qmarg::marginal_probabilities(state, {0}, options); }),
              "marginal strategy SharedPrivatized is a GPU strategy; a CPU state takes MarginalStrategy::Auto");
    qmarg::DeviceBuffer<double> out;
    EXPECT_EQ(error_of([&] { qmarg::marginal_probabilities(state, {0}, out); }),
              "marginal_probabilities into a DeviceBuffer needs a state on the GPU, but this state lives on the CPU");
}

TEST(Validation, GateTargetsAndControls) {
    StateVector<double> state(4);
    const Matrix one = qmarg::gates::x();
    const Matrix two = qmarg::gates::swap();
    auto gate = [&state](const qmarg::Qubits& targets, const Matrix& m, const qmarg::Qubits& controls = {},
                         const std::vector<int>& values = {}) {
        return error_of([&] { qmarg::apply_matrix(state, targets, m, controls, values); });
    };
    EXPECT_EQ(gate({4}, one), "target list: qubit 4 is out of range for a 4-qubit state (valid qubits are 0..3)");
    EXPECT_EQ(gate({0}, one, {1, 7}),
              "control list: qubit 7 is out of range for a 4-qubit state (valid qubits are 0..3)");
    EXPECT_EQ(gate({1, 1}, two), "target list: qubit 1 appears more than once (at positions 0 and 1)");
    EXPECT_EQ(gate({0}, one, {2, 3, 2}), "control list: qubit 2 appears more than once (at positions 0 and 2)");
    EXPECT_EQ(gate({0, 2}, two, {1, 2}), "qubit 2 is both a target and a control");
    EXPECT_EQ(gate({}, one), "target list is empty: at least 1 qubit is needed");
    EXPECT_EQ(gate({0, 1}, one), "a 2-target gate needs a 4x4 matrix, got 2x2");
    EXPECT_EQ(gate({0}, Matrix()), "a 1-target gate needs a 2x2 matrix, got 0x0");
    EXPECT_EQ(gate({0}, one, {1, 2}, {1}),
              "control_values has 1 entry for 2 controls: give one value per control, or none");
    EXPECT_EQ(gate({0}, one, {1}, {1, 0}),
              "control_values has 2 entries for 1 control: give one value per control, or none");
    EXPECT_EQ(gate({0}, one, {}, {1}),
              "control_values has 1 entry for 0 controls: give one value per control, or none");
    EXPECT_EQ(gate({0}, one, {1, 3}, {1, 2}), "control value 2 for control qubit 3 must be 0 or 1");
}

TEST(Validation, NamedGatesReportTheirQubits) {
    StateVector<float> state(2);
    EXPECT_EQ(error_of([&] { qmarg::h(state, 2); }),
              "target list: qubit 2 is out of range for a 2-qubit state (valid qubits are 0..1)");
    EXPECT_EQ(error_of([&] { qmarg::cx(state, 1, 1); }), "qubit 1 is both a target and a control");
    EXPECT_EQ(error_of([&] { qmarg::swap(state, 0, 0); }),
              "target list: qubit 0 appears more than once (at positions 0 and 1)");
    EXPECT_EQ(error_of([&] { qmarg::ccx(state, 0, 1, 0); }), "qubit 0 is both a target and a control");
}

TEST(Validation, MatricesOfBadShape) {
    EXPECT_EQ(error_of([] { Matrix(2, {1.0, 0.0, 0.0}); }), "a 2x2 matrix needs 4 entries, got 3");
    EXPECT_EQ(error_of([] { Matrix(0); }), "matrix dimension 0 is out of range (1..32768)");
}

TEST(Validation, InnerProductOfDifferentSizes) {
    const StateVector<double> a(3), b(5);
    EXPECT_EQ(error_of([&] { qmarg::inner_product(a, b); }),
              "inner_product: the states have different numbers of qubits (3 and 5)");
}

TEST(Validation, InnerProductAcrossDevices) {
    QMARG_SKIP_IF_UNAVAILABLE(Device::Gpu);
    const StateVector<double> cpu(3, Device::Cpu), gpu(3, Device::Gpu);
    EXPECT_EQ(error_of([&] { qmarg::inner_product(cpu, gpu); }),
              "inner_product: the states live on different devices (CPU and GPU); copy one with to() first");
    EXPECT_EQ(error_of([&] { qmarg::inner_product(gpu, cpu); }),
              "inner_product: the states live on different devices (GPU and CPU); copy one with to() first");
}

// The same checks guard a GPU state: validation comes before the backend.
template <class B>
class ValidationOnEveryBackend : public qmarg_test::BackendTest<B> {};
TYPED_TEST_SUITE(ValidationOnEveryBackend, qmarg_test::AllBackends, qmarg_test::BackendName);

TYPED_TEST(ValidationOnEveryBackend, BadQubitsAreRejectedAndTheStateIsUntouched) {
    StateVector<typename TypeParam::Real> state(3, TypeParam::device);
    state.set_random_state(qmarg_test::fresh_seed());
    const auto before = state.amplitudes();
    EXPECT_EQ(error_of([&] { qmarg::marginal_probabilities(state, {3}); }),
              "marginal qubit list: qubit 3 is out of range for a 3-qubit state (valid qubits are 0..2)");
    EXPECT_EQ(error_of([&] { qmarg::apply_matrix(state, {0, 1}, qmarg::gates::x()); }),
              "a 2-target gate needs a 4x4 matrix, got 2x2");
    EXPECT_EQ(error_of([&] { qmarg::cx(state, 2, 2); }), "qubit 2 is both a target and a control");
    EXPECT_EQ(state.amplitudes(), before);
}

}  // namespace
