// Dense gates on 4..10 targets as a matrix product on the FP64 tensor cores
// (DMMA: mma.sync m16n8k8 .f64 on sm_90, m8n8k4 on sm_80; cuda/dmma.cuh),
// for double and float states: a float state's amplitudes are widened to
// double as they are staged and rounded back once, when the result is
// stored, so the product itself is the double one (more exact than float
// FMAs with a float copy of the matrix). Three kernels share the parts in
// apply_matrix_mma_common.cuh: the one-block kernel here (every k before
// sm_90; k = 4..8 after), its form for float k = 4, 5 with the whole matrix
// resident (apply_matrix_mma_raw_kernel, below it) and the cluster kernel
// (apply_matrix_mma_cluster.cu, k = 9 and 10 on sm_90). With D = 2^k the gate is
// Y = M * X, M the D x D matrix and X's columns the groups (the D amplitudes
// whose target bits vary, one column per assignment of the other free qubits).
//
// In place, so a block owns whole columns: it stages all D rows of its
// kColumns columns (one TileLayout tile: the targets and the lowest free
// qubits, so a warp's global loads walk neighbouring addresses whether the
// targets are low or high) in shared memory, and only then overwrites them in
// global memory. The output is computed kPassRows rows at a time (a pass); the
// matrix streams through shared memory in chunks of kPassRows x kChunk
// entries, one step and one barrier each, fetched from L2 by every block.
// Where the warps are stacked along the rows (double k = 7, 8 and the
// cluster kernel: DirectA shapes), each matrix entry feeds one warp row, and
// a stage in shared memory only added a store, a load and a barrier to each
// entry's way from L2: there each lane loads its A fragments from L2 into
// registers a step ahead (load_matrix_fragments, measured at
// x_barrier_step), and the barriers serve X alone. Reuse per byte brought on
// chip: each staged amplitude feeds D / 16 *
// kPassRows / 16 products, each matrix entry kColumns multiply-adds. The
// matrix's L2 traffic is therefore 16 * D / kColumns bytes per amplitude
// against 8 * D flops: 2 / kColumns bytes per flop. At k = 10 shared memory
// holds only 8 columns of D amplitudes: 1/4 byte per flop, about 5 TB/s of
// L2 reads at 21 TFLOP/s, the L2's limit. So k = 9 and 10 run on clusters
// of two and four blocks that share one tile of 32 columns
// (apply_matrix_mma_cluster.cu), which cuts that traffic to 1/16 byte per
// flop, as at k = 8.
//
// A block runs its tiles' steps as one stream: the matrix chunks, the same
// for every tile, are fetched kStages - 1 steps ahead across tile ends, and
// (from k = 6, kPrefetchX) the next tile's X arrives during the last pass of
// the current one: rows of chunk c are reloaded as soon as the last pass has
// multiplied them. Measured on an H100 (double, n = 30), against staging each
// tile whole at its start (one run): k = 6, 7 6 to 17 % faster, most on high
// targets, whose X tiles load slowest (k = 7: 29.6 -> 34.8 TFLOP/s); k = 8..10
// -2 to +3 %.
//
// What limits it (double, H100): from k = 6 the board's power. The GPU holds
// these kernels at its 700 W limit and lowers the SM clock to stay there
// (apply_matrix_bench records it: bench/results/apply_matrix_H100.json, double
// n = 30, and the sweeps before it): k = 6 at 1560 to 1830 MHz of the 1980
// peak, k = 7 at 1695 to 1875, k = 8 at 1695 to 1905, k = 9 and 10 at 1740 to
// 1875; the ZGEMM that sets the floor's rate ran at 1665 to 1770, lower on a
// hotter chip. At k = 6 the clock is 8 to 20 % under its peak: the products and
// the full-bandwidth copy share one power budget, where the floor takes the
// larger of the two as if each had the GPU to itself. From k = 7 the power
// leaves the products room: the same DMMA count on operands already in
// registers, beside a plain copy of the state, took 0.63 to 0.69 of these
// kernels' time in double (k = 10: 58 TFLOP/s at 1965 MHz;
// bench/results/README.md), so their data movement around the products is the
// rest. Part of it was the matrix's way through shared memory: with the A
// fragments loaded from L2 (DirectA) double k = 8 reads 0.93 to 0.97 of the
// floor and k = 10 0.87 to 0.90 (x_barrier_step has the measurements), where
// k = 7 (1710 to 1890 MHz) gained 1 to 3 % and k = 9, at 1980 MHz, nothing:
// its tiles' X loads before (C1) bound it. With those loads' lines
// prefetched into L2 (apply_matrix_mma_cluster.cu) k = 9 reads 0.91 to 0.92
// and k = 10 0.95 to 0.96, at 1815 to 1875 MHz.
// Below that, ncu at n = 26, k = 8 saw the tensor pipe busy 71 % of the time
// in the direct form (56 % in the Gauss form below, for a quarter fewer
// DMMAs), 2 warps per scheduler, stalls mostly on fixed latencies, the pipe's
// throttle and shared loads, the L2 read at 23 to 41 % of its peak. The
// pipe's busy time comes in bursts: the warps reach the products together,
// between barriers, pass stores and copies. The threads that issue the
// products also copy the matrix stream, and that work counts: copying the
// stage images' padding units too (12.5 % more bytes, one more guarded copy
// per thread and step) cost 7 to 10 % at k = 7, 8 and 10; a producer-warp
// kernel (k = 9, in use until the 16 x 32 warp tiles below), whose bulk
// copies include the padding, was level. Before the fragments were loaded
// straight into place, the kernel with its products replaced by a few adds
// took 65 % of the real kernel's time at k = 7, 8 and 85 % at k = 9, and
// without the block barriers (the producer-warp form) k = 8 was level and k =
// 9 10 % faster. Wider cluster tiles (64 columns at k = 8, 9, 10) were no
// faster; wider warp tiles (16 x 32, one pass of 128 rows at k = 7, 8) were 0
// to 14 % slower.
//
// Complex arithmetic by Gauss's three real products (multiply_chunk in
// apply_matrix_mma_common.cuh): Re Y = Mr Xr - Mi Xi and Im Y = (Mr + Mi)
// (Xr + Xi) - Mr Xr - Mi Xi, a quarter fewer DMMAs than the direct form's
// four. The price is accuracy of one kind: an imaginary part much smaller
// than its row's terms is exact to rounding of the terms' size, not of its
// own (multiply_chunk has the bound; qmarg/gates.hpp states it for users).
// Measured on an H100 (double, n = 30, fraction of the floor, low / high
// targets, two runs each, alternating with the direct form: a DMMA's k index
// over the real and imaginary parts of 4 rows, B one amplitude as loaded):
// k = 5 1.12 / 0.86 -> 1.12 / 1.00, k = 6 0.88 / 0.75 -> 0.91 / 0.79, k = 7
// 0.70 / 0.63 -> 0.74 / 0.67, k = 8 0.74 / 0.68 -> 0.80 / 0.75, k = 9 0.72 /
// 0.69 -> 0.74 / 0.71, k = 10 0.65 / 0.64, level. With X kept as (re, im)
// amplitudes, so that each B fragment was gathered from two of them, ptxas
// added 2 to 3 register moves per DMMA, and k = 5..7 lost 3 to 8 % instead:
// the B fragments must be loaded as they are used, hence X's planar layout
// (x_real_slot). The direct form measured again on the present shapes (16 x
// 32 warp tiles, clusters at k = 9, 10; Re Y = Mr Xr + (-Mi) Xi with -Mi by a
// sign flip of the loaded fragment, Im Y = Mi Xr + Mr Xi: two accumulator
// sets, 34 to 44 fewer registers at k = 7, 8, no DADDs, a quarter fewer
// fragment bytes per DMMA) took longer in every cell (n = 30 double, 28
// float, four layouts, two runs each, alternating): double k = 7, 8 1.08 to
// 1.10 times the Gauss form's time, k = 9, 10 1.12 to 1.15 (k = 6, where it
// spilled 68 bytes, 1.13 to 1.16), float k = 6..8 1.06 to 1.10, k = 9, 10
// 1.17 to 1.21. A third more DMMAs cost more than the DADDs they save: the
// DMMA count, not the DADDs, is what to cut. Nor did the direct form pay
// with the registers it frees spent on 32 x 32 warp tiles (two 16-row tiles
// a warp, so that a B fragment feeds 8 DMMAs instead of 3: per 8-deep slice
// 8 A and 8 B units for 32 DMMAs, where Gauss's 16 x 32 tile loads 4 and 8
// for 12, and no DADDs). Double k = 7 on 4 x 2 such warps (64 columns, one
// pass of 128 rows, two stages; 255 registers) and k = 8 on 8 x 1 (32
// columns, one pass, 8-deep chunks; 248), no spills, ran at 0.74 to 0.75 of
// the floor in every layout, 1.07 to 1.13 (k = 7) and 1.13 to 1.14 (k = 8)
// times the Gauss form's time (n = 30, four layouts, old-new-new-old). So
// even with its fragment loads per product halved the direct form's DMMAs
// ran at about 42 TFLOP/s, three quarters of the ZGEMM rate whatever the
// layout: the pipe, and a third more work in it, bound it. The products no
// longer bound the Gauss form alone: ncu (n = 26) sees the DMMA pipe busy 47
// to 56 % of the time at k = 7..10, shared with the DADDs of the sums (5 %),
// and k = 7 runs at the power limit (about 1.8 GHz where k = 8..10 keep
// 1.98).
//
// Warp layout: the block's 8 warps form kWarpRows x kWarpCols; a warp owns 16
// rows of the pass and kTileCols * 8 columns, so it keeps kTileCols
// accumulator trios (Mr Xr, Mi Xi, (Mr + Mi)(Xr + Xi): 4 doubles each) and
// reuses each of its three A fragments kTileCols times.
//
// From k = 8, and at k = 7 in double, the warp tile is 16 x 32 (kTileCols =
// 4; from k = 8 the 8 warps are stacked along 128 rows of a pass, at double k
// = 7 they stand 4 along 64 rows by 2 across 64 columns): per 8-deep slice of
// a chunk a warp loads 4 16-byte units of A fragments and 8 of B fragments
// for 12 DMMAs, against 4 + 4 for 6 with 16 x 16 tiles, so the shared-memory
// fragment loads per DMMA drop from about 680 to 512 bytes a warp. With the
// matrix stream's and X's stores on top, 16 x 16 tiles asked shared memory
// for about as many bytes per step as the DMMA pipe has cycles at its peak
// (128 bytes a cycle), and both ran at about 41 % of their peaks. ptxas fits
// the 16 x 32 kernels in 220 to 255 registers (one block per multiprocessor),
// with no spills but 4 bytes in the float k = 10 kernel. Measured on an H100
// (TFLOP/s, n = 28, low / high / scattered targets, both forms alternating in
// one command: two runs each in double, one in float): double k = 8 46.5 /
// 42.4 / 40.8 -> 48.9 / 44.1 / 44.0, k = 9 (on clusters of two, against the
// producer-warp kernel) 41.5 / 40.3 / 39.6 -> 46.3 / 44.1 / 43.3, k = 10 36.4
// / 35.5 / 36.1 -> 43.5 / 42.5 / 41.9; float k = 8 48.6 / 44.6 / 44.7 -> 50.1
// / 46.3 / 46.4, k = 9 41.7 / 40.0 / 39.3 -> 47.3 / 45.4 / 44.3, k = 10 37.0
// / 36.9 / 35.9 -> 45.0 / 44.2 / 43.5. At k = 7 the 16 x 32 tile needs one
// block per multiprocessor, and with 32 columns it lost 3 to 9 % to two
// blocks of 16 x 16 tiles; with 64 columns and three stages double k = 7
// gains (below the shapes' table). More matrix stages measured level (k = 8
// with 16-deep chunks, three or four stages; k = 10 with three or four), so
// the matrix stream's latency is not what bounds these kernels; shapes that
// spill (k = 8 on clusters of two, k = 9 on clusters of four with three
// stages) lost 10 to 40 %.
//
// Shared-memory invariants of the one-block kernel (`xs`, `ms`, both double2;
// the cluster kernel states its own in its file):
//   xs[c * kXStride + 8 b .. + 7] hold X's rows 8 b .. 8 b + 7 of the current
//     tile's column c, real parts in units 0..3 and imaginary parts in units
//     4..7, rows t and t + 4 in one unit (unit t ^ x_swizzle(c): x_real_slot
//     in apply_matrix_mma_common.cuh), for all c < kColumns and every row of
//     chunk 8 b / kChunk, from the barrier (B) of the first step that
//     multiplies that chunk (in DirectA shapes the last barrier (B) at or
//     before it: steps 0..2) until the barrier (B) of the step after the
//     tile's last pass multiplied it (in DirectA shapes the split barrier's
//     wait in that step; x_barrier_step), or the tile's end. Between those
//     barriers nothing writes those rows. kXStride = D + 4 makes a B-fragment
//     load (lanes g, t read column g, unit 8d + x_lane_unit(g, t)) hit 8
//     different 16-byte bank groups per quarter warp.
//   ms[s] (shapes with matrix stages) holds the image of the step whose
//     chunk (pass, kc) stage s holds
//     (make_matrix_images in apply_matrix_mma_common.cuh: rows in pairs g, g
//     + 8, a pair's Re M units then its Im M units), from barrier (B) of its
//     step until the barrier (B) of the step after the next copy into s is
//     issued. kPairStride = 2 kChunk + 4 units makes an A-fragment load (pairs
//     g, units 8d + t) hit 8 different 16-byte bank groups per quarter warp.
//   acc[j] holds the three products at rows pass * kPassRows + warp_row0 +
//     {g, g + 8}, columns col0 + 8 * j + {2t, 2t + 1} of Y (MmaAccumulators),
//     summed over the chunks of the pass so far; combined and written to
//     global memory after the pass's last chunk.
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "apply_matrix_mma_common.cuh"

