// apply_matrix on GPU states against the CPU reference backend, in float and
// double: dense random unitaries for every target count the GPU takes
// (1..10), targets low / high / scattered / in random order / descending, with
// no, one and two controls (control values with zeros among them), n from k up
// to 20; random non-unitary matrices on every k the tensor-core path takes,
// and a check of its fragment layout on the device; the diagonal and
// permutation fast paths through the named gates and through hand-made
// matrices; a long random circuit that must stay unitary and
// undo exactly; and the error for too many targets.
//
// Every case starts from a fresh random state (never |0>), and a failure
// prints the seed, n, targets, controls, control values and matrix kind.
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

#if defined(QMARG_TESTS_WITH_CUDA)
#include "../cuda/apply_matrix.cuh"
#include "device_bandwidth.hpp"
#endif

namespace {

using qmarg::Device;
using qmarg::Matrix;
using qmarg::Qubits;
using qmarg::StateVector;
using qmarg_test::fresh_seed;
using qmarg_test::seed_trace;
using Complex = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

// ||gpu - cpu|| / ||cpu||: float states apply a float copy of the matrix, so
// their error grows like sqrt(2^k) * 6e-8, about 2e-6 at k = 10.
template <class Real>
constexpr double gate_tolerance() {
    return std::is_same<Real, float>::value ? 1e-5 : 1e-12;
}

template <class Real>
using ApplyMatrixGpuTest = qmarg_test::GpuTest<Real>;
TYPED_TEST_SUITE(ApplyMatrixGpuTest, qmarg_test::Reals, qmarg_test::RealName);

// ---- matrices -------------------------------------------------------------

Matrix from_eigen(const Eigen::MatrixXcd& m) {
    const int dim = static_cast<int>(m.rows());
    Matrix out(dim);
    for (int r = 0; r < dim; ++r)
        for (int c = 0; c < dim; ++c) out(r, c) = m(r, c);
    return out;
}

// Haar-random unitary: Q of the QR decomposition of a complex Gaussian matrix,
// with the phases of R's diagonal moved into Q.
Matrix random_unitary(int dim, std::mt19937_64& rng) {
    std::normal_distribution<double> gauss;
    Eigen::MatrixXcd g(dim, dim);
    for (int r = 0; r < dim; ++r)
        for (int c = 0; c < dim; ++c) g(r, c) = Complex(gauss(rng), gauss(rng));
    Eigen::HouseholderQR<Eigen::MatrixXcd> qr(g);
    Eigen::MatrixXcd q = qr.householderQ();
    const Eigen::MatrixXcd r = qr.matrixQR().triangularView<Eigen::Upper>();
    for (int c = 0; c < dim; ++c) {
        const double magnitude = std::abs(r(c, c));
        if (magnitude > 0) q.col(c) *= r(c, c) / magnitude;
    }
    return from_eigen(q);
}

// A dense unitary that is cheap for large dim: kron of two Haar-random ones.
Matrix cheap_dense_unitary(int k, std::mt19937_64& rng) {
    if (k <= 6) return random_unitary(1 << k, rng);
    const Matrix a = random_unitary(1 << (k / 2), rng);
    const Matrix b = random_unitary(1 << (k - k / 2), rng);
    Matrix out(1 << k);
    for (int r = 0; r < out.dim(); ++r)
        for (int c = 0; c < out.dim(); ++c)
            out(r, c) = a(r / b.dim(), c / b.dim()) * b(r % b.dim(), c % b.dim());
    return out;
}

Complex random_phase(std::mt19937_64& rng) {
    return std::polar(1.0, std::uniform_real_distribution<double>(-kPi, kPi)(rng));
}

Matrix random_diagonal(int dim, std::mt19937_64& rng) {
    Matrix m(dim);
    for (int r = 0; r < dim; ++r) m(r, r) = random_phase(rng);
    return m;
}

// A permutation matrix times phases: row r has its one entry in column perm[r].
Matrix random_permutation(int dim, std::mt19937_64& rng) {
    std::vector<int> perm(dim);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    Matrix m(dim);
    for (int r = 0; r < dim; ++r) m(r, perm[r]) = random_phase(rng);
    return m;
}

// ---- qubit choices ----------------------------------------------------------

enum class Layout { Low, High, Scattered, RandomOrder, Descending };
const Layout kLayouts[] = {Layout::Low, Layout::High, Layout::Scattered, Layout::RandomOrder, Layout::Descending};

const char* to_string(Layout layout) {
    switch (layout) {
        case Layout::Low: return "low";
        case Layout::High: return "high";
        case Layout::Scattered: return "scattered";
        case Layout::RandomOrder: return "random order";
        case Layout::Descending: return "descending";
    }
    return "?";
}

Qubits choose_targets(Layout layout, int n, int k, std::mt19937_64& rng) {
    Qubits targets;
    switch (layout) {
        case Layout::Low:
            for (int j = 0; j < k; ++j) targets.push_back(j);
            break;
        case Layout::High:
            for (int j = 0; j < k; ++j) targets.push_back(n - k + j);
            break;
        case Layout::Scattered:  // spread evenly from qubit 0 to qubit n-1, ascending
            for (int j = 0; j < k; ++j) targets.push_back(k == 1 ? n - 1 : static_cast<int>(j * (n - 1L) / (k - 1)));
            break;
        case Layout::RandomOrder:
            targets = qmarg_test::random_qubits(n, k, rng);
            break;
        case Layout::Descending:
            targets = qmarg_test::random_qubits(n, k, rng);
            std::sort(targets.rbegin(), targets.rend());
            break;
    }
    return targets;
}

// Control sets: none; one control (value 1); two controls whose values contain
// a 0; the lowest and the highest free qubit, both conditioned on 0.
struct Controls {
    Qubits qubits;
    std::vector<int> values;  // empty: all 1
};
constexpr int kControlSets = 4;

Controls choose_controls(int set, int n, const Qubits& targets, std::mt19937_64& rng) {
    Qubits free;
    for (int q = 0; q < n; ++q)
        if (std::find(targets.begin(), targets.end(), q) == targets.end()) free.push_back(q);
    Controls out;
    const int wanted = set == 0 ? 0 : set == 1 ? 1 : 2;
    if (static_cast<int>(free.size()) < wanted) return out;
    if (set == 3) {
        out.qubits = {free.back(), free.front()};
        out.values = {0, 0};
        return out;
    }
    std::shuffle(free.begin(), free.end(), rng);
    out.qubits.assign(free.begin(), free.begin() + wanted);
    if (set == 2) {
        out.values = {0, 1};
        std::shuffle(out.values.begin(), out.values.end(), rng);
    }
    return out;
}

// ---- comparison ---------------------------------------------------------------

template <class T>
std::string list(const std::vector<T>& values) {
    std::ostringstream out;
    out << "{";
    for (std::size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
    out << "}";
    return out.str();
}

template <class Real>
double relative_distance(const std::vector<std::complex<Real>>& a, const std::vector<std::complex<Real>>& b) {
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff += std::norm(std::complex<double>(a[i]) - std::complex<double>(b[i]));
        norm += std::norm(std::complex<double>(b[i]));
    }
    return std::sqrt(diff / norm);
}

// Applies the gate to a random GPU state through `run_on_gpu` (which returns
// false where it ran nothing; nothing is then checked) and to its CPU copy,
// and compares. Returns whether it ran.
template <class Real, class RunOnGpu>
bool expect_run_matches_cpu(int n, const Qubits& targets, const Matrix& matrix, const Controls& controls,
                            const std::string& what, RunOnGpu run_on_gpu) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed) + ", n=" + std::to_string(n) + ", targets=" + list(targets) +
                 ", controls=" + list(controls.qubits) + ", control_values=" + list(controls.values) + ", " + what);
    StateVector<Real> gpu(n, Device::Gpu);
    gpu.set_random_state(seed);
    StateVector<Real> cpu = gpu.to(Device::Cpu);
    qmarg::apply_matrix(cpu, targets, matrix, controls.qubits, controls.values);
    if (!run_on_gpu(gpu)) return false;
    EXPECT_LE(relative_distance(gpu.amplitudes(), cpu.amplitudes()), gate_tolerance<Real>());
    return true;
}

