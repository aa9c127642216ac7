// The rule for BinStationary's state loads (marginal_state_loads.hpp).
//
// Why: a marginal writes each bin once, but where the bins a warp writes lie
// far apart (k close to n, qubit lists in any order but ascending) every
// 8-byte store goes to a 32-byte sector of its own, and the other bins of
// that sector come later, from other blocks. A state larger than L2 streams
// through it and pushes such partly written lines out before they are
// complete, and each push costs DRAM a partial write. With the state's
// lines evicted first, the output can stay in L2 until the kernel ends,
// where it fits. The output must fit beside the stream (at most half the
// L2), and the state must be large enough to push it out at all (at least
// twice the L2); below that there is nothing to save. (That is the working
// explanation; run back to back, below, the same call gains nothing, which
// it does not account for.)
//
// Measured on an H100 (50 MiB of L2; bins bitwise the same either way;
// ratio to the read roofline, output not counted), plain -> evict-first.
// How much it gains depends on what L2 holds when the call starts.
// After a read of 100 MiB of other data (clean lines: how the benchmark
// times states under four times the L2), 50 to 300 runs, interleaved:
//   streaming path, output <= 16 MiB (k <= 21), state >= 128 MiB:
//     n = 24, k = 20, double: descending 0.903 -> 0.972, high 0.925 ->
//       0.987, three random orders 0.914-0.925 -> 0.975-0.986, the engine
//       sweep's random order 0.867 -> 0.908; float k = 20 lowest 0.885 ->
//       0.934, k = 21 lowest 0.865 -> 0.941 (double 0.915 -> 0.988);
//     n = 26, k = 20, 21: 0.886-0.956 -> 0.948-0.993 (float k = 20
//       descending 0.888 -> 0.968);
//     n = 28, 30, k = 20, 21: 0.913-0.998 -> 0.960-1.010;
//     k = 14..18 at n = 24..28: level to +0.045 (double n = 24, k = 18
//       descending 0.931 -> 0.976); k = 1, 8, 10, 15: level within 0.01
//       (so the loads alone read no faster than the roofline's plain ones).
//   transposed path, n = 24, k = 20, 21: double 0.884-0.921 -> 0.913-0.943,
//     float 0.862-0.903 -> 0.940-0.962.
//   Part of that is write-back moved past the call: the output lines stay
//   dirty in L2 until the next kernel evicts them. Timing the call and a
//   following 100 MiB read together, the saving shrinks from 5.0-6.9 to
//   3.0-6.3 us (double n = 24, k = 20), 1.9-3.8 to 1.2-2.2 us (float n = 24,
//   k = 20) and 15.9-27.9 to 15.2-24.3 us (n = 26, k = 20, 21).
// After a write of 100 MiB (dirty lines, as after a gate): -0.013 to +0.067,
//   mostly gains (float n = 24, k = 20 0.765-0.777 -> 0.807-0.844, double
//   n = 26, k = 21 descending 0.875 -> 0.901; double n = 26, k = 20 high
//   0.933 -> 0.920).
// Back to back, the same call 8 times before the 8 timed (how the benchmark
//   times larger states): level, -0.004 to +0.042 (the engine sweep's random
//   order at n = 24, k = 20: 0.821-0.825 -> 0.861-0.867), the same with the
//   16 calls queued without the host between them. What holds it back is
//   the previous call's output, dirty in L2: discarding those lines
//   (discard.global.L2, one kernel between the calls, not timed) lifted the
//   same cells by 0.01 to 0.05 with either load (evict-first: double n = 24,
//   k = 20 high 0.917 -> 0.962, float n = 26, k = 20 descending 0.884 ->
//   0.908), but timed with the call the discarding kernel cost as much
//   (0.899 -> 0.864 and 0.884 -> 0.879).
// Where the rule says Normal, evict-first measured (after a clean read):
//     output of 32 MiB (k = 22): streaming -0.01 to +0.04 at n = 24,
//       -0.016 to -0.041 at n = 26, +0.00 to +0.017 at n = 28, 30;
//       transposed -0.01 (double n = 24) to -0.08 (double n = 26), but
//       float n = 24 +0.05;
//     64 MiB and more (k >= 23): streaming -0.045 to +0.03, mostly lower;
//       transposed -0.00 to -0.09 (double n = 28, k = 26 descending 0.851
//       -> 0.759);
//     state of 64 MiB (n = 22, double): streaming level to +0.04 (k = 20
//       lowest 0.856 -> 0.897), transposed -0.01 to -0.03 (k = 18..21:
//       0.826-0.898 -> 0.807-0.870), so the one rule leaves both Normal;
//       32 MiB (n = 22, float): level on both paths.
// Storing the output with L2::evict_last (and giving its lines their normal
// priority back after the call, one applypriority per line in one more
// kernel) kept it in L2 back to back too (n = 26, k = 20 descending +0.033
// to +0.036) but cost 1.4 to 7.7 us a call at n = 24 against evict-first
// loads alone; not kept. The same stores with no kernel after them gain
// 0.04 to 0.07 back to back (double n = 24, k = 20), and nothing with the
// output in eight buffers in turn, while the lines they keep slow a later
// L2-resident read by about 10 % (docs/marginal_engine.md, "Open points");
// not kept either.
#include "marginal_state_loads.hpp"

namespace qmarg {
namespace gpu {

StateLoads state_loads_for(int num_qubits, int k, bool single_precision, std::uint64_t l2_bytes) {
    if (l2_bytes == 0 || num_qubits < 0 || k < 0) return StateLoads::Normal;
    // log2 of the bytes, to stay clear of overflow at any n and k.
    const int log_state = num_qubits + (single_precision ? 3 : 4);
    const int log_output = k + 3;
    const auto at_least = [](int log_bytes, std::uint64_t bytes) {
        return log_bytes >= 63 || (std::uint64_t{1} << log_bytes) >= bytes;
    };
    const bool state_pushes_output_out = at_least(log_state - 1, l2_bytes);  // half the state >= the L2
    const bool output_fits_beside_stream = log_output < 63 && (std::uint64_t{1} << log_output) <= l2_bytes / 2;
    return state_pushes_output_out && output_fits_beside_stream ? StateLoads::EvictFirst : StateLoads::Normal;
}

}  // namespace gpu
}  // namespace qmarg
