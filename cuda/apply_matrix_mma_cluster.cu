// The cluster form of the tensor-core gate kernel (cuda/apply_matrix_mma.cu
// describes the design it shares): k = 9 and 10 on sm_90.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <string>

#include "apply_matrix_mma_common.cuh"

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
template <class S, class Real>
__global__ void __launch_bounds__(kMmaThreads, S::kMinBlocks)
    apply_matrix_mma_cluster_kernel(DeviceComplex<Real>* amps, const double2* __restrict__ all_images,
                                    const __grid_constant__ TileLayout layout) {
    static_assert(S::kCluster > 1 && !S::kPrefetchX, "a cluster shape");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    const cg::cluster_group cluster = cg::this_cluster();
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    const auto [xs, ms, xb, raw, x_offsets, chunk_offset, x_cells] = MmaShared<S>(shared_bytes);

    const WarpPlace<S> place;
    const int g = place.g, t = place.t, warp_row0 = place.warp_row0, col0 = place.col0;
    const int columns = 1 << layout.num_free;  // kColumns, fewer only for small states
    const int rank = static_cast<int>(cluster.block_rank());
    const int row0 = rank * S::kRows;
    // This block's rows of the matrix stream (make_matrix_images).
    const double2* images = all_images + static_cast<std::size_t>(rank) * S::kSteps * S::kStageEntries;

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

    // The cluster's tiles are cluster index + i * cluster count; every block
    // of a cluster runs the same tiles. The matrix stream runs on across
    // tiles as in the one-block kernel.
    const Index clusters = gridDim.x / S::kCluster;
    Index tile = blockIdx.x / S::kCluster;  // the grid never has more clusters than tiles
    copy_first_matrix_chunks<S>(ms, images);
    __syncthreads();  // the staging tables are complete before any thread reads them

    MmaAccumulators<S> acc;
    clear_accumulators<S>(acc);

    int stage_read = 0;
    for (; tile < layout.num_tiles; tile += clusters) {
        const bool has_next = tile + clusters < layout.num_tiles;
        const Index base = tile_base(layout, tile);
        load_x_tile<S, Real>(xs, amps, base, x, x_offsets, x_cells, chunk_offset);
        if (columns < S::kColumns) zero_missing_columns<S>(xs, columns);
        cluster.sync();  // (C1) every block's rows of X are stored
        // X chunk q + 1 is read from its block during step q - 1 and stored
        // at step q: a whole step of products hides the remote latency.
        double2 v[kBPerThread];
        fetch_chunk(0, v);
        put_chunk(0, v);
        if (S::kSteps > 1) fetch_chunk(1, v);
#pragma unroll 1
        for (int q = 0; q < S::kSteps; ++q) {
            __pipeline_wait_prior(S::kStages - 2);
            __syncthreads();  // (B) matrix chunk q and X chunk q are visible; every thread is done with the
                              //     previous step, whose matrix stage and X stage are written next
            {
                const int ahead = q + S::kStages - 1;
                const int stage_write = stage_read == 0 ? S::kStages - 1 : stage_read - 1;
                if (ahead < S::kSteps || has_next) {
                    copy_matrix_chunk<S>(ms, images, ahead < S::kSteps ? ahead : ahead - S::kSteps, stage_write);
                }
            }
            __pipeline_commit();
            if (q + 1 < S::kSteps) put_chunk((q + 1) & 1, v);
            if (q + 2 < S::kSteps) fetch_chunk(q + 2, v);

            multiply_chunk<S, S::kBStride>(acc,
                                           ms + stage_read * S::kStageEntries + (warp_row0 / 2 + g) * S::kPairStride + t,
                                           xb + (q & 1) * S::kColumns * S::kBStride, col0 + g, t);
            stage_read = stage_read == S::kStages - 1 ? 0 : stage_read + 1;

            if (q % S::kChunksPerPass == S::kChunksPerPass - 1) {
                store_pass<S, Real, false>(amps, layout, base, row0 + (q / S::kChunksPerPass) * S::kPassRows,
                                           lane_row_offset, col_offset, acc);
            }
        }
        cluster.sync();  // (C2)
    }
    __pipeline_wait_prior(0);  // only empty groups can be pending
#else
    // The dispatch runs this kernel only on sm_90 and later; the trap makes
    // a wrong dispatch loud, not silent.
    (void)amps;
    (void)all_images;
    __trap();
#endif
}

// Shapes with clusters: a tile of 32 columns shared by two blocks at k = 9
// and four at k = 10, each holding 256 rows of X (133 KiB), so the matrix's
// L2 traffic is 1/16 byte per flop, as at k = 8, instead of 1/8 and 1/4 on
// one block. Each warp computes a 16 x 32 tile of Y (the 8 warps stacked
// along a pass of 128 rows; apply_matrix_mma.cu has why and the
// measurements), and reads every column of the step's X stage.
//   k   cluster  warp tile  columns  pass rows  chunk  stages  shared
//   9      2      16 x 32      32       128       16     2     222 KiB
//  10      4      16 x 32      32       128       16     2     222 KiB
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
using MmaClusterShape = MmaShapeOf<K, 8, 4, kDmmaDepth, 2, 1, false, K == 9 ? 2 : 4>;

// The launch configuration of the cluster kernel for shape S, with a grid of
// `clusters` clusters; `attribute` must outlive it.
template <class S>
cudaLaunchConfig_t cluster_launch_config(cudaLaunchAttribute& attribute, Index clusters) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = S::kCluster;
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.attrs = &attribute;
    config.numAttrs = 1;
    config.blockDim = dim3(kMmaThreads);
    config.dynamicSmemBytes = S::kSharedBytes;
    config.gridDim = dim3(static_cast<unsigned>(clusters * S::kCluster));
    return config;
}

// How many clusters of the cluster kernel for shape S the current GPU holds
// at once: 0 where it cannot run one (before sm_90, which has no clusters, or
// where no GPU processing cluster has S::kCluster free multiprocessors).
template <class S, class Real>
int resident_mma_clusters() {
    if (compute_capability_major() < 9) return 0;
    const auto kernel = apply_matrix_mma_cluster_kernel<S, Real>;
    allow_shared_memory(kernel, S::kSharedBytes,
                        ("the tensor-core cluster kernel for " + std::to_string(S::kK) + " targets").c_str());
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config = cluster_launch_config<S>(attribute, 1);
    int clusters = 0;
    QMARG_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    return clusters;
}

template <class S, class Real>
void launch_mma_clusters(std::complex<Real>* amps, const GateQubits& gate, const Matrix& matrix,
                         int resident_clusters) {
    const TargetOrder order = target_order(gate);
    const TileLayout layout = mma_tile_layout<Real>(gate, order, S::kColumnBits);
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config =
        cluster_launch_config<S>(attribute, std::min<Index>(layout.num_tiles, resident_clusters));
    const DeviceArray<double2> images = matrix_images<S>(order, matrix);
    QMARG_CUDA_CHECK(cudaLaunchKernelEx(&config, apply_matrix_mma_cluster_kernel<S, Real>, as_device(amps),
                                        static_cast<const double2*>(images.data()), layout));
    QMARG_CHECK_LAUNCH(apply_matrix_mma_cluster_kernel);
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

}  // namespace gpu
}  // namespace qmarg
