// Layouts, run statistics and marginal comparison for `qmarg bench marginal`.
#include "bench_cases.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <numeric>
#include <random>

#include "qmarg/error.hpp"

namespace qmarg_cli {

const std::vector<std::string> kLayouts = {"low", "high", "scattered", "descending", "random"};

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
    auto step = [](std::uint64_t x) {
        x += 0x9e3779b97f4a7c15ULL;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
    };
    return step(step(step(seed) ^ a) ^ b);
}

qmarg::Qubits layout_qubits(const std::string& layout, int n, int k, std::uint64_t seed) {
    qmarg::Qubits qubits(static_cast<std::size_t>(k));
    if (layout == "random") {
        qmarg::Qubits all(static_cast<std::size_t>(n));
        std::iota(all.begin(), all.end(), 0);
        std::mt19937_64 generator(mix_seed(seed, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(k)));
        std::shuffle(all.begin(), all.end(), generator);
        std::copy(all.begin(), all.begin() + k, qubits.begin());
        return qubits;
    }
    for (int j = 0; j < k; ++j) {
        int& q = qubits[static_cast<std::size_t>(j)];
        if (layout == "low") {
            q = j;
        } else if (layout == "high") {
            q = n - k + j;
        } else if (layout == "scattered") {
            q = k == 1 ? n / 2 : static_cast<int>(static_cast<long>(j) * (n - 1) / (k - 1));
        } else if (layout == "descending") {
            q = n - 1 - j;
        } else {
            throw qmarg::Error("unknown layout '" + layout + "'");
        }
    }
    return qubits;
}

RunStats run_stats(std::vector<double> ms) {
    if (ms.empty()) throw qmarg::Error("no timed runs to summarise");
    std::sort(ms.begin(), ms.end());
    const auto at = [&ms](double fraction) {
        const double position = fraction * static_cast<double>(ms.size() - 1);
        const std::size_t below = static_cast<std::size_t>(std::floor(position));
        const std::size_t above = std::min(below + 1, ms.size() - 1);
        return ms[below] + (position - static_cast<double>(below)) * (ms[above] - ms[below]);
    };
    RunStats s;
    s.median = at(0.5);
    s.min = ms.front();
    s.max = ms.back();
    s.p10 = at(0.1);
    s.p90 = at(0.9);
    return s;
}

template <class Real>
std::vector<double> serial_marginal(const std::complex<Real>* amps, int n, const qmarg::Qubits& qubits) {
    std::vector<double> bins(std::size_t{1} << qubits.size(), 0.0);
    const qmarg::Index size = qmarg::Index{1} << n;
    for (qmarg::Index i = 0; i < size; ++i) {
        std::size_t b = 0;
        for (std::size_t j = 0; j < qubits.size(); ++j) b |= static_cast<std::size_t>((i >> qubits[j]) & 1) << j;
        const double re = amps[i].real(), im = amps[i].imag();
        bins[b] += re * re + im * im;
    }
    return bins;
}

template std::vector<double> serial_marginal(const std::complex<float>*, int, const qmarg::Qubits&);
template std::vector<double> serial_marginal(const std::complex<double>*, int, const qmarg::Qubits&);

}  // namespace qmarg_cli