// The same through qmarg::apply_matrix.
template <class Real>
void expect_gpu_matches_cpu(int n, const Qubits& targets, const Matrix& matrix, const Controls& controls,
                            const std::string& what) {
    expect_run_matches_cpu<Real>(n, targets, matrix, controls, what, [&](StateVector<Real>& gpu) {
        qmarg::apply_matrix(gpu, targets, matrix, controls.qubits, controls.values);
        return true;
    });
}

// Sizes for k targets: k itself (one group), a few qubits more, and a larger
// state (up to 20 qubits, kept smaller for large k so the CPU reference stays quick).
std::vector<int> sizes_for(int k) {
    std::vector<int> sizes = {k, k + 3, std::min(20, k + (k <= 6 ? 14 : 7))};
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

template <class Real>
void check_dense(int k) {
    std::mt19937_64 rng(fresh_seed());
    const Matrix matrix = random_unitary(1 << k, rng);
    for (int n : sizes_for(k)) {
        for (Layout layout : kLayouts) {
            for (int set = 0; set < kControlSets; ++set) {
                const Qubits targets = choose_targets(layout, n, k, rng);
                const Controls controls = choose_controls(set, n, targets, rng);
                if (set > 0 && controls.qubits.empty()) continue;  // no free qubit to control on
                expect_gpu_matches_cpu<Real>(n, targets, matrix, controls,
                                             std::string("dense Haar-random unitary, ") + to_string(layout) +
                                                 " targets, k=" + std::to_string(k));
            }
        }
    }
}

// ---- dense gates --------------------------------------------------------------

TYPED_TEST(ApplyMatrixGpuTest, DenseRegisterPathMatchesCpu) {
    for (int k = 1; k <= 5; ++k) check_dense<TypeParam>(k);
}

TYPED_TEST(ApplyMatrixGpuTest, DenseTiledPathMatchesCpu) {
    for (int k = 6; k <= 10; ++k) check_dense<TypeParam>(k);
}

// Every kernel (each k, each path, direct and staged) once on a small state
// with a control: quick enough to run under compute-sanitizer.
TYPED_TEST(ApplyMatrixGpuTest, EveryKernelOnSmallStates) {
    std::mt19937_64 rng(fresh_seed());
    for (int k = 1; k <= 10; ++k) {
        const int n = k + 5;
        const Matrix kinds[] = {cheap_dense_unitary(k, rng), random_diagonal(1 << k, rng),
                                random_permutation(1 << k, rng)};
        const char* names[] = {"dense", "diagonal", "permutation"};
        for (int kind = 0; kind < 3; ++kind) {
            for (Layout layout : {Layout::Low, Layout::High}) {
                const Qubits targets = choose_targets(layout, n, k, rng);
                expect_gpu_matches_cpu<TypeParam>(n, targets, kinds[kind], choose_controls(2, n, targets, rng),
                                                  std::string(names[kind]) + ", " + to_string(layout) +
                                                      " targets, k=" + std::to_string(k));
            }
        }
    }
}

// Larger states, so that every kernel's grid-stride loop takes several turns.
TYPED_TEST(ApplyMatrixGpuTest, DenseOnLargerStatesMatchesCpu) {
    std::mt19937_64 rng(fresh_seed());
    for (int k : {1, 2, 4, 5, 6, 7}) {
        const Matrix matrix = random_unitary(1 << k, rng);
        for (Layout layout : {Layout::Low, Layout::High, Layout::RandomOrder}) {
            const int n = 22;
            const Qubits targets = choose_targets(layout, n, k, rng);
            expect_gpu_matches_cpu<TypeParam>(n, targets, matrix, choose_controls(1, n, targets, rng),
                                              std::string("dense, large state, ") + to_string(layout) + " targets");
        }
    }
}

// A matrix that is diagonal except for one small entry must take the dense
// path (structure is read exactly), or the result would be off by that entry.
TYPED_TEST(ApplyMatrixGpuTest, NearlyDiagonalMatrixIsAppliedDensely) {
    std::mt19937_64 rng(fresh_seed());
    for (int k : {1, 3, 6}) {
        Matrix matrix = random_diagonal(1 << k, rng);
        matrix((1 << k) - 1, 0) = Complex(1e-3, 0);
        const int n = k + 6;
        expect_gpu_matches_cpu<TypeParam>(n, qmarg_test::random_qubits(n, k, rng), matrix, {},
                                          "diagonal plus one off-diagonal entry");
    }
}

TYPED_TEST(ApplyMatrixGpuTest, IdentityLeavesStateUnchanged) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    StateVector<TypeParam> state(9, Device::Gpu);
    state.set_random_state(seed);
    const auto before = state.amplitudes();
    qmarg::apply_matrix(state, {4, 0, 7}, Matrix::identity(8), {2}, {0});
    EXPECT_EQ(state.amplitudes(), before);
}

// ---- the tensor-core path (k >= 5 in double and k >= 6 in float, and one k --
// ---- lower with low targets) ---------------------------------------------------

