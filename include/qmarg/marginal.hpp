// Marginal probabilities over an ordered subset of qubits.
//
// marginal_probabilities(state, qubits) returns 2^k doubles, k = qubits.size():
// entry b is the total probability of the amplitudes whose bit qubits[j] equals
// bit j of b (qubits[0] is the least significant bit of b). Any order of qubits
// is allowed and permutes the output; duplicates, out-of-range qubits and an
// empty list are errors. Probabilities are accumulated in double, also for a
// single-precision state.
#pragma once

#include <vector>

#include "qmarg/device_buffer.hpp"
#include "qmarg/state_vector.hpp"
#include "qmarg/types.hpp"

namespace qmarg {

// How the GPU computes a marginal. The CPU backend has one algorithm
// (per-thread bins merged in a fixed order) and accepts only Auto.
//
// Determinism: the seed strategies (GlobalAtomic, SharedPrivatized,
// Partitioned) add floating-point probabilities with atomics whose order
// changes from run to run, so repeated calls on the same state agree to
// rounding (a relative difference of order 1e-16 * sqrt(2^(n-k)) per bin) but
// are not bitwise identical. So is BinStationaryAtomic where it merges with
// atomics, and with it Auto. BinStationary is deterministic, and Auto runs it
// when asked for determinism; see MarginalOptions::deterministic for the
// guarantee.
//
// Limits: an explicitly requested strategy that cannot run a case throws
// qmarg::Error saying why and what would fit; it never falls back silently.
// Auto only picks strategies that can run the case.
enum class MarginalStrategy {
    // Picks a strategy from (n, k, which qubits) and the device's limits, by a
    // rule derived from measurements on an H100 (documented with its numbers at
    // plan_marginal in cuda/marginal_plan.cu). Today that is
    // BinStationaryAtomic in every case (BinStationary's kernels, with atomics
    // only where they were measured faster), and BinStationary when
    // MarginalOptions::deterministic is set.
    Auto,

    // Seed B. One thread per amplitude (128 per block); each thread adds its
    // probability to the output bin in global memory with one atomicAdd.
    //
    // When it wins: when the amplitudes in flight at one time map to many
    // distinct bins, so that atomics rarely meet on one address: many qubits
    // among the low ones (measured on an H100, n = 30: 874 GB/s at k = 10 on
    // qubits 0..9, 2.4 TB/s at k = 15 on qubits 0..14, against a 3.1 TB/s read).
    // It collapses when few bins are live: 9 to 55 GB/s for k <= 10 on high
    // qubits or k <= 5 on low ones.
    //
    // Limits: none beyond the 2^k output; it runs every k from 1 to n.
    // Not deterministic (the order of the atomic adds varies between runs).
    GlobalAtomic,

    // Seed C. Each block of 128 threads (one per amplitude) keeps a private copy
    // of all 2^k bins in shared memory, zeroed at the start of every launch;
    // threads add into it with shared-memory atomics, then the block adds each
    // of its 2^k bins to the output with a global atomic.
    //
    // When it wins: small k, wherever the qubits are, because contention moves
    // to shared memory (H100, n = 30: 357 to 664 GB/s at k = 1, 219 to 356 at
    // k = 5, 313 to 874 at k = 10). Its cost grows with 2^k: every block flushes
    // all 2^k bins for only 128 amplitudes, and large bins leave room for few
    // blocks per multiprocessor.
    //
    // Limits: 2^k doubles of shared memory per block must fit in the device's
    // opt-in maximum (227 KiB on an H100: k <= 14). Beyond it an explicit
    // request throws qmarg::Error naming the bytes needed and the largest k that
    // fits.
    // Not deterministic (the order of both the shared and the global atomic adds
    // varies between runs).
    SharedPrivatized,

    // Seed A. Each block of 128 threads (one per amplitude) owns a partition of
    // 2^k bins in global memory and adds into it with atomics; a second kernel
    // then sums the partitions, one thread per bin, in partition order.
    //
    // When it wins: rarely; it was the slowest strategy in every cell measured
    // on an H100 (38 to 42 GB/s at n = 30, k <= 5), because it zeroes and
    // re-reads blocks x 2^k doubles and its final sum has only 2^k threads. It
    // is kept as the seed's baseline.
    //
    // Limits: (2^n / 128) x 2^k doubles = 2^(n+k-4) bytes of temporary device
    // memory, checked against free memory before anything is allocated (for a
    // 30-qubit double state on an 80 GB GPU: k <= 9). Beyond it an explicit
    // request throws qmarg::Error naming the bytes needed, the bytes free and
    // the largest k that fits. The temporary memory is released on every path,
    // errors included.
    // Not deterministic (the order of the atomic adds within a partition varies;
    // the final sum over partitions is in a fixed order).
    Partitioned,

