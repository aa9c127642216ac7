// bernstein_vazirani: recovers a hidden bit string s from one query to the
// oracle f(x) = s.x (mod 2). Input qubits 0..n-1 go into superposition, the
// ancilla (qubit n) starts in |->, the oracle is a CX from each input qubit i
// with s_i = 1 onto the ancilla, and a final layer of H turns the phase
// kickback into |s>: the marginal over the input qubits is 1 at s.
//
// Usage: bernstein_vazirani [hidden bits, e.g. 101101]  (bit 0 is the rightmost)
#include <cmath>
#include <cstdio>
#include <string>

#include <qmarg/qmarg.hpp>

int main(int argc, char** argv) {
    try {
        const std::string hidden = argc > 1 ? argv[1] : "101101";
        if (hidden.empty() || hidden.size() > 30 || hidden.find_first_not_of("01") != std::string::npos) {
            throw qmarg::Error("hidden string '" + hidden + "' must be 1 to 30 characters 0 or 1");
        }
        const int n = static_cast<int>(hidden.size());
        const qmarg::Device device = qmarg::gpu_available() ? qmarg::Device::Gpu : qmarg::Device::Cpu;
        std::printf("device: %s\n", qmarg::to_string(device));

        qmarg::StateVector<double> state(n + 1, device);
        qmarg::x(state, n);
        qmarg::h(state, n);
        for (int q = 0; q < n; ++q) qmarg::h(state, q);
        for (int q = 0; q < n; ++q)
            if (hidden[n - 1 - q] == '1') qmarg::cx(state, q, n);  // the oracle
        for (int q = 0; q < n; ++q) qmarg::h(state, q);

        qmarg::Qubits inputs;
        for (int q = 0; q < n; ++q) inputs.push_back(q);
        const std::vector<double> p = qmarg::marginal_probabilities(state, inputs);
        const std::size_t expected = std::stoull(hidden, nullptr, 2);
        std::printf("hidden string %s: measured with probability %.12f\n", hidden.c_str(), p[expected]);
        if (std::abs(p[expected] - 1.0) > 1e-9) {
            std::printf("does NOT match the closed form (probability 1)\n");
            return 1;
        }
        std::printf("matches the closed form (probability 1)\n");
        return 0;
    } catch (const qmarg::Error& e) {
        std::fprintf(stderr, "bernstein_vazirani: error: %s\n", e.what());
        return 1;
    }
}
