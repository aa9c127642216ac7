#!/usr/bin/env python3
"""Plots apply_matrix_bench JSON: GB/s and fraction of the floor against k.

The floor is max(copy roofline, 8 * 2^k flops per amplitude at the cuBLAS
square-GEMM rate), both measured in the same run (see apply_matrix_bench.cu).
One column per precision, one line per target layout, cuBLAS on the lowest
qubits as a dashed line. Where the run recorded the SM clock (NVML, see
bench/power_sampler.hpp), a third row shows it per case, with the clock of
the GEMM that sets the floor's rate dashed (per k where that rate was
measured right before each case): a clock under the GPU's peak with
power_capped near 1 means the board's power limit, not the kernel, set the
pace.

Usage: plot_apply_matrix.py results.json [out.png]
"""
import json
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    source = sys.argv[1]
    target = sys.argv[2] if len(sys.argv) > 2 else source.rsplit(".", 1)[0] + ".png"
    with open(source) as f:
        data = json.load(f)

    # series[(precision, n)][layout] = sorted list of benchmark entries
    series = defaultdict(lambda: defaultdict(list))
    for b in data["benchmarks"]:
        if b.get("error_occurred") or "k" not in b:
            continue
        # apply_matrix/<precision>/n<qubits>/<layout>/k<k>[/iterations:1/manual_time]
        precision, n, layout = b["name"].split("/")[1:4]
        series[(precision, n)][layout].append(b)

    panels = sorted(series)
    clocks = any("sm_MHz" in b for layouts in series.values() for entries in layouts.values() for b in entries)
    rows = 3 if clocks else 2
    fig, axes = plt.subplots(rows, len(panels), figsize=(6 * len(panels), 4 * rows), squeeze=False)
    for col, key in enumerate(panels):
        top, bottom = axes[0][col], axes[1][col]
        clock = axes[2][col] if clocks else None
        for layout, entries in sorted(series[key].items()):
            entries.sort(key=lambda b: b["k"])
            ks = [b["k"] for b in entries]
            top.plot(ks, [b["GB/s"] for b in entries], marker="o", label=f"{layout} targets")
            bottom.plot(ks, [100 * b["of_floor"] for b in entries], marker="o", label=f"{layout} targets")
            if clock is not None:
                timed = [b for b in entries if "sm_MHz" in b]
                clock.plot([b["k"] for b in timed], [b["sm_MHz"] for b in timed], marker="o",
                           label=f"{layout} targets")
        low = sorted(series[key].get("low", []), key=lambda b: b["k"])
        if low:
            ks = [b["k"] for b in low]
            bottom.plot(ks, [100 * b["floor_ms"] / b["cublas_low_ms"] for b in low], "k--",
                        label="cuBLAS, lowest qubits")
        if clock is not None:
            entries = [b for layout in series[key].values() for b in layout if "gemm_sm_MHz" in b]
            paired = defaultdict(list)  # k -> clocks of the GEMMs run right before that k's cases
            for b in entries:
                if b.get("gemm_paired"):
                    paired[b["k"]].append(b["gemm_sm_MHz"])
            unpaired = [b["gemm_sm_MHz"] for b in entries if not b.get("gemm_paired")]
            if unpaired:
                clock.axhline(unpaired[0], color="k", linestyle="--", label="the GEMM of the floor's rate")
            if paired:
                ks = sorted(paired)
                medians = [statistics.median_high(paired[k]) for k in ks]
                clock.plot(ks, medians, "k--", marker="x", label="the GEMMs run before each case")
            clock.set_ylabel("median SM clock while timed (MHz)")
        precision, n = key
        top.set_title(f"{precision}, {n[1:]} qubits ({data['context'].get('gpu', '')})")
        top.set_ylabel("GB/s of state read + written")
        bottom.set_ylabel("% of floor (copy roofline or GEMM rate)")
        bottom.axhline(85, color="grey", linewidth=0.8, linestyle=":")
        for ax in [a for a in (top, bottom, clock) if a is not None]:
            ax.set_xlabel("k (targets)")
            ax.set_xticks(range(1, 11))
            ax.grid(True, alpha=0.3)
            ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    print(target)


if __name__ == "__main__":
    main()