// A random dense matrix that is not unitary: complex Gaussian entries scaled by
// 1/sqrt(dim), so the state keeps its size and every entry takes part.
Matrix random_dense(int dim, std::mt19937_64& rng) {
    std::normal_distribution<double> gauss(0.0, 1.0 / std::sqrt(2.0 * dim));
    Matrix m(dim);
    for (int r = 0; r < dim; ++r)
        for (int c = 0; c < dim; ++c) m(r, c) = Complex(gauss(rng), gauss(rng));
    return m;
}

// Which dense kernel the GPU picks for this gate (for failure messages).
template <class Real>
std::string dense_path_name(int n, const Qubits& targets, const Controls& controls) {
#if defined(QMARG_TESTS_WITH_CUDA)
    const auto gate = qmarg::gpu::describe_gate(n, targets, controls.qubits, controls.values);
    return std::string("path ") + qmarg::gpu::to_string(qmarg::gpu::dense_path(gate, sizeof(Real)));
#else
    (void)n, (void)targets, (void)controls;
    return "path ?";
#endif
}

// Every target layout (low, high, scattered, random order, descending), every
// control set, random non-unitary matrices, on states from one group up to
// many tiles per block, so that partial column tiles (fewer free qubits than
// the tile's column bits), whole tiles and the grid-stride loop all run.
TYPED_TEST(ApplyMatrixGpuTest, DenseTensorCorePathMatchesCpu) {
    std::mt19937_64 rng(fresh_seed());
    for (int k = 4; k <= 10; ++k) {
        const Matrix matrix = random_dense(1 << k, rng);
        std::vector<int> sizes = {k, k + 1, k + 2, k + 5, std::min(k >= 9 ? 17 : 18, k + 9)};
        sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
        for (int n : sizes) {
            for (Layout layout : kLayouts) {
                for (int set = 0; set < kControlSets; ++set) {
                    const Qubits targets = choose_targets(layout, n, k, rng);
                    const Controls controls = choose_controls(set, n, targets, rng);
                    if (set > 0 && controls.qubits.empty()) continue;
                    expect_gpu_matches_cpu<TypeParam>(n, targets, matrix, controls,
                                                      std::string("random non-unitary dense, ") + to_string(layout) +
                                                          " targets, k=" + std::to_string(k) + ", " +
                                                          dense_path_name<TypeParam>(n, targets, controls));
                }
            }
        }
    }
}

// States of one partial column tile (fewer free qubits than the tile's
// column bits), where the staging tables name fewer distinct amplitudes than
// they have entries: each must be staged once (two cp.async of one thread
// into one address are unordered; racecheck reports them). Small enough for
// the compute-sanitizer passes of scripts/gpu_check.sh.
TYPED_TEST(ApplyMatrixGpuTest, DenseTensorCorePathOnPartialTilesMatchesCpu) {
    std::mt19937_64 rng(fresh_seed());
    for (int k = 4; k <= 10; ++k) {
        const Matrix matrix = random_dense(1 << k, rng);
        for (int n : {k, k + 2}) {
            for (Layout layout : {Layout::Low, Layout::RandomOrder}) {
                const int set = n == k ? 0 : 2;
                const Qubits targets = choose_targets(layout, n, k, rng);
                const Controls controls = choose_controls(set, n, targets, rng);
                expect_gpu_matches_cpu<TypeParam>(n, targets, matrix, controls,
                                                  std::string("random non-unitary dense, partial tile, ") +
                                                      to_string(layout) + " targets, k=" + std::to_string(k) + ", " +
                                                      dense_path_name<TypeParam>(n, targets, controls));
            }
        }
    }
}

// More tiles than resident blocks, so every block takes several tiles.
TYPED_TEST(ApplyMatrixGpuTest, DenseTensorCorePathOnLargeStatesMatchesCpu) {
    std::mt19937_64 rng(fresh_seed());
    const std::pair<int, int> cases[] = {{4, 22}, {5, 22}, {6, 22}, {7, 21}, {8, 21}, {9, 21}, {10, 21}};
    for (const auto& kn : cases) {
        const int k = kn.first, n = kn.second;
        const Matrix matrix = random_dense(1 << k, rng);
        for (Layout layout : {Layout::Low, Layout::High, Layout::RandomOrder}) {
            const Qubits targets = choose_targets(layout, n, k, rng);
            const Controls controls = choose_controls(k % 2 == 0 ? 0 : 2, n, targets, rng);
            expect_gpu_matches_cpu<TypeParam>(n, targets, matrix, controls,
                                              std::string("random non-unitary dense, large state, ") +
                                                  to_string(layout) + " targets, k=" + std::to_string(k) + ", " +
                                                  dense_path_name<TypeParam>(n, targets, controls));
        }
    }
}

// Double k = 4 and 5 run on the ring kernel (apply_matrix_mma.cu), whose
// blocks hold two X tiles and load one while they multiply the other. Its
// tiles are 2^11 amplitudes, its grid two blocks a multiprocessor (264 on an
// H100 or H200): states of 2^7 or 2^8 tiles (fewer than blocks), 2^9 (about
// two a block) and 2^10 (about four), so that blocks with no tile ahead, one
// tile ahead, and slots taken in turn all run. Small enough for the
// compute-sanitizer passes of scripts/gpu_check.sh.
TYPED_TEST(ApplyMatrixGpuTest, DenseTensorCorePathOnFewTilesPerBlockMatchesCpu) {
    std::mt19937_64 rng(fresh_seed());
    for (int k = 4; k <= 5; ++k) {
        const Matrix matrix = random_dense(1 << k, rng);
        for (int n : {19, 20, 21}) {
            for (Layout layout : {Layout::Low, Layout::High, Layout::RandomOrder}) {
                const Qubits targets = choose_targets(layout, n, k, rng);
                const Controls controls = choose_controls(n == 19 ? 1 : 0, n, targets, rng);
                expect_gpu_matches_cpu<TypeParam>(n, targets, matrix, controls,
                                                  std::string("random non-unitary dense, few tiles a block, ") +
                                                      to_string(layout) + " targets, k=" + std::to_string(k) + ", " +
                                                      dense_path_name<TypeParam>(n, targets, controls));
            }
        }
    }
}

