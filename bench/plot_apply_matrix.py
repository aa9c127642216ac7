#!/usr/bin/env python3
"""Plots apply_matrix_bench JSON: GB/s and fraction of the floor against k.

The floor is max(copy roofline, 8 * 2^k flops per amplitude at the cuBLAS
square-GEMM rate), both measured in the same run (see apply_matrix_bench.cu).
One column per precision, one line per target layout, cuBLAS on the lowest
qubits as a dashed line.

Usage: plot_apply_matrix.py results.json [out.png]
"""
import json
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
    fig, axes = plt.subplots(2, len(panels), figsize=(6 * len(panels), 8), squeeze=False)
    for col, key in enumerate(panels):
        top, bottom = axes[0][col], axes[1][col]
        for layout, entries in sorted(series[key].items()):
            entries.sort(key=lambda b: b["k"])
            ks = [b["k"] for b in entries]
            top.plot(ks, [b["GB/s"] for b in entries], marker="o", label=f"{layout} targets")
            bottom.plot(ks, [100 * b["of_floor"] for b in entries], marker="o", label=f"{layout} targets")
        low = sorted(series[key].get("low", []), key=lambda b: b["k"])
        if low:
            ks = [b["k"] for b in low]
            bottom.plot(ks, [100 * b["floor_ms"] / b["cublas_low_ms"] for b in low], "k--",
                        label="cuBLAS, lowest qubits")
        precision, n = key
        top.set_title(f"{precision}, {n[1:]} qubits ({data['context'].get('gpu', '')})")
        top.set_ylabel("GB/s of state read + written")
        bottom.set_ylabel("% of floor (copy roofline or GEMM rate)")
        bottom.axhline(85, color="grey", linewidth=0.8, linestyle=":")
        for ax in (top, bottom):
            ax.set_xlabel("k (targets)")
            ax.set_xticks(range(1, 11))
            ax.grid(True, alpha=0.3)
            ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=120)
    print(target)


if __name__ == "__main__":
    main()
