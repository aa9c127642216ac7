// qft: the quantum Fourier transform of a basis state |x> on n qubits, built
// from Hadamards, controlled phases (apply_matrix with a control) and swaps.
// QFT|x> = sum_y exp(2 pi i x y / 2^n) |y> / sqrt(2^n): every outcome is equally
// likely and the phases grow linearly in y; both are checked here.
//
// Usage: qft [num_qubits [x]]   (defaults: 4 qubits, x = 5)
#include <cmath>
#include <complex>
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

}  // namespace

int main(int argc, char** argv) {
    try {
        const int n = argc > 1 ? parse(argv[1], "number of qubits") : 4;
        const int x = argc > 2 ? parse(argv[2], "basis state") : 5;
        const double pi = 3.14159265358979323846;
        const qmarg::Device device = qmarg::gpu_available() ? qmarg::Device::Gpu : qmarg::Device::Cpu;
        std::printf("device: %s\n", qmarg::to_string(device));

        qmarg::StateVector<double> state(n, device);
        state.set_basis_state(static_cast<qmarg::Index>(x));
        for (int j = n - 1; j >= 0; --j) {
            qmarg::h(state, j);
            for (int k = j - 1; k >= 0; --k) {
                qmarg::apply_matrix(state, {j}, qmarg::gates::phase(pi / std::ldexp(1.0, j - k)), {k});
            }
        }
        for (int q = 0; q < n / 2; ++q) qmarg::swap(state, q, n - 1 - q);

        const double size = std::ldexp(1.0, n);
        double worst = 0;
        const auto amplitudes = state.amplitudes();
        for (std::size_t y = 0; y < amplitudes.size(); ++y) {
            // x*y mod 2^n keeps the angle small and exact.
            const double turns = static_cast<double>((static_cast<qmarg::Index>(x) * y) % amplitudes.size()) / size;
            worst = std::max(worst, std::abs(amplitudes[y] - std::polar(1.0 / std::sqrt(size), 2 * pi * turns)));
        }
        const std::vector<double> p0 = qmarg::marginal_probabilities(state, {0});
        std::printf("QFT of |%d> on %d qubits: largest amplitude error %.3g; P(qubit 0 = 0) = %.12f\n", x, n, worst,
                    p0[0]);
        if (worst > 1e-9 || std::abs(p0[0] - 0.5) > 1e-9) {
            std::printf("does NOT match the closed form\n");
            return 1;
        }
        std::printf("matches the closed form (uniform magnitudes, phases 2 pi x y / 2^n)\n");
        return 0;
    } catch (const qmarg::Error& e) {
        std::fprintf(stderr, "qft: error: %s\n", e.what());
        return 1;
    }
}
