// Builds a Bell state through the installed qmarg package and checks its
// marginals; prints "consumer: ok" on success.
#include <cmath>
#include <cstdio>

#include <qmarg/qmarg.hpp>

int main() {
    qmarg::StateVector<double> state(2);
    qmarg::h(state, 0);
    qmarg::cx(state, 0, 1);
    const std::vector<double> p = qmarg::marginal_probabilities(state, {0, 1});
    const bool bell = std::abs(p[0] - 0.5) < 1e-12 && p[1] < 1e-12 && p[2] < 1e-12 && std::abs(p[3] - 0.5) < 1e-12;
    try {
        qmarg::marginal_probabilities(state, {2});
        std::puts("consumer: expected an error for qubit 2");
        return 1;
    } catch (const qmarg::Error& e) {
        std::printf("consumer: bad input rejected: %s\n", e.what());
    }
    if (!bell) {
        std::printf("consumer: wrong Bell marginals %g %g %g %g\n", p[0], p[1], p[2], p[3]);
        return 1;
    }
    std::printf("consumer: ok (CUDA backend %s)\n", qmarg::built_with_cuda() ? "built in" : "not built");
    return 0;
}