    // qmarg's engine (docs/marginal_engine.md). Each thread walks amplitudes
    // along index bits that are not selected, so the bin it adds into stays
    // fixed: it accumulates in registers with no atomics at all. Threads that
    // share a bin are combined in a fixed tree (warp shuffles, then shared
    // memory) and each bin is written once, or, when one segment of the state
    // is split over several blocks, to partial rows that a second pass adds in
    // a fixed order. Lanes always read 64 contiguous amplitudes with 16- or
    // 32-byte loads, whichever qubits are selected.
    //
    // When it wins: everywhere measured so far. On an H100 (n = 30, double) it
    // reads at 95 to 100% of a plain read of the state for every k <= 20 on
    // low, high, scattered and descending qubits, where the seed strategies
    // reach 0.3 to 77%. For k >= n - 4 (n >= 11), where the output is 1/16 to
    // all of the amplitudes' count, it stages tiles of 2^11 probabilities in
    // shared memory and writes the bins in contiguous runs
    // (cuda/marginal_transpose.cu), except where its measured rule leaves a
    // small state to the streaming kernel: 0.89 to 1.0 of the roofline
    // counting the output bytes (n = 24..30, both precisions), where it
    // reached 0.09 to 0.79 before.
    //
    // Limits: none beyond the output; it runs every k from 1 to n. Temporary
    // memory (at most 2^n / 64 bytes of partial rows) only when a segment is split.
    // Deterministic: no floating-point atomics, and the launch shape (and with it
    // the order of every addition) depends only on n, the qubit list and the
    // state's precision, so repeated calls give bitwise-identical results, on
    // any GPU.
    BinStationary,

    // BinStationary's kernels, with one change where a segment of the state
    // is split over several blocks (few bins, or qubits among the lowest) and
    // a measured rule says it pays: each block then adds its bins into the
    // output with one floating-point atomic per bin, instead of writing
    // partial rows that a second pass adds in a fixed order; where that pays
    // on shorter parts than BinStationary's (the blocks then finish over the
    // whole call, and their atomics on a bin arrive spread out), it cuts the
    // segment into those. Everywhere else it runs exactly what BinStationary
    // runs (but for the plans of faster memory, below).
    //
    // When it wins: where BinStationary's second pass is a visible part of
    // the time, on states of up to about 2^28 amplitudes: its launches cost a
    // few microseconds against reads of 6 us to 1.4 ms at n = 20..28. On an
    // H100 it gained up to 0.17 of the read roofline at n = 20, 0.13 at
    // n = 22, 0.08 at n = 24 and 0.02 at n = 26
    // (bench/results/marginal_H100_*_engine*.json). The rule counts the
    // requests that would meet on one stretch of the output (an
    // instruction's sectors of a line), which the L2 serialises, and
    // where too many would, it keeps partial rows, cuts fewer parts or adds
    // into copies of the output that one more kernel adds up; where every
    // warp of a block holds bins, or where a block's bins would come half a
    // sector at a time, the block gathers them so that its atomics on one
    // line come in one instruction. On double states of 2^24 to 2^26
    // amplitudes BinStationary's partial rows measured faster than atomics
    // on short parts and than copies of the output, so there it adds with
    // atomics only on BinStationary's own parts, where those pay. The rule
    // also weighs the GPU's memory bandwidth per multiprocessor: on memory
    // faster than an H100's (an H200) the short parts must still take a
    // microsecond each to stream and fewer of their atomics may meet on the
    // output, so the same case can merge differently on two GPU models. On
    // such memory, for states of 2^24 to 2^26 amplitudes (float: from 2^25),
    // its own plan of few parts also sets a block's warps side by side
    // where BinStationary's stream apart: there its results, atomics or not,
    // are not BinStationary's bits.
    //
    // Limits: none beyond the output; it runs every k from 1 to n.
    // Not deterministic where it merges with atomics: the blocks' additions
    // run in the order the blocks finish (one atomic per bin and block, not
    // per amplitude), so repeated calls agree to rounding.
    BinStationaryAtomic,
};

const char* to_string(MarginalStrategy strategy);

struct MarginalOptions {
    MarginalStrategy strategy = MarginalStrategy::Auto;

    // Asks for bitwise-reproducible results. Guarantee: the same state (the
    // same bits), the same qubit list in the same order and the same precision
    // give bitwise-identical results on every call, in every process, on any
    // GPU, whatever else runs on it. It holds because the deterministic paths
    // use no floating-point atomics and their launch shape, and with it the
    // order of every addition, is a function of (n, qubits, precision) alone:
    // nothing depends on the device, timing or which block finishes first. The CPU
    // backend always gives this guarantee on its own (fixed chunks summed in
    // a fixed order, whatever the number of threads); CPU and GPU results
    // differ from each other by rounding.
    //
    // With deterministic = true, Auto picks among deterministic strategies
    // only (today BinStationary in every case: up to 0.17 of the read
    // roofline slower than BinStationaryAtomic at n <= 22, 0.08 at n = 24,
    // 0.02 at n = 26, 0.04 at n = 28, level at n = 30), and an explicit
    // BinStationaryAtomic or seed strategy throws qmarg::Error. With false
    // (the default) every strategy may run, and Auto runs
    // BinStationaryAtomic, which is not deterministic.
    bool deterministic = false;
};

template <class Real>
std::vector<double> marginal_probabilities(const StateVector<Real>& state, const Qubits& qubits,
                                           const MarginalOptions& options = {});

// The same, leaving the 2^k results in GPU memory (the state must be on the GPU).
// `out` is resized to 2^k.
template <class Real>
void marginal_probabilities(const StateVector<Real>& state, const Qubits& qubits,
                            DeviceBuffer<double>& out, const MarginalOptions& options = {});

}  // namespace qmarg
