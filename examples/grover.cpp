// grover: Grover search for one marked item among 2^n. The oracle flips the
// sign of the marked basis state: a Z-like phase on the top qubit, controlled by
// the other qubits holding the marked bits (apply_matrix with control_values).
// The diffuser is H on every qubit, the same sign flip on |0...0>, and H again.
// After k iterations the marked item has probability sin^2((2k + 1) theta)
// with sin(theta) = 2^(-n/2); k = floor(pi / (4 theta)) is optimal.
//
// Usage: grover [num_qubits [marked]]   (defaults: 3 qubits, marked = 5)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <qmarg/qmarg.hpp>

namespace {

int parse(const char* text, const char* what) {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < 0 || value > 1000000000) {
        throw qmarg::Error(std::string(what) + " '" + text + "' is not a whole number");
    }
    return static_cast<int>(value);
}

// Flips the sign of basis state `item`: the top qubit gets -1 on its own bit of
// `item`, where every other qubit holds its bit of `item`.
template <class Real>
void flip_sign_of(qmarg::StateVector<Real>& state, qmarg::Index item) {
    const int n = state.num_qubits();
    const int top = n - 1;
    const bool top_bit = (item >> top) & 1u;
    const qmarg::Matrix flip(2, {top_bit ? 1.0 : -1.0, 0.0, 0.0, top_bit ? -1.0 : 1.0});
    qmarg::Qubits controls;
    std::vector<int> values;
    for (int q = 0; q < top; ++q) {
        controls.push_back(q);
        values.push_back(static_cast<int>((item >> q) & 1u));
    }
    qmarg::apply_matrix(state, {top}, flip, controls, values);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const int n = argc > 1 ? parse(argv[1], "number of qubits") : 3;
        const int marked = argc > 2 ? parse(argv[2], "marked item") : 5;
        if (n < 2 || n > 30) throw qmarg::Error("grover needs 2 to 30 qubits, got " + std::to_string(n));
        if (marked >= (1 << n)) {
            throw qmarg::Error("marked item " + std::to_string(marked) + " does not fit in " + std::to_string(n) +
                               " qubits");
        }
        const qmarg::Device device = qmarg::gpu_available() ? qmarg::Device::Gpu : qmarg::Device::Cpu;
        std::printf("device: %s\n", qmarg::to_string(device));

        const double theta = std::asin(std::sqrt(std::ldexp(1.0, -n)));
        const int iterations = static_cast<int>(std::floor(3.14159265358979323846 / (4 * theta)));
        qmarg::StateVector<double> state(n, device);
        for (int q = 0; q < n; ++q) qmarg::h(state, q);
        for (int k = 0; k < iterations; ++k) {
            flip_sign_of(state, static_cast<qmarg::Index>(marked));
            for (int q = 0; q < n; ++q) qmarg::h(state, q);
            flip_sign_of(state, 0);
            for (int q = 0; q < n; ++q) qmarg::h(state, q);
        }

        qmarg::Qubits all;
        for (int q = 0; q < n; ++q) all.push_back(q);
        const std::vector<double> p = qmarg::marginal_probabilities(state, all);
        const double expected = std::pow(std::sin((2 * iterations + 1) * theta), 2);
        std::printf("%d qubits, marked item %d, %d iterations: found with probability %.12f (closed form %.12f)\n",
                    n, marked, iterations, p[marked], expected);
        if (std::abs(p[marked] - expected) > 1e-9) {
            std::printf("does NOT match the closed form\n");
            return 1;
        }
        std::printf("matches the closed form sin^2((2k+1) theta)\n");
        return 0;
    } catch (const qmarg::Error& e) {
        std::fprintf(stderr, "grover: error: %s\n", e.what());
        return 1;
    }
}
