// ghz: the first program to run. Builds the n-qubit GHZ state
// (|0...0> + |1...1>)/sqrt(2) with H and a chain of CX gates, on the GPU when
// one is usable and on the CPU otherwise, and prints its marginal distributions
// over all qubits and over qubit 0. Bitstrings are written Qiskit-style, the
// highest qubit on the left.
//
// Usage: ghz [num_qubits]   (default 5)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <qmarg/qmarg.hpp>

namespace {

// The bin's bits as a string, bit j being the value of qubits[j]; the last
// listed qubit is printed first, so for qubits {0..n-1} the highest qubit is
// on the left.
std::string bitstring(std::size_t bin, std::size_t k) {
    std::string text(k, '0');
    for (std::size_t j = 0; j < k; ++j)
        if ((bin >> j) & 1u) text[k - 1 - j] = '1';
    return text;
}

void print_marginal(const char* title, const std::vector<double>& probabilities, std::size_t k) {
    std::printf("%s\n", title);
    std::size_t omitted = 0;
    for (std::size_t bin = 0; bin < probabilities.size(); ++bin) {
        if (probabilities[bin] < 1e-12) {
            ++omitted;
            continue;
        }
        std::printf("  %s  %.6f\n", bitstring(bin, k).c_str(), probabilities[bin]);
    }
    if (omitted > 0) std::printf("  (the other %zu outcomes have probability 0)\n", omitted);
}

int parse_qubits(int argc, char** argv) {
    if (argc < 2) return 5;
    if (argc > 2) throw qmarg::Error("usage: ghz [num_qubits]");
    char* end = nullptr;
    const long n = std::strtol(argv[1], &end, 10);
    // The range itself is the library's to check (and to explain).
    if (end == argv[1] || *end != '\0' || n < -1000 || n > 1000) {
        throw qmarg::Error(std::string("number of qubits '") + argv[1] + "' is not a whole number");
    }
    return static_cast<int>(n);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const int n = parse_qubits(argc, argv);
        const qmarg::Device device = qmarg::gpu_available() ? qmarg::Device::Gpu : qmarg::Device::Cpu;
        if (device == qmarg::Device::Gpu) {
            std::printf("device: GPU (%s)\n", qmarg::gpu_info().name.c_str());
        } else {
            std::printf("device: CPU (no GPU used: %s)\n", qmarg::gpu_unavailable_reason().c_str());
        }

        qmarg::StateVector<double> state(n, device);
        qmarg::h(state, 0);
        for (int q = 1; q < n; ++q) qmarg::cx(state, q - 1, q);
        std::printf("%d-qubit GHZ state, total probability %.12f\n\n", n, qmarg::total_probability(state));

        qmarg::Qubits all(n);
        for (int q = 0; q < n; ++q) all[q] = q;
        print_marginal(("marginal over all qubits (qubit " + std::to_string(n - 1) + " on the left):").c_str(),
                       qmarg::marginal_probabilities(state, all), all.size());
        std::printf("\n");
        print_marginal("marginal over qubit 0:", qmarg::marginal_probabilities(state, {0}), 1);
        return 0;
    } catch (const qmarg::Error& e) {
        std::fprintf(stderr, "ghz: error: %s\n", e.what());
        return 1;
    }
}