// k = 7 .. 10 on 2^21 amplitudes without controls. At k = 7 and 8: 256 or
// 512 tiles of the one-block tensor-core kernel on its 132 to 264 resident
// blocks (H100, H200), so that most blocks take two, and the X prefetch into
// a next tile runs; in double with the steps that skip barrier (B)
// (x_barrier_step in cuda/apply_matrix_mma.cu). At k = 9 and 10 (sm_90): 128
// and 64 tiles of the cluster kernel on 66 clusters of two and 30 of four
// (with k = 10's companion pairs), so that clusters take more than one, and
// a tile's X is stored into rows that peers read during the tile before. The
// smallest such states, for the compute-sanitizer passes of
// scripts/gpu_check.sh.
TYPED_TEST(ApplyMatrixGpuTest, DenseTensorCorePathAcrossTilesMatchesCpu) {
    constexpr int n = 21;
    std::mt19937_64 rng(fresh_seed());
    for (int k = 7; k <= 10; ++k) {
        const Matrix matrix = random_dense(1 << k, rng);
        for (Layout layout : {Layout::Low, Layout::RandomOrder}) {
            const Qubits targets = choose_targets(layout, n, k, rng);
            expect_gpu_matches_cpu<TypeParam>(n, targets, matrix, Controls{},
                                              std::string("random non-unitary dense, tiles across blocks, ") +
                                                  to_string(layout) + " targets, k=" + std::to_string(k) + ", " +
                                                  dense_path_name<TypeParam>(n, targets, Controls{}));
        }
    }
}

#if defined(QMARG_TESTS_WITH_CUDA)
// Every dense kernel on its own, including those the rule of
// cuda/apply_matrix.cuh does not pick on this GPU (the FMA kernels where the
// tensor cores win, the one-block tensor-core kernel where sm_90 runs k = 9
// and 10 on others): what another GPU runs is checked here too. A small state
// with a control, and one with more tiles than resident blocks.
TYPED_TEST(ApplyMatrixGpuTest, EveryDenseKernelOnItsOwnMatchesCpu) {
    using Kernel = void (*)(std::complex<TypeParam>*, const qmarg::gpu::GateQubits&, const Matrix&);
    struct Entry {
        const char* name;
        Kernel kernel;
        int min_k, max_k;
    };
    std::vector<Entry> kernels = {{"register kernel", qmarg::gpu::apply_matrix_small<TypeParam>, 1, 5},
                                  {"tiled FMA kernel", qmarg::gpu::apply_matrix_tiled<TypeParam>, 6, 10}};
    if (qmarg::gpu::mma_available()) {
        kernels.push_back({"one-block tensor-core kernel", qmarg::gpu::apply_matrix_mma_one_block<TypeParam>, 4, 10});
    }
    std::mt19937_64 rng(fresh_seed());
    for (const Entry& entry : kernels) {
        for (int k = entry.min_k; k <= entry.max_k; ++k) {
            const Matrix matrix = random_dense(1 << k, rng);
            for (int n : {k + 3, k <= 8 ? 20 : 21}) {
                for (Layout layout : {Layout::Low, Layout::High, Layout::RandomOrder}) {
                    const Qubits targets = choose_targets(layout, n, k, rng);
                    const Controls controls = choose_controls(n == k + 3 ? 1 : 0, n, targets, rng);
                    expect_run_matches_cpu<TypeParam>(
                        n, targets, matrix, controls, entry.name, [&](StateVector<TypeParam>& gpu) {
                            entry.kernel(gpu.data(),
                                         qmarg::gpu::describe_gate(n, targets, controls.qubits, controls.values),
                                         matrix);
                            return true;
                        });
                }
            }
        }
    }
}

// The register kernel on targets that are the lowest k qubits, in every order
// for k <= 3 and in four for k = 4 and 5: a full tile with no control among
// its bits takes apply_matrix_small_lowest_kernel (float k = 1, 3, 4, double
// k = 3), whose matrix the host reorders; a control inside the tile, another
// k or a state smaller than a tile take the general staged kernel.
// States smaller than a tile, of one tile, of a few, and (n = 22, two orders,
// no control or one above the tile) of more tiles than resident blocks.
TYPED_TEST(ApplyMatrixGpuTest, RegisterKernelOnTheLowestQubitsInAnyOrderMatchesCpu) {
    constexpr int kTileBits = sizeof(TypeParam) == sizeof(float) ? 12 : 11;
    std::mt19937_64 rng(fresh_seed());
    for (int k = 1; k <= 5; ++k) {
        const Matrix matrix = random_dense(1 << k, rng);
        std::vector<Qubits> orders;
        Qubits order(static_cast<std::size_t>(k));
        std::iota(order.begin(), order.end(), 0);
        if (k <= 3) {
            do orders.push_back(order);
            while (std::next_permutation(order.begin(), order.end()));
        } else {
            orders.push_back(order);
            orders.emplace_back(order.rbegin(), order.rend());
            for (int i = 0; i < 2; ++i) {
                std::shuffle(order.begin(), order.end(), rng);
                orders.push_back(order);
            }
        }
        for (int n : {kTileBits - 1, kTileBits, kTileBits + 2, 22}) {
            const bool large = n == 22;
            const std::vector<Controls> control_sets = {
                {},
                {{n - 1}, {}},
                {{n - 2, n - 1}, {0, 1}},
                {{k}, {0}},  // inside the tile
            };
            for (std::size_t o = 0; o < (large ? std::min<std::size_t>(2, orders.size()) : orders.size()); ++o) {
                const Qubits& targets = orders[o];
                for (std::size_t set = 0; set < (large ? 2 : control_sets.size()); ++set) {
                    const Controls& controls = control_sets[set];
                    expect_run_matches_cpu<TypeParam>(
                        n, targets, matrix, controls, "register kernel, lowest qubits, k=" + std::to_string(k),
                        [&](StateVector<TypeParam>& gpu) {
                            qmarg::gpu::apply_matrix_small(
                                gpu.data(), qmarg::gpu::describe_gate(n, targets, controls.qubits, controls.values),
                                matrix);
                            return true;
                        });
                }
            }
        }
    }
}

// k = 10's companion grid on every unit by itself (apply_matrix_mma gives it
// only the multiprocessors the clusters of four leave idle, which on some
// GPUs are none): tiles of 16 columns, two to a unit of the clusters' 32,
// claimed from the shared counter. A state with a control, and one with
// more units than resident clusters.
TYPED_TEST(ApplyMatrixGpuTest, ClusterCompanionAloneMatchesCpu) {
    const int k = 10;
    std::mt19937_64 rng(fresh_seed());
    const Matrix matrix = random_dense(1 << k, rng);
    for (int n : {16, 21}) {
        for (Layout layout : {Layout::Low, Layout::High, Layout::RandomOrder}) {
            const Qubits targets = choose_targets(layout, n, k, rng);
            const Controls controls = choose_controls(n == 16 ? 1 : 0, n, targets, rng);
            const bool ran = expect_run_matches_cpu<TypeParam>(
                n, targets, matrix, controls, "companion alone", [&](StateVector<TypeParam>& gpu) {
                    return qmarg::gpu::apply_matrix_mma_companion_alone(
                        gpu.data(), qmarg::gpu::describe_gate(n, targets, controls.qubits, controls.values), matrix);
                });
            if (!ran) GTEST_SKIP() << "this GPU holds no cluster of two blocks";
        }
    }
    // Fewer than 5 free qubits leave no whole unit to split.
    StateVector<TypeParam> small(13, Device::Gpu);
    Qubits low(k);
    std::iota(low.begin(), low.end(), 0);
    EXPECT_THROW(qmarg::gpu::apply_matrix_mma_companion_alone(small.data(),
                                                              qmarg::gpu::describe_gate(13, low, {}, {}), matrix),
                 qmarg::Error);
}