namespace qmarg {
namespace gpu {
namespace {

// Float k = 4, 5 run on apply_matrix_mma_raw_kernel (RawX in MmaShapeOf),
// whose matrix stages hold the whole matrix (one stage a step).
template <int K, class Real>
constexpr bool raw_x() {
    return std::is_same<Real, float>::value && K <= 5;
}

// Float k = 7, 8 prefetch X's chunks through shared memory (RawChunk in
// MmaShapeOf; measured at issue_raw_chunk).
template <int K, class Real>
constexpr bool raw_chunk() {
    return std::is_same<Real, float>::value && (K == 7 || K == 8);
}

// Double k = 4, 5 run on apply_matrix_mma_ring_kernel (XSlots in
// MmaShapeOf) with two X tiles in shared memory, one multiplied while the
// other loads. Measured on an H200 (double, n = 30, tensor cores forced, ms
// low / high / scattered / descending, two runs each, alternating with the
// first kernel and with three slots): k = 5 11.28-11.41 / 12.83-12.91 /
// 10.86-10.92 / 10.97-11.05 -> 10.32-10.35 / 12.09-12.26 / 10.30-10.32 /
// 9.76-9.77 (0.77 / 0.66 / 0.78 / 0.82 of the floor); k = 4 9.43-9.45 /
// 9.83-9.92 / 10.53-10.54 / 9.51-9.52 -> 9.39-9.44 / 9.51-9.60 / 10.32-10.38
// / 9.42-9.45. Three slots (126 KiB at k = 5, 125 at k = 4: one block a multiprocessor)
// lost at k = 5 (11.45-11.54 / 13.27-13.30 / 11.17-11.20 / 11.34-11.38) and
// were level at k = 4; double k = 6 with two slots beside its whole matrix
// (208 KiB, one block, no X prefetch) lost 3 to 6 % (15.54-15.60 /
// 16.71-16.73 / 17.11-17.12 / 15.24-15.30 against 15.01-15.02 / 15.72-15.82
// / 16.31-16.43 / 14.57-14.63).
template <int K, class Real>
constexpr int ring_slots() {
    return std::is_same<Real, double>::value && K <= 5 ? 2 : 1;
}

// The shape each k runs with. kColumns is as large as shared memory allows
// while keeping two blocks per multiprocessor where that is possible (so one
// block's global loads and stores overlap another's products); H100: 227 KiB
// per block, 228 KiB per multiprocessor.
//   k   warp tile  columns  pass rows  chunk  stages  shared   blocks/SM  matrix L2 bytes/flop
//   4    16 x 16     128       16        16     1      85 KiB     2        1/64   (double: two X tiles)
//   5    16 x 16      64       32        16     2      90 KiB     2        1/32   (double: two X tiles)
//   6    16 x 16      64       32        16     2      86 KiB     2        1/32
//   7    16 x 16      32       64        16     2     102 KiB     2        1/16   (float)
//   7    16 x 32      64       64        16    (3)    132 KiB     1        1/16   (double, A from L2)
//   8    16 x 32      32      128        16    (2)    130 KiB     1        1/16   (double, A from L2)
//   8    16 x 32      32      128        16     2     206 KiB     1        1/16   (float)
//   9    16 x 16      16      128        16     2     201 KiB     1        1/8
//  10    16 x  8       8      128        16     2     201 KiB     1        1/4
//      (k = 9 and 10 run on clusters on sm_90: apply_matrix_mma_cluster.cu;
//       float k = 4, 5 on apply_matrix_mma_raw_kernel, with one stage a step,
//       the whole matrix, and two raw tiles: 77 and 86 KiB; float k = 7
//       4 KiB more, for the raw chunk; double k = 7, 8 are DirectA shapes:
//       no matrix stages, their count the X prefetch's commit groups, and
//       at k = 7 each A fragment is read by both warp columns, the second
//       time from L1: load_matrix_fragments)
// With 16 x 16 warp tiles, chunks of 32 halved the barriers per product and
// paid at k = 8 (36.4 -> 40.5 TFLOP/s on low targets, 34.8 -> 37.0 on high
// ones); with 16 x 32 tiles a 32-deep stage no longer fits beside the X
// tile. At k = 6, 7 the wider stages cost the second block (k = 7: 35.8 ->
// 34.6), and k = 9, 10 have no room for them. Measured again after the
// fragments were loaded straight into place (double, n = 30, TFLOP/s low /
// high targets, against these shapes in the same run): k = 6 with 32-deep
// chunks 38.0 / 28.5 against 37.6 / 31.0; k = 7 with 32-deep chunks (one
// block) 40.8 / 34.4 against 43.7 / 39.4, with three stages 36 / 33, with
// 16 columns 37 / 35.
// Double k = 7 no longer runs that shape. With 16 x 16 warp tiles a warp
// reads 4 KiB of fragments from shared memory per 6 DMMAs and each stage
// serves 32 columns: at the DMMA peak, by that arithmetic, shared memory
// would be busy about as long as the DMMAs and the matrix stream would ask
// L2 for about 5 TB/s. 16 x 32 warp tiles read 6 KiB per 12 DMMAs, and 64
// columns halve the matrix's L2 bytes per flop, for the cost of the second
// block per multiprocessor. Measured on an H100 (double, n = 30, fraction of
// the floor, low / high / scattered (random order, before ascending_targets),
// two or three runs each, alternating): 16 x 16 tiles, two
// blocks 0.75-0.76 / 0.72-0.73 / 0.68-0.69; 16 x 32 tiles and 64 columns on
// one block with three stages 0.79-0.80 / 0.76-0.77 / 0.70-0.72, with two
// 0.78 / 0.75 / 0.69-0.70, with four 0.79 / 0.76-0.77 / 0.65-0.66, with two
// 32-deep stages 0.78 / 0.70 / 0.66-0.67; 16 x 32 tiles and 32 columns (k =
// 8's shape, one pass) 0.72-0.73 / 0.71-0.72 / 0.63-0.64. That shape again
// with the A fragments from L2 (DirectA; each fragment then read once a
// block, where the present shape's two warp columns each read it, both from
// L2 at the time), two or three stages (254 and 252 registers, no spills),
// was level or slower in every layout (n = 30, ms low / high / scattered /
// descending, two runs each, alternating in one command): 22.39-22.52 /
// 23.28 / 22.48-22.54 / 23.28-23.35 for the present shape against
// 22.82-23.35 / 23.33-23.46 / 23.14-23.36 / 23.57-23.59 for k = 8's. Float
// k = 7 keeps its shape: the 64-column one measured 0.81-0.84 / 0.88 / 0.77
// against 0.79 / 0.87-0.88 / 0.84, and its raw chunk needs two stages
// (MmaShapeOf).
// Nor did double k = 7 gain from the 16 x 32 tiles on two blocks of 4
// warps (32 columns, 64-row passes, two stages, 102 KiB and 232 registers
// each, no spills), where one block's barriers, copies and stores could
// overlap the other's products: against this shape (n = 30, two runs each,
// alternating; the blocks' thread count made a shape parameter for the
// run) low 0.815-0.824 -> 0.811-0.826, high 0.800-0.801 -> 0.795-0.806,
// scattered 0.822-0.824 -> 0.825-0.827, descending 0.817-0.824 ->
// 0.816-0.819. With the matrix's L2 bytes per flop doubled that is level, so
// at k = 7 the wait at a block's barriers is not what a second block wins.
// On an H200, whose copy is 1.4 times faster, double k = 6 and float k = 5
// are no longer bound by memory (double k = 6 runs at 34 to 39 TFLOP/s of the
// model where k = 7 reaches 45 to 47), and the wider warp tiles were tried
// there (double n = 30, float n = 28, fraction of a copy kernel's time, low
// / high / scattered / descending, two runs each, alternating with these
// shapes): double k = 6 as in the table 0.768-0.775 / 0.659-0.660 / 0.697-0.701 /
// 0.723-0.735; on k = 7's shape (16 x 32, 64 columns, one block, three
// stages; 232 registers) 0.728-0.730 / 0.671-0.674 / 0.707-0.710 /
// 0.685-0.693, the same with two stages level with it, with 128 columns and
// two stages (214 registers) 0.768-0.771 / 0.662-0.664 / 0.700 /
// 0.714-0.723; float k = 5 (the raw kernel) on 16 x 32 tiles with 128 columns
// (198 registers) 0.60 / - / 0.53-0.56 / 0.60-0.62 against 0.71-0.72 / - /
// 0.63-0.64 / 0.68-0.71 (its high targets run the FMA kernel).
// Nor, on the H200 (double n = 30, ms, low / high / scattered / descending,
// two runs each, alternating with these shapes in one command: k = 6
// 14.05-14.06 / 15.83-15.95 / 15.69 / 14.59-14.65), did double k = 6 gain on
// one pass of 64 rows over 32 columns, so that the next tile's X loads
// during all of a tile's steps: 15.00-15.07 / 16.49-16.56 / 15.89-15.97 /
// 15.44-15.47 (16 bytes spilled), with three stages level with that, as a
// ring of two or three such X tiles beside the whole matrix (one block)
// 14.82-15.10 / 16.96-17.05 / 16.40-16.98 / 15.05-15.22; float k = 6 on that
// shape took 3.46-3.55 ms against 3.04-3.25. Nor double k = 5 on rings of
// 32-column tiles (16 x 8 warp tiles): two or three slots 10.81-12.27 ms
// against 9.76-11.41, 7 to 12 % slower in every layout.
// Nor did double k = 6 gain with the whole matrix in registers: each warp
// held its 16 rows' A fragments for all 64 columns (128 registers), loaded
// once per kernel, and the X tiles took turns in a ring of 3 or 4 slots (the
// ring kernel's loop), one pass over all 64 rows, one barrier a tile and no
// matrix stream, so half the shared-memory fragment loads and no L2 reads
// of the matrix. On an H100 (n = 30, ms, low / high / scattered /
// descending, two runs each, alternating in one command with these shapes:
// 14.01-14.15 / 15.51-15.73 / 15.69-15.77 / 14.37-14.64): Gauss's form with
// the sums of M formed per slice, 16 x 16 warp tiles (32 columns, 252
// registers, one block per multiprocessor) 14.52-14.71 / 15.10-15.21 /
// 15.12-15.19 / 14.70-14.84; 16 x 8 tiles 16.0-16.4; the direct form (no
// DADDs, four accumulators, 244 registers; three spilled 76 bytes) 15.56-
// 15.58 / 15.86-15.88 / 16.00-16.10 / 15.76-15.91, on 16 x 8 tiles 16.9-
// 17.4. The GPU was at its 700 W limit in every one of them: the register
// form at 1860 MHz, these shapes at 1710-1815 (bench/power_sampler.hpp). At
// double k = 5 the same form (64 columns) was within 1 to 3 % of the ring
// kernel either way.
// Nor did double k = 6 gain on double k = 7's shape with its A fragments
// from L2 and L1 (DirectA; 16 x 32 warp tiles, 4 x 2 warps, 64 columns, one
// pass, three stages, one block per multiprocessor, 254 registers; on its
// own two blocks 224 bytes spill): against these shapes (n = 30, ms low /
// high / scattered / descending, two runs each, alternating: 14.19-14.35 /
// 15.34-15.35 / 15.67-15.90 / 14.35-14.47) it took 14.52-14.61 /
// 15.05 / 15.34-15.38 / 14.71-14.82, at 1770-1860 MHz where these ran at
// 1605-1785.
template <int K, class Real>
struct OneBlockShape {
    // Double k = 7 takes 64 columns, 16 x 32 warp tiles and three stages on
    // one block per multiprocessor (measured below the table).
    static constexpr bool kWideDouble7 = K == 7 && std::is_same<Real, double>::value;
    static constexpr int kXSlots = ring_slots<K, Real>();
    static constexpr bool kRing = kXSlots > 1;
    static constexpr int kWarpRows = K <= 4 ? 1 : K <= 6 ? 2 : K == 7 ? 4 : 8;
    static constexpr int kTileCols = K == 8 || kWideDouble7 ? 4 : K == 10 ? 1 : 2;
    static constexpr int kPassRows = kDmmaRows * kWarpRows;
    // The whole matrix, one stage a step (the raw and ring kernels copy it once).
    static constexpr int kWholeMatrix = (1 << K) / kPassRows * (1 << K) / kDmmaDepth;
    static constexpr int kStages = raw_x<K, Real>() || kRing ? kWholeMatrix : kWideDouble7 ? 3 : 2;
    static constexpr int kMinBlocks = K <= 7 && !kWideDouble7 ? 2 : 1;
    // Double k = 7 and 8 load their A fragments from L2 (DirectA; measured
    // at x_barrier_step).
    static constexpr bool kDirectA = (K == 7 || K == 8) && std::is_same<Real, double>::value;
    using type = MmaShapeOf<K, kWarpRows, kTileCols, kDmmaDepth, kStages, kMinBlocks, (K >= 6), 1,
                            raw_x<K, Real>(), raw_chunk<K, Real>(), kXSlots, kDirectA>;
};
template <int K, class Real>
using MmaShape = typename OneBlockShape<K, Real>::type;
// ptxas -v (CUDA 13, sm_90): 120 to 128 registers at k = 4..6 and float k =
// 7 (the cap two blocks per multiprocessor impose; float k = 7 spills 16
// bytes, float k = 6 16), 235 at double k = 7 and 8, 232 to 234 at float k =
// 8, 168 to 178 at k = 9 and 124 to 128 at k = 10 (the clusters' k = 9, 10:
// 255, double spilling 8 bytes; k = 10's companion 214 to 222), no other
// spills; the raw kernel (float k = 4, 5) 126 to 128, without spills.
// Measured when the Gauss form came in (double, n = 30, low / high targets,
// against the shapes of that time in the same run; double k = 7's present
// shape is measured above the ptxas note): k = 7 with one block per
// multiprocessor and no cap (no spills) 34 % slower, with 64-column tiles 16
// to 30 %, with 32-deep chunks 11 to 16 %; with 16 x 16 warp tiles, k = 8
// with 16-deep chunks was 7 to 10 % slower than with 32-deep ones, and k = 9
// on this kernel 2 % slower than a producer-warp form, itself 10 to 12 %
// behind the clusters of 16 x 32 tiles.
// Float k = 6 (n = 28, low / high / scattered, three runs each, alternating
// with these shapes): without the X prefetch (the float staging's registers
// freed) 26 / 10 / 9 % slower, with one block per multiprocessor and no cap
// 20 / 16 / 16 % slower.

// Whether step q of a tile needs barrier (B) in a DirectA shape, which
// streams no matrix stages: only the X prefetch needs it, and its copies
// are issued after each step's products. A double state's X copies issued
// at step q are complete after the wait of step q + 2 (with two stages they
// join step q + 1's group and the wait at q + 2 takes every group; with
// three they close their own group, and the wait at q + 2 takes all but the
// one of step q + 1), and at the next tile's step 0 every copy but the last
// step's is complete, so steps 0..2 make visible all the rows fetched for
// the tile: at the previous tile's last pass and at step 0 (the last
// chunk's, read at step kChunksPerPass - 1 >= 2). The first pass's
// store, at step kChunksPerPass - 1 >= 2, thus follows the barrier after
// which the whole tile has been read from global memory. Other steps read
// rows that are already visible.
// In a last pass with a next tile each step's copies overwrite the rows the
// step before it multiplied (and, at step 0, the last chunk's), so every
// thread must be done with that step. At step 0 barrier (B) sees to it; in
// the last pass a split barrier (split_barrier_wait in
// apply_matrix_mma_common.cuh): each thread arrives once it has done a
// step's products and waits only after its next step's, before that step's
// copies, so a thread waits for a slower one only when that one is a whole
// step of products behind, where barrier (B) at each step held every warp's
// products up until the last warp arrived. Double k = 8 keeps 3 of its 32
// barriers a tile, k = 7 3 of 16. Measured on an H100 (double, n = 30,
// fraction of the floor, four layouts, two runs each, alternating; the
// table in bench/results/README.md, "A split barrier for the last pass"):
// k = 8 0.93-0.96 -> 0.96-0.99, k = 7 0.83-0.87 -> 0.84-0.88; the copies
// after the products with barrier (B) kept at every last-pass step took k =
// 7 to 0.71-0.76. Level after it (the same README, "Fragment pairs, one
// arrival a warp, two stages"): one arrival a warp (__syncwarp, then lane 0,
// the mbarrier counting 8); double k = 7 on two stages; double k = 8's A
// fragments in two register sets, taken as fragments[q & 1] in a step loop
// unrolled by two (no copy of a loop-carried set, whose 32 register moves a
// step the SASS shows). The same two sets through a lambda called twice an
// iteration gained 0.2 to 2.8 % at k = 8 and lost 1 to 1.5 % at k = 7 on
// high targets, but compiled every one-block kernel differently.
// Measured on an H100 (double, n = 30, fraction of the floor, low / high /
// scattered / descending, alternating in one command, two runs each, and
// again in a second with the cluster kernel's change; the matrix stages
// still allocated): k = 8 staged 0.85-0.86 / 0.84-0.85 / 0.85 / 0.85-0.86,
// fragments from L2 with every barrier 0.89 / 0.84-0.85 / 0.86 / 0.88-0.89,
// with these barriers only 0.89-0.91 / 0.85-0.87 / 0.86-0.87 / 0.89-0.91;
// k = 7 0.83-0.85 / 0.79-0.80 / 0.81-0.82 / 0.81-0.82 -> 0.83-0.84 /
// 0.80-0.81 / 0.83 / 0.82-0.83 -> 0.84-0.87 / 0.80-0.82 / 0.84-0.85 /
// 0.83-0.84. Without the stages' shared memory (k = 8 130 KiB instead of
// 202, k = 7 132 instead of 186) the same kernels read k = 8 0.93 to 0.97
// and k = 7 0.80 to 0.87 (the sweep of d1280be's library and three runs
// after it), and with 72 KiB of unused shared memory added to
// their launch k = 8 0.86 to 0.90 and k = 7 0.72 to 0.79 (two runs each,
// alternating): the room goes to the L1 cache, through which X's 8-byte
// cp.async copies pass (.ca, two per amplitude). Whether L1 serves the
// second copy's sectors or holds more copies in flight was not measured.
// The cluster kernel, which stages X through registers, read the same with
// and without the padding.
// Nor did X through registers pay here (16-byte loads a step ahead, stored
// a step later, as a float state's chunks; 241 and 248 registers, no
// spills): k = 8 0.78 to 0.82, k = 7 0.66 to 0.71, at full clock.
// Nor fewer barriers in the last pass by fetching the next tile's rows two or
// four chunks at a time, at every second or fourth step (the rows of the chunks
// multiplied since the last fetch; a barrier only at those steps, so k = 7
// keeps 7 or 5 of its 16 barriers and k = 8 11 or 7 of its 32; the copies still
// get at least two steps before a wait). Measured on an H100 (n = 30, fraction
// of the floor, low / high / scattered / descending, two runs each, alternating
// in one command): k = 7 0.856-0.860 / 0.827-0.829 / 0.854-0.855 / 0.842-0.845
// as committed, in pairs 0.773-0.775 / 0.784-0.794 / 0.794-0.798 / 0.765-0.767,
// in fours 0.837-0.846 / 0.743-0.747 / 0.778-0.779 / 0.814-0.818; k = 8
// 0.947-0.948 / 0.935-0.939 / 0.941-0.945 / 0.942-0.956 against 0.925-0.935 /
// 0.905-0.920 / 0.914-0.920 / 0.928-0.934 and 0.897 / 0.885-0.893 / 0.897 /
// 0.897-0.898. The grouped forms ran at a higher clock (k = 7 1815-1965 MHz in
// pairs against 1755-1905): the next tile's X arriving in bursts costs more
// than the barriers it saves, so a steady stream of it is what these kernels
// need.
template <class S>
__device__ __forceinline__ bool x_barrier_step(int q) {
    static_assert(S::kStages == 2 || S::kStages == 3, "X copies complete two steps after they are issued");
    static_assert(S::kChunksPerPass >= 3, "a tile's first pass reads the last fetched rows after step 2");
    static_assert(S::kSteps - S::kChunksPerPass >= 3, "the last pass starts after the barrier steps");
    return q <= 2;
}

// kNeighbours: qubit 0 is free (pair_stores in apply_matrix_mma_common.cuh).
template <class S, class Real, bool kNeighbours>
__global__ void __launch_bounds__(kMmaThreads, S::kMinBlocks)
    apply_matrix_mma_kernel(DeviceComplex<Real>* amps, const double2* __restrict__ images,
                            const __grid_constant__ TileLayout layout) {
    static_assert(S::kCluster == 1, "apply_matrix_mma_cluster_kernel runs the cluster shapes");
    static_assert(!S::kRawX, "apply_matrix_mma_raw_kernel runs the RawX shapes");
    static_assert(S::kXSlots == 1, "apply_matrix_mma_ring_kernel runs the XSlots shapes");
    static_assert(!S::kDirectA || std::is_same<Real, double>::value, "x_barrier_step counts cp.async copies of X");
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const auto [xs, ms, xb, raw, x_offsets, chunk_offset, x_cells] = MmaShared<S>(shared_bytes);

    const WarpPlace<S> place;
    const int g = place.g, t = place.t, warp_row0 = place.warp_row0, col0 = place.col0, x_unit = place.x_unit;
    const int columns = 1 << layout.num_free;  // kColumns, fewer only for small states

    Index col_offset[S::kTileCols][2];
    Index lane_row_offset[2];
    [[maybe_unused]] std::uint64_t* const split = MmaShared<S>(shared_bytes).split_barrier();
    if constexpr (S::kSplitBarriers > 0) {
        if (threadIdx.x == 0) split_barrier_init(split, kMmaThreads);  // before set_up_one_block's barrier
    }
    [[maybe_unused]] unsigned split_parity = 0;  // of the split barrier's next phase
    const XStaging x = set_up_one_block<S, Real>(layout, place, x_offsets, x_cells, chunk_offset, col_offset,
                                                 lane_row_offset);

    // The block's tiles are blockIdx.x + i * gridDim.x. Its steps run through
    // them without a break: the matrix stream (in DirectA shapes the
    // fragment loads), the same chunks for every tile, never drains, and
    // stage_read is the stage of the step's chunk.
    // Prologue: the first tile's X, then chunks 0 .. kStages - 2, one commit
    // group each (X joins chunk 0's).
    const Index stride = gridDim.x;
    Index tile = blockIdx.x;  // the grid is never larger than num_tiles
    Index base = tile_base(layout, tile);
    stage_first_x_tile<S, Real>(xs, amps, base, columns, x, x_offsets, x_cells, chunk_offset);
    [[maybe_unused]] MatrixFragments<S> next_a;  // DirectA: the next step's A fragments
    [[maybe_unused]] const int warp_row = threadIdx.x / 32 % S::kWarpRows;
    if constexpr (S::kDirectA) {
        // The same commit groups as the matrix stream's prologue, for the X
        // prefetch's count; the first tile's X closes the first.
        for (int q = 0; q < S::kStages - 1; ++q) __pipeline_commit();
        load_matrix_fragments<S>(next_a, images, 0, warp_row);
    } else {
        copy_first_matrix_chunks<S>(ms, images);
    }

    MmaAccumulators<S> acc;
    clear_accumulators<S>(acc);
    [[maybe_unused]] PendingXChunk<S, Real> pending;  // float states without RawChunk
    [[maybe_unused]] int raw_pending = -1;            // RawChunk: the chunk in the raw buffer

    [[maybe_unused]] int stage_read = 0;  // shapes with matrix stages
    // With two matrix stages, a double state's X copies (cp.async) join the
    // next step's group instead of their own step's, so that a step's wait
    // does not hold for copies issued one step before: they get two steps to
    // land, and no tile reads them before kChunksPerPass - 1 >= kStages
    // steps. Measured on an H100 (double, n = 30, fraction of the floor, two
    // commands of two runs each, alternating with the copies in their own
    // step's group): k = 6 low 0.940-0.954 -> 0.960-0.974, descending
    // 0.931-0.938 -> 0.948-0.965, high and scattered level (0.992 to 1.001 of
    // the time), k = 8 0.995 to 1.002 of the time; with three stages (k = 7,
    // three steps instead of two) 1.003 to 1.008, so k = 7 keeps its groups.
    constexpr bool kXJoinsNextGroup = S::kPrefetchX && S::kStages == 2 && std::is_same<Real, double>::value;
    for (bool first = true; tile < layout.num_tiles; tile += stride, first = false) {
        const bool has_next = tile + stride < layout.num_tiles;
        const Index next_base = has_next ? tile_base(layout, tile + stride) : base;
        // Not unrolled: unrolling lets the compiler hoist the next step's
        // fragment loads and run out of registers.
#pragma unroll 1
        for (int q = 0; q < S::kSteps; ++q) {
            if (!S::kDirectA || x_barrier_step<S>(q)) {
                // Groups committed after chunk q's: the kStages - 2 chunks after it.
                __pipeline_wait_prior(S::kStages - 2);
                __syncthreads();  // (B) chunk q (and the X rows it multiplies) from every thread is visible;
                                  //     every thread is done with the previous step, whose matrix stage the
                                  //     next copy reuses and, in a tile's last pass, whose X rows the
                                  //     prefetch overwrites
            }
            if constexpr (!S::kDirectA) {
                // The chunk kStages - 1 steps ahead, in this tile or the next.
                const int ahead = q + S::kStages - 1;
                const int stage_write = stage_read == 0 ? S::kStages - 1 : stage_read - 1;
                if (ahead < S::kSteps || has_next) {
                    copy_matrix_chunk<S>(ms, images, ahead < S::kSteps ? ahead : ahead - S::kSteps, stage_write);
                }
            }
            // Rows of chunk c are dead once the last pass has multiplied
            // them (the previous step): the next tile's rows take their
            // place. The last chunk's rows die with the tile, so they are
            // fetched at step 0 of the tile that needs them.
            [[maybe_unused]] int chunk = -1;  // the chunk of X this step fetches (kPrefetchX), from tile `from`
            [[maybe_unused]] Index from = base;
            if (S::kPrefetchX && q >= S::kSteps - S::kChunksPerPass + 1 && has_next) {
                chunk = q % S::kChunksPerPass - 1;
                from = next_base;
            } else if (S::kPrefetchX && q == 0 && !first) {
                chunk = S::kChunksPerPass - 1;
            }
            if constexpr (S::kPrefetchX) {
                if constexpr (S::kRawChunk) {
                    // Each chunk is widened one step after its copy was
                    // issued (the step's wait completed it): it is read again
                    // kChunksPerPass - 1 >= 2 steps after the copy at the
                    // earliest.
                    if (raw_pending >= 0) widen_raw_chunk<S>(xs, raw, raw_pending, x, x_cells);
                    raw_pending = chunk;
                    if (chunk >= 0) issue_raw_chunk<S>(raw, amps, from, chunk, x, x_offsets, chunk_offset);
                } else if constexpr (std::is_same<Real, float>::value) {
                    // Each chunk is stored one step after its loads were
                    // issued (PendingXChunk): it is read again kChunksPerPass
                    // - 1 >= 2 steps after its loads at the earliest.
                    store_x_chunk<S, Real, false>(xs, pending, x, x_cells);  // chunks of tiles of large states
                    if (chunk >= 0) load_x_chunk<S>(pending, amps, from, chunk, x, x_offsets, chunk_offset);
                } else {
                    // kXJoinsNextGroup: the step's group closes before its X copies.
                    if constexpr (kXJoinsNextGroup) __pipeline_commit();
                    // A tile that has a next one, or a next tile's: no
                    // repeats. DirectA shapes issue the copies after the
                    // step's products (below).
                    if (!S::kDirectA && chunk >= 0) {
                        prefetch_x_chunk<S>(xs, amps, from, chunk, x, x_offsets, x_cells, chunk_offset);
                    }
                }
            } else if (q == 0 && !first) {
                // Without prefetching, a tile's X is staged whole at its step
                // 0, behind the barrier (B) above that ends the previous
                // tile, and waited for at once.
                stage_x_tile<S, Real, false>(xs, amps, base, x, x_offsets, x_cells, chunk_offset);
                __pipeline_commit();
                __pipeline_wait_prior(0);
                __syncthreads();
            }
            if constexpr (!kXJoinsNextGroup && !S::kDirectA) __pipeline_commit();  // possibly empty: one group a step

            const int kc = (q % S::kChunksPerPass) * S::kChunk;
            if constexpr (S::kDirectA) {
                // Step q's fragments, loaded a step ago; the next step's
                // (in this tile or the next) are in flight during its products.
                const MatrixFragments<S> a = next_a;
                if (q + 1 < S::kSteps || has_next) {
                    load_matrix_fragments<S>(next_a, images, q + 1 < S::kSteps ? q + 1 : 0, warp_row);
                }
                multiply_chunk<S, S::kXStride>(acc, a, xs, col0 + g, kc + x_unit);
                // The X prefetch, behind the products it no longer holds up,
                // and the split barrier of the last pass (x_barrier_step):
                // its phases are the steps kSteps - kChunksPerPass ..
                // kSteps - 2, each complete when every thread has done that
                // step's products, and the next step waits for it before its
                // copies overwrite the rows those products read.
                if (has_next && q > S::kSteps - S::kChunksPerPass) {
                    split_barrier_wait(split, split_parity);
                    split_parity ^= 1u;
                }
                if (chunk >= 0) prefetch_x_chunk<S>(xs, amps, from, chunk, x, x_offsets, x_cells, chunk_offset);
                if constexpr (!kXJoinsNextGroup) __pipeline_commit();  // possibly empty: one group a step
                if (has_next && q >= S::kSteps - S::kChunksPerPass && q <= S::kSteps - 2) split_barrier_arrive(split);
            } else {
                const double2* const mt =
                    ms + stage_read * S::kStageEntries + (warp_row0 / 2 + g) * S::kPairStride + t;
                multiply_chunk<S, S::kXStride, dmma_by_product<S, Real>()>(acc, mt, xs, col0 + g,
                                                                            kc + x_unit);
                stage_read = stage_read == S::kStages - 1 ? 0 : stage_read + 1;
            }

            if (q % S::kChunksPerPass == S::kChunksPerPass - 1) {
                // End of a pass: its rows are final. Every thread passed
                // barrier (B) of the tile's step that made its last chunk of
                // X visible, so the whole X tile was read from global memory
                // before any of it is overwritten here.
                store_pass<S, Real, kNeighbours>(amps, layout, base, (q / S::kChunksPerPass) * S::kPassRows,
                                                 lane_row_offset, col_offset, acc);
            }
        }
        base = next_base;
    }
    // Only empty groups can be pending, and no copy waits uncommitted (with
    // kXJoinsNextGroup, the last tile prefetches nothing).
    __pipeline_wait_prior(0);
}

// One tile's steps in the kernels whose stages hold the whole matrix (step
// q's image in stage q: the raw and ring kernels): the products of X (at
// xs) by each chunk, and each pass's rows stored once final. No step needs
// a barrier. Not unrolled, as in the first kernel: ptxas spilled 24 bytes
// in the raw kernel.
template <class S, class Real, bool kNeighbours>
__device__ __forceinline__ void multiply_tile_by_whole_matrix(MmaAccumulators<S>& acc, const double2* ms,
                                                              const double2* xs, const WarpPlace<S>& place,
                                                              DeviceComplex<Real>* amps, const TileLayout& layout,
                                                              Index base, const Index (&lane_row_offset)[2],
                                                              const Index (&col_offset)[S::kTileCols][2]) {
#pragma unroll 1
    for (int q = 0; q < S::kSteps; ++q) {
        multiply_chunk<S, S::kXStride>(
            acc, ms + q * S::kStageEntries + (place.warp_row0 / 2 + place.g) * S::kPairStride + place.t, xs,
            place.col0 + place.g,
            q % S::kChunksPerPass * S::kChunk + place.x_unit);
        if (q % S::kChunksPerPass == S::kChunksPerPass - 1) {
            store_pass<S, Real, kNeighbours>(amps, layout, base, (q / S::kChunksPerPass) * S::kPassRows,
                                             lane_row_offset, col_offset, acc);
        }
    }
}

// Float k = 4, 5 (RawX shapes). Their tiles are small (2048 amplitudes at k
// = 5, 16 KiB) and take one or two steps, so the first kernel's X prefetch,
// chunk by chunk during a tile's last pass, has no room, and its step 0
// waited for the whole tile: 16 KiB of loads, then nothing in flight while
// the tile was multiplied. Float k = 5 ran there at the time per tile of
// double k = 5, for half the bytes: 0.43 to 0.51 of the floor. Here the
// stages hold the whole matrix, copied once, so the steps need neither
// copies nor barriers, and the commit groups carry only the raw copies of
// the next kRawTiles tiles, one group a tile: the loads of two tiles are in
// flight while one is multiplied. A tile's turn begins with two barriers,
// around the widening of its raw copy into X.
// Measured on an H100 (float, n = 28, k = 5, fraction of the floor, low /
// high / scattered targets, tensor cores forced, alternating with the first
// kernel and the FMA kernels): in one command (two runs each), the first
// kernel 0.50 / 0.40 / 0.43, this one 0.75-0.83 / 0.68-0.70 / 0.85-0.86,
// the register kernels 0.61-0.63 / 0.73-0.79 / 0.66; in another (three runs
// each) this one 0.97-1.00 / 0.69-0.74 / 0.69-0.83, with pair_stores on high
// targets 0.79-0.83, the register kernels 0.66-0.67 / 0.85-0.87 /
// 0.60-0.62. So float k = 5 takes it where a target is among the four
// lowest qubits (cuda/apply_matrix.cuh). Three raw tiles measured level with
// two; the first kernel with one raw tile ahead (a third matrix stage, so
// that the copy, issued at step 0, had the tile's two steps to land) 0.83 /
// 0.65 / 0.85, as two. Float k = 4 here: 1.11 / 0.73-0.79 / 0.83 against
// 1.08-1.09 / 1.13 / 1.08 on the register kernel, which it keeps.
template <class S, bool kNeighbours>
__global__ void __launch_bounds__(kMmaThreads, S::kMinBlocks)
    apply_matrix_mma_raw_kernel(float2* amps, const double2* __restrict__ images,
                                const __grid_constant__ TileLayout layout) {
    static_assert(S::kRawX, "a RawX shape");
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const auto [xs, ms, xb, raw, x_offsets, chunk_offset, x_cells] = MmaShared<S>(shared_bytes);

    const WarpPlace<S> place;
    const int columns = 1 << layout.num_free;  // kColumns, fewer only for small states

    Index col_offset[S::kTileCols][2];
    Index lane_row_offset[2];
    const XStaging x = set_up_one_block<S, float>(layout, place, x_offsets, x_cells, chunk_offset, col_offset,
                                                  lane_row_offset);

    // Prologue: the whole matrix (step q's image in stage q) and the first
    // tile's X in one commit group, then one group for each of the next
    // kRawTiles tiles' raw copies (tile i of the block into slot i %
    // kRawTiles), empty where the block has no such tile.
    const Index stride = gridDim.x;
    Index tile = blockIdx.x;  // the grid is never larger than num_tiles
#pragma unroll
    for (int q = 0; q < S::kSteps; ++q) copy_matrix_chunk<S>(ms, images, q, q);
    stage_first_x_tile<S, float>(xs, amps, tile_base(layout, tile), columns, x, x_offsets, x_cells, chunk_offset);
    __pipeline_commit();
#pragma unroll
    for (int i = 1; i <= S::kRawTiles; ++i) {
        const Index ahead = tile + i * stride;
        if (ahead < layout.num_tiles) {
            issue_raw_x<S>(raw + i % S::kRawTiles * S::kRawTileEntries, amps, tile_base(layout, ahead), x, x_offsets,
                           chunk_offset);
        }
        __pipeline_commit();
    }
    __pipeline_wait_prior(S::kRawTiles);
    __syncthreads();  // the matrix and the first tile's X from every thread are visible

    MmaAccumulators<S> acc;
    clear_accumulators<S>(acc);
    for (int i = 0; tile < layout.num_tiles; tile += stride, ++i) {
        const Index base = tile_base(layout, tile);
        if (i > 0) {
            float2* const slot = raw + i % S::kRawTiles * S::kRawTileEntries;
            // The tile's raw copy: kRawTiles - 1 groups were committed after it.
            __pipeline_wait_prior(S::kRawTiles - 1);
            __syncthreads();  // every thread is done with the previous tile's products, which read X
            widen_raw_x<S>(xs, slot, x, x_cells);
            // The slot just read takes the tile kRawTiles turns ahead.
            const Index ahead = tile + S::kRawTiles * stride;
            if (ahead < layout.num_tiles) {
                issue_raw_x<S>(slot, amps, tile_base(layout, ahead), x, x_offsets, chunk_offset);
            }
            __pipeline_commit();  // possibly empty: one group a tile, for the count above
            __syncthreads();      // the tile's X from every thread is visible
        }
        multiply_tile_by_whole_matrix<S, float, kNeighbours>(acc, ms, xs, place, amps, layout, base, lane_row_offset,
                                                             col_offset);
    }
    __pipeline_wait_prior(0);  // only empty groups can be pending
}

// Double k = 4, 5 (XSlots shapes). The first kernel at double k = 5 staged
// each tile whole at its step 0 and waited for it (its two steps leave the
// chunk prefetch no room), so a block had nothing in flight while it
// multiplied; on an H200, where a tile's copy takes about as long as its
// products, that cost 0.66 to 0.73 of the floor. Here, as in the raw
// kernel, the stages hold the whole matrix, copied once, and the tiles'
// X takes turns in kXSlots slots: tile i of the block in slot i % kXSlots,
// the next kXSlots - 1 tiles in flight (by cp.async, straight into X's
// layout, one commit group a tile) while tile i is multiplied. A tile's
// turn begins with one barrier; its steps need none.
template <class S, bool kNeighbours>
__global__ void __launch_bounds__(kMmaThreads, S::kMinBlocks)
    apply_matrix_mma_ring_kernel(double2* amps, const double2* __restrict__ images,
                                 const __grid_constant__ TileLayout layout) {
    static_assert(S::kXSlots >= 2, "an XSlots shape");
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const auto [xs, ms, xb, raw, x_offsets, chunk_offset, x_cells] = MmaShared<S>(shared_bytes);

    const WarpPlace<S> place;
    const int columns = 1 << layout.num_free;  // kColumns, fewer only for small states

    Index col_offset[S::kTileCols][2];
    Index lane_row_offset[2];
    const XStaging x = set_up_one_block<S, double>(layout, place, x_offsets, x_cells, chunk_offset, col_offset,
                                                   lane_row_offset);

    // Prologue: the whole matrix (step q's image in stage q) and the first
    // tile's X in one commit group, then one group for each of the next
    // kXSlots - 1 tiles (tile i of the block into slot i), empty where the
    // block has no such tile. Only a state of one tile stages repeated
    // cells (stage_first_x_tile): the tiles ahead exist only in larger ones.
    const Index stride = gridDim.x;
    Index tile = blockIdx.x;  // the grid is never larger than num_tiles
#pragma unroll
    for (int q = 0; q < S::kSteps; ++q) copy_matrix_chunk<S>(ms, images, q, q);
    stage_first_x_tile<S, double>(xs, amps, tile_base(layout, tile), columns, x, x_offsets, x_cells, chunk_offset);
    __pipeline_commit();
#pragma unroll
    for (int i = 1; i < S::kXSlots; ++i) {
        const Index ahead = tile + i * stride;
        if (ahead < layout.num_tiles) {
            stage_x_tile<S, double, false>(xs + i * S::kXSlotEntries, amps, tile_base(layout, ahead), x, x_offsets,
                                           x_cells, chunk_offset);
        }
        __pipeline_commit();
    }
    __pipeline_wait_prior(S::kXSlots - 1);
    __syncthreads();  // the matrix and the first tile's X from every thread are visible

    MmaAccumulators<S> acc;
    clear_accumulators<S>(acc);
    for (int i = 0; tile < layout.num_tiles; tile += stride, ++i) {
        const Index base = tile_base(layout, tile);
        const double2* const xt = xs + i % S::kXSlots * S::kXSlotEntries;
        if (i > 0) {
            // Tile i's group (the i-th): kXSlots - 2 groups were committed after it.
            __pipeline_wait_prior(S::kXSlots - 2);
            __syncthreads();  // tile i's X from every thread is visible; every thread is done with
                              // tile i - 1's products, so its slot takes the tile kXSlots - 1 turns ahead
            const Index ahead = tile + (S::kXSlots - 1) * stride;
            if (ahead < layout.num_tiles) {
                stage_x_tile<S, double, false>(xs + (i - 1) % S::kXSlots * S::kXSlotEntries, amps,
                                               tile_base(layout, ahead), x, x_offsets, x_cells, chunk_offset);
            }
            __pipeline_commit();  // possibly empty: one group a tile, for the count above
        }
        // Every thread passed the barrier that made all of tile i's X
        // visible, so the tile was read from global memory before its
        // passes' stores overwrite it.
        multiply_tile_by_whole_matrix<S, double, kNeighbours>(acc, ms, xt, place, amps, layout, base, lane_row_offset,
                                                              col_offset);
    }
    __pipeline_wait_prior(0);  // only empty groups can be pending
}

// The kernel shape S runs on.
template <class S, class Real, bool kNeighbours>
constexpr auto mma_kernel() {
    if constexpr (S::kRawX) {
        static_assert(std::is_same<Real, float>::value, "the raw kernel holds float amplitudes");
        return apply_matrix_mma_raw_kernel<S, kNeighbours>;
    } else if constexpr (S::kXSlots > 1) {
        static_assert(std::is_same<Real, double>::value, "the ring kernel holds double amplitudes");
        return apply_matrix_mma_ring_kernel<S, kNeighbours>;
    } else {
        return apply_matrix_mma_kernel<S, Real, kNeighbours>;
    }
}

template <class S, class Real, bool kNeighbours>
void launch_mma_kernel(std::complex<Real>* amps, const TargetOrder& order, const TileLayout& layout,
                       const Matrix& matrix) {
    const auto kernel = mma_kernel<S, Real, kNeighbours>();
    allow_shared_memory(kernel, S::kSharedBytes,
                        ("the tensor-core kernel for " + std::to_string(S::kK) + " targets").c_str());
    const unsigned blocks = resident_grid(kernel, kMmaThreads, S::kSharedBytes, layout.num_tiles);
    const DeviceArray<double2> images = matrix_images<S>(order, matrix);
    kernel<<<blocks, kMmaThreads, S::kSharedBytes>>>(as_device(amps), images.data(), layout);
    QMARG_CHECK_LAUNCH(mma_kernel);
}

template <class S, class Real>
void launch_mma_blocks(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    const TargetOrder order = target_order(gate);
    const TileLayout layout = mma_tile_layout<Real>(gate, order, S::kColumnBits);
    if constexpr (pair_stores<S, Real>()) {
        if (layout.free_stride[0] == 1) {  // 0 where there are no free qubits
            return launch_mma_kernel<S, Real, true>(amps, order, layout, matrix);
        }
    }
    launch_mma_kernel<S, Real, false>(amps, order, layout, matrix);
}

// k = 9 and 10 run on clusters wherever the GPU can hold one, double k = 6
// with no control among qubits 0..2 (mma_streams_pay) on warp streams
// (apply_matrix_mma_stream.cu) wherever the GPU is sm_90 with room for them;
// everything else, and all of it before sm_90, on the one-block kernel.
template <int K, class Real>
void launch_mma(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    if constexpr (K >= 9) {
        if (apply_matrix_mma_on_clusters(amps, gate, matrix)) return;
    }
    if constexpr (K == 6 && std::is_same<Real, double>::value) {
        if (mma_streams_pay(gate) && apply_matrix_mma_streams(amps, gate, matrix)) return;
    }
    launch_mma_blocks<MmaShape<K, Real>, Real>(amps, gate, matrix);
}

// c (16 x 8) = a (16 x 16) * b (16 x 8) by one warp through the fragment
// helpers, every element placed and read back by its documented position.
__global__ void dmma_fragment_product_kernel(const double* a, const double* b, double* c) {
    const int lane = threadIdx.x;
    double fa[8], fb[4], fc[4] = {0.0, 0.0, 0.0, 0.0};
    for (int i = 0; i < 8; ++i) fa[i] = a[dmma_a_row(lane, i) * kDmmaDepth + dmma_a_col(lane, i)];
    for (int i = 0; i < 4; ++i) fb[i] = b[dmma_b_row(lane, i) * kDmmaCols + dmma_b_col(lane)];
    dmma_16x8x16(fc, fa, fb);
    for (int i = 0; i < 4; ++i) c[dmma_c_row(lane, i) * kDmmaCols + dmma_c_col(lane, i)] = fc[i];
}

}  // namespace

bool mma_available() { return compute_capability_major() >= 8; }

namespace {

// Calls launch(std::integral_constant<int, K>()) for K = gate.num_targets.
template <class Launch>
void for_targets(const GateQubits& gate, const char* what, Launch launch) {
    switch (gate.num_targets) {
        case 4: return launch(std::integral_constant<int, 4>());
        case 5: return launch(std::integral_constant<int, 5>());
        case 6: return launch(std::integral_constant<int, 6>());
        case 7: return launch(std::integral_constant<int, 7>());
        case 8: return launch(std::integral_constant<int, 8>());
        case 9: return launch(std::integral_constant<int, 9>());
        case 10: return launch(std::integral_constant<int, 10>());
        default:
            throw Error(std::string(what) + ": " + std::to_string(gate.num_targets) + " targets; this path takes 4.." +
                        std::to_string(kMaxGateTargets));
    }
}

}  // namespace

template <class Real>
void apply_matrix_mma(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    for_targets(gate, "apply_matrix_mma", [&](auto k) { launch_mma<decltype(k)::value, Real>(amps, gate, matrix); });
}
template void apply_matrix_mma<float>(std::complex<float>*, const GateQubits&, const Matrix&);
template void apply_matrix_mma<double>(std::complex<double>*, const GateQubits&, const Matrix&);

template <class Real>
void apply_matrix_mma_one_block(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    for_targets(gate, "apply_matrix_mma_one_block", [&](auto k) {
        launch_mma_blocks<MmaShape<decltype(k)::value, Real>, Real>(amps, gate, matrix);
    });
}
template void apply_matrix_mma_one_block<float>(std::complex<float>*, const GateQubits&, const Matrix&);
template void apply_matrix_mma_one_block<double>(std::complex<double>*, const GateQubits&, const Matrix&);

std::vector<double> dmma_fragment_product(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != kDmmaRows * kDmmaDepth || b.size() != kDmmaDepth * kDmmaCols) {
        throw Error("dmma_fragment_product: a must be 16 x 16 and b 16 x 8, row-major (got " +
                    std::to_string(a.size()) + " and " + std::to_string(b.size()) + " entries)");
    }
    if (!mma_available()) throw Error("dmma_fragment_product: FP64 tensor-core products need compute capability 8.0");
    DeviceArray<double> da(a.size(), "fragment check A"), db(b.size(), "fragment check B"),
        dc(kDmmaRows * kDmmaCols, "fragment check C");
    copy_to_device(da.data(), a.data(), a.size() * sizeof(double));
    copy_to_device(db.data(), b.data(), b.size() * sizeof(double));
    dmma_fragment_product_kernel<<<1, 32>>>(da.data(), db.data(), dc.data());
    QMARG_CHECK_LAUNCH(dmma_fragment_product_kernel);
    std::vector<double> c(kDmmaRows * kDmmaCols);
    copy_to_host(c.data(), dc.data(), c.size() * sizeof(double));
    return c;
}

}  // namespace gpu
}  // namespace qmarg
