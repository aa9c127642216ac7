// Builds the tile of the transposed marginal path (the maps are described in
// marginal_transpose_plan.hpp). Host code only, so that the mapping is tested
// on machines without a GPU.
#include "marginal_transpose_plan.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "qmarg/error.hpp"

namespace qmarg {
namespace gpu {

bool transpose_applies(int num_qubits, int k) {
    return num_qubits >= kTransposeTileBits && k <= num_qubits && num_qubits - k <= kTransposeMaxUnselected;
}

bool streaming_stores_coalesce(const Qubits& qubits) {
    const int prefix = std::min(static_cast<int>(qubits.size()), kStreamingStorePrefix);
    for (int j = 0; j < prefix; ++j) {
        if (qubits[j] != j) return false;
    }
    return true;
}

namespace {

// The most unselected qubits (u = n - k) for which BinStationary takes the
// transposed path, given whether the streaming kernel's stores coalesce and
// whether the state is single precision.
//
// Measured on an H100, the two paths called alone side by side
// (bench/marginal_bench near_n cells, ratio to the read roofline counting the
// output bytes; docs/marginal_engine.md has the table):
// - k = n: the transposed path wins in every order and at every n (float
//   0.97-1.00 against 0.76-0.89 where the streaming stores coalesce; 0.92-1.00
//   against 0.10-0.91 descending or random).
// - n = 26, 28: it is level or ahead everywhere (k = n - 4 descending: float
//   0.94-0.96 against 0.75-0.86, double 0.93-0.94 against 0.85-0.90).
// - n <= 24 (at most 8192 tiles, about five per block slot of an H100, so the
//   last partial round of tiles costs a few percent), the streaming kernel's
//   scattered stores cost more the larger the output, i.e. the fewer the
//   unselected qubits u. Where they coalesce it wins at every u >= 1 (n = 24:
//   0.94-1.01 against 0.89-0.98). Where they scatter, on tiles of 2^12
//   (before the tiles of 2^11), the transposed path won up to u = 3 at n = 24
//   (descending: double 0.91 against 0.87-0.89, float 0.91-0.92 against
//   0.78-0.84) and up to u = 2 at n = 20, 22 (u = 3, double: 0.75-0.86
//   against 0.88-0.95). At u = 4, n = 24 a float state's bytes read are half
//   a double state's for the same stores: the float transposed path won
//   descending by 0.06-0.08 and lost random by 0.04, and a double state was
//   level and kept the streaming kernel (timed on 16 orders, the output not
//   counted, docs/marginal_engine.md "k = n - 4 at n = 24 over many orders":
//   double random orders 0.885-0.926 streaming against 0.851-0.914
//   transposed).
// - With tiles of 2^11 (main kernels alone, every run after an L2 flush,
//   ratios to the read roofline, output not counted; descending, high and
//   three random orders, where the stores scatter):
//   float n = 24, u = 3, 4: the transposed path ahead in 10 of 11 cells
//   (-0.009 to +0.233; k = 20 0.895-0.918 against 0.786-0.909);
//   float n = 22, u = 3, 4: ahead in all 10 (+0.019 to +0.175);
//   double n = 22, u = 3: ahead in all 5 (+0.008 to +0.083), u = 4 level
//   (-0.031 to +0.011); double n = 24, u = 4 level to behind (-0.014 to
//   +0.007; the streaming kernel keeps it).
//   So float takes u <= 4 from n = 22, and double u <= 3; n = 20 and below
//   were not measured again and keep u <= 2.
int transposed_path_max_unselected(int num_qubits, bool stores_coalesce, bool single_precision) {
    if (num_qubits >= 26) return kTransposeMaxUnselected;
    if (stores_coalesce) return 0;
    if (num_qubits >= 22) return single_precision ? 4 : 3;
    return 2;
}

}  // namespace

bool takes_transposed_path(int num_qubits, const Qubits& qubits, bool single_precision) {
    const int k = static_cast<int>(qubits.size());
    return transpose_applies(num_qubits, k) &&
           num_qubits - k <=
               transposed_path_max_unselected(num_qubits, streaming_stores_coalesce(qubits), single_precision);
}

namespace {

// The 4-bit XOR added to a slot's low bits by each staged bit at or above
// kTransposeSwizzleBits. A warp's store covers the compact bits 1..5 (its
// lanes); each half-warp (bits 1..4) must land in 16 slots of distinct banks,
// i.e. the low 4 bits of the four slot images must be linearly independent.
// Staged bits below 4 give unit vectors; each higher one gets the smallest
// vector outside the span so far. Staged bits that no lane varies get 0.
std::vector<std::uint32_t> swizzle(const std::vector<int>& staged_of_compact) {
    std::vector<std::uint32_t> extra(kTransposeTileBits, 0);
    std::vector<bool> in_span(1u << kTransposeSwizzleBits, false);
    in_span[0] = true;
    const auto add = [&](std::uint32_t vector) {
        std::vector<bool> next = in_span;
        for (std::uint32_t v = 0; v < in_span.size(); ++v)
            if (in_span[v]) next[v ^ vector] = true;
        in_span = next;
    };
    constexpr int kHalfWarpBits = 4;
    for (int i = 1; i <= kHalfWarpBits; ++i)
        if (staged_of_compact[i] < kTransposeSwizzleBits) add(1u << staged_of_compact[i]);
    for (int i = 1; i <= kHalfWarpBits; ++i) {
        const int j = staged_of_compact[i];
        if (j < kTransposeSwizzleBits) continue;
        std::uint32_t v = 1;
        while (in_span[v]) ++v;
        extra[j] = v;
        add(v);
    }
    return extra;
}

}  // namespace

TransposePlan make_transpose_plan(int num_qubits, const Qubits& qubits) {
    const int n = num_qubits;
    const int k = static_cast<int>(qubits.size());
    if (!transpose_applies(n, k)) {
        throw Error("transposed marginal path: " + std::to_string(k) + " of " + std::to_string(n) +
                    " qubits is outside its range (n >= " + std::to_string(kTransposeTileBits) + ", k >= n - " +
                    std::to_string(kTransposeMaxUnselected) + ")");
    }
    std::vector<int> bin_of(n, -1);
    for (int j = 0; j < k; ++j) bin_of[qubits[j]] = j;

    // The tile: every unselected bit, then the lowest index bits and the bits
    // of the lowest bins alternately (lowest index bit first) until 12.
    std::vector<bool> in_tile(n, false);
    int tile_size = 0;
    for (int bit = 0; bit < n; ++bit) {
        if (bin_of[bit] < 0) {
            in_tile[bit] = true;
            ++tile_size;
        }
    }
    int next_low = 0, next_bin = 0;
    for (bool low_turn = true; tile_size < kTransposeTileBits; low_turn = !low_turn) {
        int bit;
        if (low_turn) {
            while (in_tile[next_low]) ++next_low;
            bit = next_low;
        } else {
            while (in_tile[qubits[next_bin]]) ++next_bin;
            bit = qubits[next_bin];
        }
        in_tile[bit] = true;
        ++tile_size;
    }

    std::vector<int> tile_bits, selected_by_bin, unselected, block_bits;
    for (int bit = 0; bit < n; ++bit) {
        if (!in_tile[bit]) {
            block_bits.push_back(bit);
            continue;
        }
        tile_bits.push_back(bit);
        (bin_of[bit] < 0 ? unselected : selected_by_bin).push_back(bit);
    }
    std::sort(selected_by_bin.begin(), selected_by_bin.end(),
              [&](int a, int b) { return bin_of[a] < bin_of[b]; });

    TransposePlan plan{};
    plan.unselected_bits = static_cast<int>(unselected.size());
    plan.output_bits = kTransposeTileBits - plan.unselected_bits;
    plan.block_bits = static_cast<int>(block_bits.size());

    // Staged position of each tile bit, then of each compact bit.
    std::vector<int> staged_of_bit(n, -1);
    for (int j = 0; j < plan.output_bits; ++j) staged_of_bit[selected_by_bin[j]] = j;
    for (int r = 0; r < plan.unselected_bits; ++r) staged_of_bit[unselected[r]] = plan.output_bits + r;
    std::vector<int> staged_of_compact(kTransposeTileBits);
    for (int i = 0; i < kTransposeTileBits; ++i) staged_of_compact[i] = staged_of_bit[tile_bits[i]];

    const std::vector<std::uint32_t> extra = swizzle(staged_of_compact);
    for (int j = 0; j < kTransposeTileBits; ++j) {
        plan.staged_slot[j] = (std::uint32_t{1} << j) ^ extra[j];
        plan.out_bin[j] = j < plan.output_bits ? std::uint64_t{1} << bin_of[selected_by_bin[j]] : 0;
    }
    for (int i = 0; i < kTransposeTileBits; ++i) {
        plan.load_index[i] = std::uint64_t{1} << tile_bits[i];
        plan.load_slot[i] = plan.staged_slot[staged_of_compact[i]];
    }
    for (int i = 0; i < plan.block_bits; ++i) {
        plan.block_index[i] = std::uint64_t{1} << block_bits[i];
        plan.block_bin[i] = std::uint64_t{1} << bin_of[block_bits[i]];
    }

    while (plan.read_run_bits < n && in_tile[plan.read_run_bits]) ++plan.read_run_bits;
    while (plan.write_run_bits < k && in_tile[qubits[plan.write_run_bits]]) ++plan.write_run_bits;
    return plan;
}

TransposePlan make_transpose_plan(int num_qubits, const Qubits& qubits, const FixedBits& fixed) {
    if (fixed.mask == 0) return make_transpose_plan(num_qubits, qubits);
    TransposePlan plan = make_transpose_plan(fixed.compact_qubits(num_qubits), fixed.compact(qubits));
    for (std::uint64_t& image : plan.load_index) image = fixed.spread(image);
    for (std::uint64_t& image : plan.block_index) image = fixed.spread(image);
    return plan;
}

}  // namespace gpu
}  // namespace qmarg