// Double k = 6's warp-stream kernel (sm_90) on its own: states of one
// partial group (n = 6..8, fewer than 8 columns), one whole group (n = 9;
// in both, the owner's teammate copies half of it and owns none), a few
// groups (n = 10, fewer than the grid's warps), every target layout
// and control set, and more groups than warps (n = 20 without controls: 2048
// groups on the 1056 warps of an H100), so that warps take several and
// refill their buffers. Small enough for the compute-sanitizer passes of
// scripts/gpu_check.sh.
TYPED_TEST(ApplyMatrixGpuTest, WarpStreamKernelMatchesCpu) {
    if constexpr (!std::is_same<TypeParam, double>::value) {
        GTEST_SKIP() << "the warp-stream kernel holds double amplitudes";
    } else {
        constexpr int k = 6;
        std::mt19937_64 rng(fresh_seed());
        const Matrix matrix = random_dense(1 << k, rng);
        for (int n : {6, 7, 8, 9, 10, 20}) {
            for (Layout layout : kLayouts) {
                for (int set = 0; set < (n == 20 ? 1 : kControlSets); ++set) {
                    const Qubits targets = choose_targets(layout, n, k, rng);
                    const Controls controls = choose_controls(set, n, targets, rng);
                    if (set > 0 && controls.qubits.empty()) continue;
                    const bool ran = expect_run_matches_cpu<TypeParam>(
                        n, targets, matrix, controls,
                        std::string("warp-stream kernel, ") + to_string(layout) + " targets",
                        [&](StateVector<TypeParam>& gpu) {
                            return qmarg::gpu::apply_matrix_mma_streams(
                                gpu.data(), qmarg::gpu::describe_gate(n, targets, controls.qubits, controls.values),
                                matrix);
                        });
                    if (!ran) GTEST_SKIP() << "the warp-stream kernel needs sm_90 and 224 KiB of shared memory";
                }
            }
        }
        StateVector<double> state(9, Device::Gpu);
        EXPECT_THROW(qmarg::gpu::apply_matrix_mma_streams(
                         state.data(), qmarg::gpu::describe_gate(9, {0, 1, 2, 3, 4}, {}, {}), random_dense(32, rng)),
                     qmarg::Error);
    }
}

// What a gate whose matrix has imaginary parts 1e-9 of its real parts does to
// the imaginary parts of a real random state, through `kernel` on the GPU
// against the CPU's direct product: the largest amplitude, the largest
// imaginary part (about 1e-9 of it), and the largest error of an imaginary
// part. Checks that the case is what it claims to be.
struct ImaginaryErrors {
    double largest = 0, largest_imag = 0, imag_error = 0, distance = 0;
};

template <class Real>
ImaginaryErrors nearly_real_gate_errors(
    int n, const Qubits& targets, std::mt19937_64& rng,
    void (*kernel)(std::complex<Real>*, const qmarg::gpu::GateQubits&, const Matrix&)) {
    std::normal_distribution<double> gauss;
    const int dim = 1 << targets.size();
    Matrix matrix(dim);
    for (int r = 0; r < dim; ++r)
        for (int c = 0; c < dim; ++c) matrix(r, c) = Complex(gauss(rng), 1e-9 * gauss(rng)) / std::sqrt(1.0 * dim);
    std::vector<std::complex<Real>> amplitudes(std::size_t{1} << n);
    for (auto& a : amplitudes) a = {static_cast<Real>(gauss(rng) / std::sqrt(1.0 * amplitudes.size())), 0};
    StateVector<Real> gpu(n, Device::Gpu), cpu(n, Device::Cpu);
    gpu.set_amplitudes(amplitudes);
    cpu.set_amplitudes(amplitudes);
    qmarg::apply_matrix(cpu, targets, matrix);
    kernel(gpu.data(), qmarg::gpu::describe_gate(n, targets, {}, {}), matrix);
    const auto got = gpu.amplitudes();
    const auto want = cpu.amplitudes();
    ImaginaryErrors out;
    for (std::size_t i = 0; i < got.size(); ++i) {
        out.largest = std::max(out.largest, std::abs(std::complex<double>(want[i])));
        out.largest_imag = std::max(out.largest_imag, std::abs(static_cast<double>(want[i].imag())));
        out.imag_error = std::max(out.imag_error, std::abs(static_cast<double>(got[i].imag()) - want[i].imag()));
    }
    out.distance = relative_distance(got, want);
    EXPECT_GT(out.largest_imag, 1e-11 * out.largest);  // the case is what it claims to be
    EXPECT_LT(out.largest_imag, 1e-7 * out.largest);
    return out;
}

// The tensor-core kernels multiply by Gauss's three real products (Im Y =
// (Mr + Mi)(Xr + Xi) - Mr Xr - Mi Xi), whose imaginary part is exact only to
// rounding of (|Mr| + |Mi|)(|Xr| + |Xi|), not of |Mr| |Xi| + |Mi| |Xr|. A
// matrix whose imaginary parts are 1e-9 of its real parts, on a real state,
// shows the difference: the imaginary parts of the result (about 1e-9 of the
// amplitudes) may be off by rounding of the amplitudes' size, and by no
// more. Every kernel of the path, k = 4..10, several tiles per block.
TYPED_TEST(ApplyMatrixGpuTest, TensorCoreProductErrorIsAtRoundingOfTheAmplitudes) {
    if (!qmarg::gpu::mma_available()) GTEST_SKIP() << "no FP64 tensor cores";
    std::mt19937_64 rng(fresh_seed());
    for (int k = 4; k <= 10; ++k) {
        const int n = k <= 8 ? 20 : 19;
        const Qubits targets = choose_targets(Layout::RandomOrder, n, k, rng);
        SCOPED_TRACE("k=" + std::to_string(k) + ", targets=" + list(targets));
        const ImaginaryErrors e =
            nearly_real_gate_errors<TypeParam>(n, targets, rng, qmarg::gpu::apply_matrix_mma<TypeParam>);
        // Sums of 2^k products, each rounded at about 1e-16 of the
        // amplitudes: at most about 2^k 1e-16 in the worst case.
        EXPECT_LE(e.imag_error, 1e-13 * e.largest);
        EXPECT_LE(e.distance, gate_tolerance<TypeParam>());
    }
}

