// The cluster form of the tensor-core gate kernel (cuda/apply_matrix_mma.cu
// describes the design it shares): k = 9 and 10 on sm_90.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <string>
#include <type_traits>

#include "apply_matrix_mma_common.cuh"
#include "launch.cuh"

namespace qmarg {
namespace gpu {
namespace {

// The cluster form (S::kCluster blocks per tile, sm_90). Block r of a
// cluster holds X rows [row0, row0 + kRows), row0 = r kRows, in xs (indexed
// from row0), and computes Y's rows there. A step's chunk of X, held by one
// block of the cluster, is read from that block's shared memory two steps
// ahead (into registers, while the current chunk is multiplied) and stored
// into a local stage `xb` one step ahead:
//   xb[b][c * kBStride + kk] = unit kc + kk of X's column c (the planar
//     layout of xs, x_real_slot) for step q's chunk at kc, b = q % 2, from
//     barrier (B) of step q until barrier (B) of step q + 1.
// Cluster barriers order the tiles: (C1) after every block staged its rows
// of a tile (no block reads a peer's rows before they landed), (C2) after
// the tile's last step (no block overwrites its rows while a peer may still
// read them). Each block overwrites in global memory only the rows it
// staged itself, after (C1), so the in-place update stays safe.
//
// Each tile's X is loaded whole before (C1), with no products in flight:
// prefetch_x_tile asks L2 for all of the block's rows of it, then
// load_x_tile loads them through registers, four chunks at a time. Without
// the prefetch each batch of four waited for DRAM in turn, and that bound
// the kernel: with every tile's X loads but the first left out and (C1),
// (C2) relaxed (timing only) it took k = 9 83-90 ms against 90-97, k = 10
// 174-179 against 179-192 (double, n = 30, four layouts, two runs each,
// alternating); ncu (n = 26, k = 9) put 89 % of the warp samples in the step
// loop and 8 % in load_x_tile. Step 0's fragments are loaded after the X
// loads, not during the tile before, so that those have the registers (with
// X by cp.async, k = 9 took 82.4-83.3 ms with the fragments loaded before
// and 79.8-82.8 after, k = 10 164.7-165.7 and 159.3-161.6).
// Measured on an H100 (double n = 30, low and scattered targets, two runs
// each, alternating, ms; float n = 28, low):
//                        k = 9        k = 10
//   before               91.0-91.5    174.5-176.7
//   X by cp.async        79.8-82.8    159.3-161.6
//   prefetch (this)      82.7-83.6    159.3-160.8
// (the first two rows from one command, the last two from another, with
// cp.async at 79.9-82.1 and 157.5-159.9 there). Float: loading step 0's
// fragments after the X loads took k = 9 20.0-21.0 -> 19.7-20.0 ms, k = 10
// 42.0-42.9 -> 39.2-40.1, and the prefetch added nothing (19.1-19.3 and
// 38.6-39.0 either way). Copying X by cp.async (every copy of the tile in
// flight at once, waited for before (C1)) is 1 to 3 % faster than the
// prefetch, and correct on the GPU tests, but compute-sanitizer racecheck
// reports hazards between its copies and the peers' reads of the rows: on
// states of one tile too, where the copies complete (cp.async.wait_group,
// then __syncthreads and the cluster barrier) before any read, and where
// ordinary stores of the same values report none. Rewriting every copied
// cell with an ordinary store after the wait silenced it, at 1.5 to 3 %
// (k = 9 81.2-84.5 ms, k = 10 159.4-162.2): no faster than the prefetch,
// which keeps the stores racecheck can follow.
// Tried and dropped, each correct on the GPU tests:
// - Prefetching instead: in the last pass, once every block has read block
//   r's rows, r copies its rows of the next tile into xs by cp.async, two
//   chunks a step, ordered by two split cluster-barrier phases per block and
//   tile (rows consumed: relaxed arrival after the last put_chunk of them;
//   rows stored: release arrival once the copies are complete, waited for
//   before the first fetch of them). k = 9 6 to 12 % slower, k = 10 10 to
//   14 %. The step loop grew from 229 to 287 instructions a warp (ncu); a
//   second form, one bit test a step for the phases, was as slow, and so
//   was it with the copies or the phases left out (timing only): the cost
//   is the loop's code, not the copies or the barriers.
// - Batches of 8 chunks in load_x_tile instead of 4: ptxas spilled 72 to 92
//   bytes in double, 5 to 10 % slower at k = 9 and 10; float level.
// - The same prefetch with the tile's steps cut at compile time into runs
//   between the phase events, so that a plain step carries no test: at k =
//   9 correct and 1 to 2.5 % faster (double n = 30, four layouts, two runs
//   each, alternating: 88.2-91.2 against 89.8-93.1 ms), at k = 10 (four
//   blocks, more events) 156 bytes of spills and 3 to 7 % slower.
//   Taken apart in two more commands (timing only, k = 9, ms, each with
//   the committed kernel alternating): without its copies 85.1-88.1,
//   without its phases 87.0-90.2, whole 87.3-90.8, committed 89.5-91.8;
//   the committed kernel with the X loads of every tile but the first left
//   out, (C1) and (C2) kept, 83.7-86.7 against 89.5-91.9 (k = 10
//   168.9-174.9 against 177.4-183.3), and with (C1), (C2) relaxed to block
//   barriers, loads kept, 88.5-90.6 (k = 10 0 to 2 % faster). So the
//   loads' latency is most of the bound above; the copies, spread over the
//   products, cost about half of it back, and the phases nothing.
//   One build of it, with always_inline on the step's lambda, failed the
//   GPU tests at k = 9 (n = 17 and 21: results unrelated to the reference)
//   where the same code without the attribute passed; that was not
//   understood, one more reason to leave the form out.
// - The first 4 of the next tile's chunks loaded into registers before
//   (C2), with the accumulators cleared at each tile's start (so that they
//   are free there) and claims two turns ahead (so that the next unit is
//   known before (C2)): correct, but ptxas spilled 120 bytes, and k = 9
//   took 95.6-98.9 ms against 89.1-91.7, k = 10 186.3-193.0 against
//   175.8-182.6 (double n = 30, two runs, alternating). Without the early
//   loads (no spills, the rest as described) still 93.6-95.6 and
//   181.4-187.5.
//
// The work is `units` units of kTilesPerUnit consecutive tiles, claimed one
// at a time from *next_unit (zeroed before the launch) by thread 0 of block
// 0, so that grids of different shapes can share them (a companion grid,
// launch_mma_clusters) and a cluster that starts late takes fewer. Against
// the former fixed share (tiles c, c + clusters, ...), measured on an H100
// (fraction of the floor, two runs each, alternating, four layouts): double
// n = 30, k = 9 0.800-0.831 -> 0.827-0.842, float n = 28, k = 9 0.860-0.892
// -> 0.868-0.896; k = 10 level to 2 % faster without its companion. Claims
// run one unit ahead: unit_slot[p] holds the unit a cluster runs next, p the
// parity of the current unit's turn; block 0 writes it after (C1) of the
// current unit's first tile and every block reads it after the unit's last
// (C2). It is written again two turns later, after (C1), by which time every
// block has read it.
template <class S, class Real, int kTilesPerUnit>
__global__ void __launch_bounds__(kMmaThreads, S::kMinBlocks)
    apply_matrix_mma_cluster_kernel(DeviceComplex<Real>* amps, const double2* __restrict__ all_images,
                                    const __grid_constant__ TileLayout layout, Index units, Index* next_unit) {
    static_assert(S::kCluster > 1 && !S::kPrefetchX && S::kDirectA, "a cluster shape");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    launch_dependents();  // a companion grid may start on the multiprocessors this one leaves idle
    namespace cg = cooperative_groups;
    const cg::cluster_group cluster = cg::this_cluster();
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const MmaShared<S> shared(shared_bytes);
    const auto [xs, ms, xb, raw, x_offsets, chunk_offset, x_cells] = shared;
    Index* const unit_slot = shared.unit_slots();

    const WarpPlace<S> place;
    const int g = place.g, t = place.t, warp_row0 = place.warp_row0, col0 = place.col0, x_unit = place.x_unit;
    const int columns = 1 << layout.num_free;  // kColumns, fewer only for small states
    const int rank = static_cast<int>(cluster.block_rank());
    const int row0 = rank * S::kRows;
    // This block's steps of the matrix's fragments (make_fragment_images_kernel).
    const double2* images = all_images + static_cast<std::size_t>(rank) * S::kSteps * S::kStepImageEntries;
    const int warp_row = threadIdx.x / 32 % S::kWarpRows;
    MatrixFragments<S> next_a;  // the next step's A fragments

    const XStaging x = make_x_staging<S, Real>(layout, row0, x_offsets, x_cells, chunk_offset);
    Index col_offset[S::kTileCols][2];
    Index lane_row_offset[2];
    lane_offsets<S>(layout, warp_row0, col0, g, t, col_offset, lane_row_offset);

    // This thread's share of a chunk of X: elements threadIdx.x + e kMmaThreads,
    // row (within the chunk) e % kChunk, column e / kChunk.
    constexpr int kBPerThread = S::kXChunkSize / kMmaThreads;
    auto fetch_chunk = [&, xs = xs](int q, double2 (&v)[kBPerThread]) {
        const int kc = (q % S::kChunksPerPass) * S::kChunk;
        const double2* from = cluster.map_shared_rank(xs, kc / S::kRows) + (kc % S::kRows);
#pragma unroll
        for (int i = 0; i < kBPerThread; ++i) {
            const int e = i * kMmaThreads + threadIdx.x;
            v[i] = from[(e / S::kChunk) * S::kXStride + e % S::kChunk];
        }
    };
    auto put_chunk = [&, xb = xb](int b, const double2 (&v)[kBPerThread]) {
#pragma unroll
        for (int i = 0; i < kBPerThread; ++i) {
            const int e = i * kMmaThreads + threadIdx.x;
            xb[b * S::kColumns * S::kBStride + (e / S::kChunk) * S::kBStride + e % S::kChunk] = v[i];
        }
    };

    const bool claims = rank == 0 && threadIdx.x == 0;
    auto claim = [next_unit] { return atomicAdd(reinterpret_cast<unsigned long long*>(next_unit), 1ull); };
    if (claims) unit_slot[0] = claim();
    cluster.sync();  // the staging tables are complete, and block 0's unit_slot[0] is visible

    MmaAccumulators<S> acc;
    clear_accumulators<S>(acc);

    // Every block of a cluster runs the same tiles.
    Index unit = *cluster.map_shared_rank(&unit_slot[0], 0);
    for (int parity = 1; unit < units; parity ^= 1) {
        for (int sub = 0; sub < kTilesPerUnit; ++sub) {
            const Index base = tile_base(layout, unit * kTilesPerUnit + sub);
            prefetch_x_tile<S, Real>(amps, base, x, x_offsets, chunk_offset);
            load_x_tile<S, Real>(xs, amps, base, x, x_offsets, x_cells, chunk_offset);
            // Step 0's fragments, loaded here rather than during the step
            // before (the last of the tile before), so that the X loads above
            // have their registers.
            load_matrix_fragments<S>(next_a, images, 0, warp_row);
            if (columns < S::kColumns) zero_missing_columns<S>(xs, columns);
            // Claimed here, so that the claim is in flight while the cluster
            // waits at (C1), and held in a register only until then.
            const Index claimed = claims && sub == 0 ? claim() : 0;
            cluster.sync();  // (C1) every block's rows of X are stored
            if (claims && sub == 0) unit_slot[parity] = claimed;
            // X chunk q + 1 is read from its block during step q - 1 and
            // stored at step q: a whole step of products hides the remote
            // latency.
            double2 v[kBPerThread];
            fetch_chunk(0, v);
            put_chunk(0, v);
            if (S::kSteps > 1) fetch_chunk(1, v);
#pragma unroll 1
            for (int q = 0; q < S::kSteps; ++q) {
                __syncthreads();  // (B) X chunk q is visible; every thread is done with the previous
                                  //     step, whose X stage is written next
                if (q + 1 < S::kSteps) put_chunk((q + 1) & 1, v);
                if (q + 2 < S::kSteps) fetch_chunk(q + 2, v);

                // Step q's fragments, loaded a step ago; the next step's are
                // in flight during its products.
                const MatrixFragments<S> a = next_a;
                if (q + 1 < S::kSteps) load_matrix_fragments<S>(next_a, images, q + 1, warp_row);
                multiply_chunk<S, S::kBStride>(acc, a, xb + (q & 1) * S::kColumns * S::kBStride, col0 + g, x_unit);

                if (q % S::kChunksPerPass == S::kChunksPerPass - 1) {
                    store_pass<S, Real, false>(amps, layout, base, row0 + (q / S::kChunksPerPass) * S::kPassRows,
                                               lane_row_offset, col_offset, acc);
                }
            }
            cluster.sync();  // (C2)
        }
        unit = *cluster.map_shared_rank(&unit_slot[parity], 0);
    }
    cluster.sync();  // block 0 ends after every block has read its unit_slot
    // A companion grid ends after the grid it runs beside (a no-op in a grid
    // launched without programmatic dependence), so that what the stream
    // runs next waits for both.
    wait_for_previous_kernel();
#else
    // The dispatch runs this kernel only on sm_90 and later; the trap makes
    // a wrong dispatch loud, not silent.
    (void)amps;
    (void)all_images;
    (void)units;
    (void)next_unit;
    __trap();
#endif
}

// Shapes with clusters: a tile of 32 columns shared by two blocks at k = 9
// and four at k = 10, each holding 256 rows of X (133 KiB), so the matrix's
// L2 traffic is 1/16 byte per flop, as at k = 8, instead of 1/8 and 1/4 on
// one block. Each warp computes a 16 x 32 tile of Y (the 8 warps stacked
// along a pass of 128 rows; apply_matrix_mma.cu has why and the
// measurements), and reads every column of the step's X stage. Each lane
// loads its A fragments from L2 a step ahead (DirectA), so the blocks keep
// no matrix stages: with the two stages of 16-deep chunks these shapes had
// before (222 KiB), double n = 30, k = 10 read 0.85-0.87 of the floor
// against 0.89 with the fragments from L2 (two runs each, alternating), k =
// 9 0.83-0.85 either way, float n = 28, k = 9 and 10 0.85-0.90 against
// 0.93-1.01 (one run each).
//   k   cluster  warp tile  columns  pass rows  chunk  shared
//   9      2      16 x 32      32       128       16    150 KiB
//  10      4      16 x 32      32       128       16    150 KiB
// Measured on an H100 with 16 x 16 warp tiles (double, n = 30, TFLOP/s,
// against the one-block kernel): k = 10 20.9 -> 34.1 (low targets), 20.8 ->
// 33.4 (high). The chunk of X from a peer is read two steps ahead; reading
// it one step ahead gave 25.7. Clusters of 8 with 64 columns gave 25.4, and
// with 32 columns and 32-deep chunks 32.6. At k = 9 two blocks with 32
// columns gave 34.4, four with 32-deep chunks 33.3, against 34.8 for one
// block; with 16 x 32 warp tiles two blocks are 10 to 12 % faster than the
// one-block kernel's best form (n = 28: 41.5 -> 46.3 TFLOP/s on low
// targets).
template <int K>
using MmaClusterShape = MmaShapeOf<K, 8, 4, kDmmaDepth, 1, 1, false, K == 9 ? 2 : 4, false, false, 1, true>;

// The companion of k = 10's clusters of four, for the multiprocessors they
// leave idle: pairs of blocks on tiles of 16 columns, 512 rows a block. An
// H100's 66 pairs of multiprocessors (TPCs) are shared unevenly by its
// processing clusters (GPCs), and clusters of four leave one pair idle in
// each GPC with an odd number of them: 30 clusters took 120 of our H100's
// 132 multiprocessors (ncu: "Max Active Clusters"),
// and a launch runs only as fast as the clusters it gets (an earlier
// benchmark file, from another H100, has k = 10 7 % slower, as 28 clusters
// would be). The companion grid starts on the idle pairs while the clusters of
// four run (programmatic dependent launch) and takes units (32 columns, two
// of its tiles) from the same counter; it took 7.5 % of them at n = 30. Its
// fragment images are the clusters' own (the same pass rows, warp rows,
// chunks and steps in the same order: step i names rows 128 (i / 64) on of
// chunk i % 64; make_fragment_images_kernel), so
// the L2 holds one copy of the matrix: with a second one the companion
// gained nothing in double and lost 5 % in float. Measured on an H100
// (low targets, fraction of the floor, two runs each, alternating): double
// n = 30 0.805-0.811 -> 0.857, float n = 28 0.835-0.841 -> 0.886-0.890.
// On its own it runs at 0.77 of the clusters of four per multiprocessor
// (double, n = 30: 0.68 of the floor on 132 multiprocessors against 0.80 on
// 120); clusters of eight (64 columns, 128 rows a block) got 15 clusters
// and spilled: 0.48.
template <int K>
using MmaCompanionShape = MmaShapeOf<K, 8, 2, kDmmaDepth, 1, 1, false, 2, false, false, 1, true>;
template <class S>
constexpr bool has_companion() {
    return S::kK == 10;
}
// Tiles of the companion a unit (a tile of S) holds.
template <class S>
constexpr int companion_tiles() {
    using C = MmaCompanionShape<S::kK>;
    static_assert(C::kDim == S::kDim && C::kPassRows == S::kPassRows && C::kChunk == S::kChunk &&
                      C::kWarpRows == S::kWarpRows && C::kImageEntries == S::kImageEntries,
                  "the companion reads the same fragment images");
    return S::kColumns / C::kColumns;
}

// The launch configuration of the cluster kernel for shape S, with a grid of
// `clusters` clusters; `attributes` must outlive it. A companion grid may
// start while the grid before it in the stream runs.
template <class S>
cudaLaunchConfig_t cluster_launch_config(cudaLaunchAttribute (&attributes)[2], Index clusters,
                                         bool companion = false) {
    attributes[0].id = cudaLaunchAttributeClusterDimension;
    attributes[0].val.clusterDim.x = S::kCluster;
    attributes[0].val.clusterDim.y = 1;
    attributes[0].val.clusterDim.z = 1;
    attributes[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[1].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.attrs = attributes;
    config.numAttrs = companion ? 2 : 1;
    config.blockDim = dim3(kMmaThreads);
    config.dynamicSmemBytes = S::kSharedBytes;
    config.gridDim = dim3(static_cast<unsigned>(clusters * S::kCluster));
    return config;
}

// The cluster kernel for shape S, allowed its shared memory.
template <class S, class Real, int kTilesPerUnit>
auto cluster_kernel() {
    const auto kernel = apply_matrix_mma_cluster_kernel<S, Real, kTilesPerUnit>;
    allow_shared_memory(kernel, S::kSharedBytes,
                        ("the tensor-core cluster kernel for " + std::to_string(S::kK) + " targets").c_str());
    return kernel;
}

// How many clusters of the cluster kernel for shape S the current GPU holds
// at once: 0 where it cannot run one (before sm_90, which has no clusters, or
// where no GPU processing cluster has S::kCluster free multiprocessors).
template <class S, class Real, int kTilesPerUnit = 1>
int resident_mma_clusters() {
    if (compute_capability_major() < 9) return 0;
    cudaLaunchAttribute attributes[2];
    const cudaLaunchConfig_t config = cluster_launch_config<S>(attributes, 1);
    int clusters = 0;
    QMARG_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, cluster_kernel<S, Real, kTilesPerUnit>(), &config));
    return clusters;
}

// The units of a gate: the tiles of shape S (the companion's tiles, two to
// a unit, must split them) and the fragment images every grid reads.
template <class S, class Real>
struct ClusterWork {
    TargetOrder order;
    TileLayout layout;
    DeviceArray<double2> images;
    DeviceArray<Index> next_unit{1, "the tensor-core clusters' unit counter"};
    ClusterWork(const GateQubits& gate, const Matrix& matrix)
        : order(target_order(gate)),
          layout(mma_tile_layout<Real>(gate, order, S::kColumnBits)),
          images(matrix_images<S>(order, matrix)) {
        QMARG_CUDA_CHECK(cudaMemsetAsync(next_unit.data(), 0, sizeof(Index)));
    }
    Index units() const { return layout.num_tiles; }
};

// Launches `clusters` clusters of shape G (S itself, or its companion) on
// `work`, behind the grid before them in the stream or beside it.
template <class S, class G, class Real>
void launch_cluster_grid(std::complex<Real>* amps, const GateQubits& gate, const ClusterWork<S, Real>& work,
                         Index clusters, bool companion) {
    constexpr int kTilesPerUnit = std::is_same<S, G>::value ? 1 : companion_tiles<S>();
    TileLayout layout = work.layout;
    if constexpr (kTilesPerUnit > 1) {
        layout = mma_tile_layout<Real>(gate, work.order, G::kColumnBits);
        if (work.layout.num_free < S::kColumnBits || layout.num_tiles != work.units() * kTilesPerUnit) {
            throw Error("apply_matrix_mma_on_clusters: the companion's " + std::to_string(layout.num_tiles) +
                        " tiles do not split " + std::to_string(work.units()) + " units of whole tiles");
        }
    }
    cudaLaunchAttribute attributes[2];
    const cudaLaunchConfig_t config = cluster_launch_config<G>(attributes, clusters, companion);
    QMARG_CUDA_CHECK(cudaLaunchKernelEx(&config, cluster_kernel<G, Real, kTilesPerUnit>(), as_device(amps),
                                        static_cast<const double2*>(work.images.data()), layout, work.units(),
                                        work.next_unit.data()));
    QMARG_CHECK_LAUNCH(apply_matrix_mma_cluster_kernel);
}

// Runs the gate on `resident_clusters` clusters of shape S (fewer for small
// states) and, where S has a companion and there is work beyond the
// clusters' first turn, the companion grid on the multiprocessors they leave
// idle. The arrays go back to the stream-ordered pool after both grids.
template <class S, class Real>
void launch_mma_clusters(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix,
                         int resident_clusters) {
    const ClusterWork<S, Real> work(gate, matrix);
    const Index clusters = std::min<Index>(work.units(), resident_clusters);
    launch_cluster_grid<S, S>(amps, gate, work, clusters, false);
    if constexpr (has_companion<S>()) {
        using C = MmaCompanionShape<S::kK>;
        if (work.layout.num_free < S::kColumnBits || work.units() <= clusters) return;
        const Index idle = static_cast<Index>(multiprocessor_count()) - clusters * S::kCluster;
        const Index companions = std::min<Index>(idle / C::kCluster, work.units() - clusters);
        if (companions > 0) launch_cluster_grid<S, C>(amps, gate, work, companions, true);
    }
}

// Runs shape S on clusters: false, with nothing run, where the GPU cannot
// hold one.
template <class S, class Real>
bool launch_if_clusters_fit(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    const int clusters = resident_mma_clusters<S, Real>();
    if (clusters < 1) return false;
    launch_mma_clusters<S, Real>(amps, gate, matrix, clusters);
    return true;
}

}  // namespace

template <class Real>
bool apply_matrix_mma_on_clusters(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    switch (gate.num_targets) {
        case 9: return launch_if_clusters_fit<MmaClusterShape<9>, Real>(amps, gate, matrix);
        case 10: return launch_if_clusters_fit<MmaClusterShape<10>, Real>(amps, gate, matrix);
        default:
            throw Error("apply_matrix_mma_on_clusters: " + std::to_string(gate.num_targets) +
                        " targets; this kernel takes 9 or 10");
    }
}
template bool apply_matrix_mma_on_clusters<float>(std::complex<float>*, const GateQubits&, const Matrix&);
template bool apply_matrix_mma_on_clusters<double>(std::complex<double>*, const GateQubits&, const Matrix&);

template <class Real>
bool apply_matrix_mma_companion_alone(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix) {
    using S = MmaClusterShape<10>;
    using C = MmaCompanionShape<10>;
    if (gate.num_targets != 10) {
        throw Error("apply_matrix_mma_companion_alone: " + std::to_string(gate.num_targets) +
                    " targets; the companion grid takes 10");
    }
    const int resident = resident_mma_clusters<C, Real, companion_tiles<S>()>();
    if (resident < 1) return false;
    const ClusterWork<S, Real> work(gate, matrix);
    launch_cluster_grid<S, C>(amps, gate, work, std::min<Index>(work.units(), resident), false);
    return true;
}
template bool apply_matrix_mma_companion_alone<float>(std::complex<float>*, const GateQubits&, const Matrix&);
template bool apply_matrix_mma_companion_alone<double>(std::complex<double>*, const GateQubits&, const Matrix&);

}  // namespace gpu
}  // namespace qmarg