// The register kernel applies float gates on 5 targets in Gauss's form, in
// float arithmetic (cuda/apply_matrix_small.cu); double ones, and every
// other k, directly. The case above through that kernel at k = 5, on the
// lowest targets (the staged kernel) and the highest (the direct one): in
// float the imaginary parts may be off by float rounding of the amplitudes'
// size (2^k terms, each rounded at about 6e-8 of it), and by no more; in
// double, by rounding of their own size.
TYPED_TEST(ApplyMatrixGpuTest, RegisterKernelErrorAtFiveTargetsIsAtRoundingOfTheAmplitudes) {
    std::mt19937_64 rng(fresh_seed());
    const int k = 5, n = 16;
    for (Layout layout : {Layout::Low, Layout::High}) {
        const Qubits targets = choose_targets(layout, n, k, rng);
        SCOPED_TRACE(std::string(to_string(layout)) + " targets " + list(targets));
        const ImaginaryErrors e =
            nearly_real_gate_errors<TypeParam>(n, targets, rng, qmarg::gpu::apply_matrix_small<TypeParam>);
        const double eps = std::numeric_limits<TypeParam>::epsilon();
        const double size = std::is_same<TypeParam, float>::value ? e.largest : e.largest_imag;
        EXPECT_LE(e.imag_error, (1 << k) * eps * size);
        EXPECT_LE(e.distance, gate_tolerance<TypeParam>());
    }
}
#endif

#if defined(QMARG_TESTS_WITH_CUDA)
// The rule of cuda/apply_matrix.cuh on GPUs with FP64 tensor cores: which
// dense kernel each precision takes around the bounds, where the lowest
// target decides (three lowest qubits share a 128-byte line of double
// amplitudes, four of float ones), and float k = 4 on qubits 0..3, where the
// memory's speed decides. A pure function: no GPU needed.
TEST(DensePathRule, PicksTheDocumentedKernel) {
    using qmarg::gpu::DenseDevice;
    using qmarg::gpu::DensePath;
    using qmarg::gpu::multiprocessor_bytes_per_us;
    const DenseDevice h100{true, multiprocessor_bytes_per_us(2619.0, 5120, 132)};
    const DenseDevice h200{true, multiprocessor_bytes_per_us(3201.0, 6016, 132)};
    const DenseDevice unknown{true, 0.0};
    const DenseDevice no_mma{false, h100.multiprocessor_bytes_per_us};
    const auto path = [](std::size_t real_bytes, const Qubits& targets, const DenseDevice& device) {
        return qmarg::gpu::dense_path(qmarg::gpu::describe_gate(20, targets, {}, {}), real_bytes, device);
    };
    const std::size_t f = sizeof(float), d = sizeof(double);
    for (const DenseDevice& gpu : {h100, h200, unknown}) {
        EXPECT_EQ(path(f, {3, 10, 11, 12, 13}, gpu), DensePath::Mma);
        EXPECT_EQ(path(f, {0, 1, 2, 3, 4}, gpu), DensePath::Mma);
        EXPECT_EQ(path(f, {4, 10, 11, 12, 13}, gpu), DensePath::Small);
        EXPECT_EQ(path(f, {15, 16, 17, 18, 19, 14}, gpu), DensePath::Mma);
        EXPECT_EQ(path(f, {0, 1, 2, 4}, gpu), DensePath::Small);
        EXPECT_EQ(path(f, {3, 10, 11, 12}, gpu), DensePath::Small);
        EXPECT_EQ(path(d, {2, 10, 11, 12}, gpu), DensePath::Mma);
        EXPECT_EQ(path(d, {3, 10, 11, 12}, gpu), DensePath::Small);
        EXPECT_EQ(path(d, {15, 16, 17, 18, 19}, gpu), DensePath::Mma);
        EXPECT_EQ(path(d, {0, 1, 2}, gpu), DensePath::Small);
    }
    // Float k = 4 on qubits 0..3, in any order: tensor cores on the H100's
    // memory (and where the bandwidth is not reported), FMAs on the H200's.
    for (const Qubits& lowest : {Qubits{0, 1, 2, 3}, Qubits{3, 2, 1, 0}, Qubits{2, 0, 3, 1}}) {
        EXPECT_EQ(path(f, lowest, h100), DensePath::Mma);
        EXPECT_EQ(path(f, lowest, unknown), DensePath::Mma);
        EXPECT_EQ(path(f, lowest, h200), DensePath::Small);
        EXPECT_EQ(path(d, lowest, h200), DensePath::Mma);  // double k = 4 with a target under qubit 3
    }
    const double bound = qmarg::gpu::kLowestFloatK4MmaMaxSpeedup * qmarg::gpu::kH100MultiprocessorBytesPerUs;
    EXPECT_EQ(path(f, {0, 1, 2, 3}, DenseDevice{true, bound * 0.99}), DensePath::Mma);
    EXPECT_EQ(path(f, {0, 1, 2, 3}, DenseDevice{true, bound}), DensePath::Small);
    // Without tensor cores every dense gate takes an FMA path.
    EXPECT_EQ(path(f, {0, 1, 2, 3}, no_mma), DensePath::Small);
    EXPECT_EQ(path(d, {0, 1, 2, 3, 4, 5}, no_mma), DensePath::Tiled);
    EXPECT_EQ(path(f, {0, 1, 2, 3, 4}, no_mma), DensePath::Small);
}

// Double k = 6 takes the warp streams where qubits 0..2 are targets or free
// in any mix (no control among them), in any order and wherever the other
// targets and controls lie: the kernel's buffers then hold each 32-byte
// sector of the state whole.
TEST(DensePathRule, WarpStreamsKeepSectorsWhole) {
    auto pays = [](int n, const Qubits& targets, const Qubits& controls = {}) {
        return qmarg::gpu::mma_streams_pay(qmarg::gpu::describe_gate(n, targets, controls, {}));
    };
    EXPECT_TRUE(pays(30, {0, 1, 2, 3, 4, 5}));
    EXPECT_TRUE(pays(30, {5, 4, 3, 2, 1, 0}));
    EXPECT_TRUE(pays(30, {0, 2, 4, 6, 8, 7}));          // qubit 1 free
    EXPECT_TRUE(pays(30, {2, 0, 1, 20, 25, 29}, {5}));
    EXPECT_TRUE(pays(30, {3, 4, 5, 6, 7, 8}));          // qubits 0..2 free
    EXPECT_TRUE(pays(30, {24, 25, 26, 27, 28, 29}));
    EXPECT_TRUE(pays(30, {21, 22, 7, 29, 26, 27}, {3}));
    EXPECT_TRUE(pays(30, {1, 2, 3, 4, 5, 6}));          // qubit 0 free, 1 and 2 targets
    EXPECT_TRUE(pays(9, {8, 7, 6, 5, 4, 3}));           // one group: three free qubits
    EXPECT_FALSE(pays(30, {1, 2, 3, 4, 5, 6}, {0}));    // a control on qubit 0
    EXPECT_FALSE(pays(30, {0, 2, 3, 4, 5, 6}, {1}));    // a control on qubit 1
    EXPECT_FALSE(pays(30, {3, 4, 5, 6, 7, 8}, {2}));    // a control on qubit 2
    EXPECT_FALSE(pays(8, {7, 6, 5, 4, 3, 2}));          // qubit 0 free, two free qubits
    EXPECT_TRUE(pays(7, {6, 5, 4, 3, 2, 0}));           // qubit 0 a target
    EXPECT_FALSE(pays(30, {0, 1, 2, 3, 4}));            // 5 targets
}

// The current GPU's answer is the rule's for what the GPU reports.
TEST(DensePathRule, CurrentDeviceIsAskedOnce) {
    QMARG_SKIP_IF_UNAVAILABLE(Device::Gpu);
    const qmarg::gpu::DenseDevice device = qmarg::gpu::dense_device();
    EXPECT_EQ(device.mma, qmarg::gpu::mma_available());
    EXPECT_GE(device.multiprocessor_bytes_per_us, 0.0);
    for (const Qubits& targets : {Qubits{0, 1, 2, 3}, Qubits{4, 10, 11, 12, 13}, Qubits{0, 1, 2, 3, 4, 5}}) {
        const auto gate = qmarg::gpu::describe_gate(20, targets, {}, {});
        for (std::size_t real_bytes : {sizeof(float), sizeof(double)}) {
            EXPECT_EQ(qmarg::gpu::dense_path(gate, real_bytes), qmarg::gpu::dense_path(gate, real_bytes, device));
        }
    }
}

// The fragment layout of cuda/dmma.cuh against the hardware: one 16 x 16 by
// 16 x 8 product of small integers (exact in double), every element placed by
// the documented lane mapping. A wrong mapping moves or mixes entries, and the
// message names the first wrong one.
TEST(DmmaFragments, IntegerProductMatchesHost) {
    QMARG_SKIP_IF_UNAVAILABLE(Device::Gpu);
    if (!qmarg::gpu::mma_available()) GTEST_SKIP() << "no FP64 tensor cores on this GPU";
    std::vector<double> a(16 * 16), b(16 * 8);
    // Distinct values per position, so a transposed or shifted fragment shows.
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c) a[r * 16 + c] = (r * 16 + c) % 23 - 11;
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 8; ++c) b[r * 8 + c] = (r * 8 + c) % 19 - 9 + (r == c ? 100 : 0);
    const std::vector<double> c = qmarg::gpu::dmma_fragment_product(a, b);
    ASSERT_EQ(c.size(), 16u * 8u);
    for (int r = 0; r < 16; ++r) {
        for (int col = 0; col < 8; ++col) {
            double expected = 0;
            for (int k = 0; k < 16; ++k) expected += a[r * 16 + k] * b[k * 8 + col];
            ASSERT_EQ(c[r * 8 + col], expected) << "DMMA fragment layout: wrong C[" << r << "][" << col << "]";
        }
    }
    // A single nonzero of A at (i, k) and of B at (k, j) must land at C(i, j) alone.
    for (int i : {0, 7, 8, 15}) {
        for (int k : {0, 3, 4, 15}) {
            for (int j : {0, 1, 6, 7}) {
                std::vector<double> ua(16 * 16, 0.0), ub(16 * 8, 0.0);
                ua[i * 16 + k] = 2.0;
                ub[k * 8 + j] = 3.0;
                const std::vector<double> uc = qmarg::gpu::dmma_fragment_product(ua, ub);
                for (int r = 0; r < 16; ++r)
                    for (int col = 0; col < 8; ++col)
                        ASSERT_EQ(uc[r * 8 + col], (r == i && col == j) ? 6.0 : 0.0)
                            << "A(" << i << "," << k << ") * B(" << k << "," << j << ") landed at C(" << r << ","
                            << col << ")";
            }
        }
    }
}
#endif

// ---- diagonal and permutation fast paths ------------------------------------

// Named gates on random qubits of a random state, GPU against CPU.
TYPED_TEST(ApplyMatrixGpuTest, NamedDiagonalAndPermutationGatesMatchCpu) {
    using Real = TypeParam;
    std::mt19937_64 rng(fresh_seed());
    const int n = 12;
    struct Named {
        const char* name;
        int qubits;
        void (*apply)(StateVector<Real>&, const Qubits&, double);
    };
    const Named gates[] = {
        {"z", 1, [](StateVector<Real>& s, const Qubits& q, double) { qmarg::z(s, q[0]); }},
        {"s", 1, [](StateVector<Real>& s, const Qubits& q, double) { qmarg::s(s, q[0]); }},
        {"sdg", 1, [](StateVector<Real>& s, const Qubits& q, double) { qmarg::sdg(s, q[0]); }},
        {"t", 1, [](StateVector<Real>& s, const Qubits& q, double) { qmarg::t(s, q[0]); }},
        {"tdg", 1, [](StateVector<Real>& s, const Qubits& q, double) { qmarg::tdg(s, q[0]); }},
        {"rz", 1, [](StateVector<Real>& s, const Qubits& q, double a) { qmarg::rz(s, q[0], a); }},
        {"phase", 1, [](StateVector<Real>& s, const Qubits& q, double a) { qmarg::phase(s, q[0], a); }},
        {"cz", 2, [](StateVector<Real>& s, const Qubits& q, double) { qmarg::cz(s, q[0], q[1]); }},
        {"x", 1, [](StateVector<Real>& s, const Qubits& q, double) { qmarg::x(s, q[0]); }},
        {"y", 1, [](StateVector<Real>& s, const Qubits& q, double) { qmarg::y(s, q[0]); }},
        {"swap", 2, [](StateVector<Real>& s, const Qubits& q, double) { qmarg::swap(s, q[0], q[1]); }},
        {"cx", 2, [](StateVector<Real>& s, const Qubits& q, double) { qmarg::cx(s, q[0], q[1]); }},
        {"ccx", 3, [](StateVector<Real>& s, const Qubits& q, double) { qmarg::ccx(s, q[0], q[1], q[2]); }},
    };
    for (const Named& gate : gates) {
        // Random qubits, plus the extremes: qubit 0 and qubit n-1 in both roles.
        std::vector<Qubits> choices = {qmarg_test::random_qubits(n, gate.qubits, rng),
                                       qmarg_test::random_qubits(n, gate.qubits, rng)};
        Qubits extremes = {0, n - 1, n / 2};
        extremes.resize(gate.qubits);
        choices.push_back(extremes);
        std::reverse(extremes.begin(), extremes.end());
        choices.push_back(extremes);
        for (const Qubits& qubits : choices) {
            const double angle = std::uniform_real_distribution<double>(-kPi, kPi)(rng);
            const std::uint64_t seed = fresh_seed();
            SCOPED_TRACE(seed_trace(seed) + ", n=" + std::to_string(n) + ", gate " + gate.name + " on " +
                         list(qubits) + ", angle " + std::to_string(angle));
            StateVector<Real> gpu(n, Device::Gpu);
            gpu.set_random_state(seed);
            StateVector<Real> cpu = gpu.to(Device::Cpu);
            gate.apply(gpu, qubits, angle);
            gate.apply(cpu, qubits, angle);
            EXPECT_LE(relative_distance(gpu.amplitudes(), cpu.amplitudes()), gate_tolerance<Real>());
        }
    }
}

// Hand-made diagonal and permutation matrices with random phases, every k,
// random targets and control sets.
TYPED_TEST(ApplyMatrixGpuTest, DiagonalAndPermutationMatricesMatchCpu) {
    std::mt19937_64 rng(fresh_seed());
    for (int k = 1; k <= 10; ++k) {
        for (int kind = 0; kind < 2; ++kind) {
            const Matrix matrix = kind == 0 ? random_diagonal(1 << k, rng) : random_permutation(1 << k, rng);
            for (int n : {k, k + 3, std::min(18, k + 10)}) {
                for (Layout layout : kLayouts) {
                    const int set = static_cast<int>(rng() % kControlSets);
                    const Qubits targets = choose_targets(layout, n, k, rng);
                    expect_gpu_matches_cpu<TypeParam>(n, targets, matrix, choose_controls(set, n, targets, rng),
                                                      std::string(kind == 0 ? "diagonal" : "permutation") +
                                                          " with phases, " + to_string(layout) +
                                                          " targets, k=" + std::to_string(k));
                }
            }
        }
    }
    // A diagonal projector (zeros on the diagonal) is still diagonal.
    Matrix projector(4);
    projector(1, 1) = 1.0;
    projector(2, 2) = Complex(0, 1);
    expect_gpu_matches_cpu<TypeParam>(7, {5, 1}, projector, {{3}, {0}}, "diagonal projector");
}

// ---- long circuits ------------------------------------------------------------

// 1000 random gates (every path, random targets and controls) keep the norm,
// and their adjoints applied in reverse order bring the state back.
TYPED_TEST(ApplyMatrixGpuTest, LongRandomCircuitStaysUnitaryAndUndoes) {
    using Real = TypeParam;
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    std::mt19937_64 rng(seed);
    const int n = 16;
    struct Gate {
        Qubits targets;
        Matrix matrix;
        Controls controls;
    };
    // A pool of matrices per k, reused: building a fresh one per gate would
    // dominate the test time at k = 10.
    std::map<int, std::vector<Matrix>> pool;
    for (int k = 1; k <= 10; ++k) {
        for (int i = 0; i < 3; ++i) pool[k].push_back(cheap_dense_unitary(k, rng));
        pool[k].push_back(random_diagonal(1 << k, rng));
        pool[k].push_back(random_permutation(1 << k, rng));
    }
    std::vector<Gate> circuit;
    for (int g = 0; g < 1000; ++g) {
        // Mostly small gates, as in real circuits, but every k appears.
        const int k = g % 10 == 0 ? 1 + static_cast<int>(rng() % 10) : 1 + static_cast<int>(rng() % 3);
        const Qubits targets = qmarg_test::random_qubits(n, k, rng);
        const auto& choices = pool[k];
        circuit.push_back({targets, choices[rng() % choices.size()],
                           choose_controls(static_cast<int>(rng() % kControlSets), n, targets, rng)});
    }

    StateVector<Real> state(n, Device::Gpu);
    state.set_random_state(seed);
    const auto initial = state.amplitudes();
    for (const Gate& gate : circuit) {
        qmarg::apply_matrix(state, gate.targets, gate.matrix, gate.controls.qubits, gate.controls.values);
    }
    double norm = 0;
    for (const auto& a : state.amplitudes()) norm += std::norm(std::complex<double>(a));
    const double drift = std::is_same<Real, float>::value ? 1e-3 : 1e-10;
    EXPECT_NEAR(norm, 1.0, drift) << "after 1000 random gates";

    for (auto gate = circuit.rbegin(); gate != circuit.rend(); ++gate) {
        qmarg::apply_matrix(state, gate->targets, gate->matrix.adjoint(), gate->controls.qubits,
                            gate->controls.values);
    }
    EXPECT_LE(relative_distance(state.amplitudes(), initial), drift) << "after undoing the 1000 gates";
}

// ---- limits ---------------------------------------------------------------------

TYPED_TEST(ApplyMatrixGpuTest, TooManyTargetsIsAnErrorNamingTheLimit) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    StateVector<TypeParam> state(12, Device::Gpu);
    state.set_random_state(seed);
    const auto before = state.amplitudes();
    Qubits targets(11);
    std::iota(targets.begin(), targets.end(), 0);
    std::mt19937_64 rng(seed);
    // Whatever the matrix's structure, the limit is checked first.
    for (const Matrix& matrix : {Matrix::identity(1 << 11), random_diagonal(1 << 11, rng)}) {
        try {
            qmarg::apply_matrix(state, targets, matrix);
            ADD_FAILURE() << "a gate on 11 targets was accepted on the GPU";
        } catch (const qmarg::Error& error) {
            const std::string message = error.what();
            EXPECT_NE(message.find("11 targets"), std::string::npos) << message;
            EXPECT_NE(message.find("at most 10 targets"), std::string::npos) << message;
        }
    }
    EXPECT_EQ(state.amplitudes(), before);

    // Ten targets are fine, the whole state included.
    StateVector<TypeParam> ten(10, Device::Gpu);
    ten.set_random_state(seed);
    StateVector<TypeParam> cpu = ten.to(Device::Cpu);
    const Matrix matrix = cheap_dense_unitary(10, rng);
    Qubits all(10);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    qmarg::apply_matrix(ten, all, matrix);
    qmarg::apply_matrix(cpu, all, matrix);
    EXPECT_LE(relative_distance(ten.amplitudes(), cpu.amplitudes()), gate_tolerance<TypeParam>());
}

}  // namespace
