#!/usr/bin/env python3
"""Bar plot of reduction_bench results: GB/s of state read per variant (the
seed's ladder v1..v7, CUB, the library's kernel and library call), one panel
per qubit count, with the read roofline of the same run drawn as a line and
each bar labelled with its share of the roofline. Library calls (and the
"read roofline as a call" bar, their like-for-like floor) include the launch and
the synchronisation that returns the result to the host, timed on the host clock.

Reads the Google Benchmark JSON written by
    reduction_bench --benchmark_out=FILE.json --benchmark_out_format=json
and writes a PNG (matplotlib, Agg backend; no display or network needed):
    python3 bench/plot_reduction_ladder.py FILE.json [-o FILE.png] [--n 24 30] [--policies]
"""
import argparse
import json
import math
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

# Bars, left to right: the ladder, then what today's tools do.
LADDER = [
    ("ladder/v1_interleaved_divergent", "v1 interleaved\ndivergent"),
    ("ladder/v2_interleaved_strided_index", "v2 interleaved\nstrided index"),
    ("ladder/v3_sequential_addressing", "v3 sequential\naddressing"),
    ("ladder/v4_first_add_during_load", "v4 first add\nduring load"),
    ("ladder/v5_unrolled_last_warp", "v5 unrolled\nlast warp"),
    ("ladder/v6_completely_unrolled", "v6 completely\nunrolled"),
    ("ladder/v7_multiple_elements_per_thread", "v7 multiple\nelements/thread"),
]
OTHERS = [
    ("cub/transform_reduce", "CUB\nTransformReduce"),
    ("ours/total_probability_kernel", "ours |a|^2\nkernel"),
    ("roofline/read_call", "read roofline\nas a call (sync)"),
    ("ours/total_probability", "ours total_prob.\nlibrary call"),
    ("ours/expectation_z_kernel", "ours <Z..Z>\nkernel"),
    ("cub/expectation_z", "CUB <Z..Z>"),
    ("ours/inner_product_kernel", "ours <a|b>\nkernel"),
    ("ours/inner_product", "ours <a|b>\nlibrary call"),
]
POLICIES = [
    ("policy/128x8", "policy\n128x8"),
    ("policy/256x2", "policy\n256x2"),
    ("policy/256x8", "policy\n256x8"),
    ("policy/512x4", "policy\n512x4"),
    ("policy/1024x2", "policy\n1024x2"),
]
NAME = re.compile(r"^(?P<variant>.+)/n:(?P<n>\d+)(/|$)")


def load(path):
    """Returns ({n: {variant: GB/s}}, {n: roofline GB/s}, errors, context)."""
    with open(path) as f:
        data = json.load(f)
    speeds, rooflines, errors = {}, {}, []
    for bench in data.get("benchmarks", []):
        if bench.get("run_type", "iteration") != "iteration":
            continue  # aggregates of repetitions: the repetitions themselves are used
        match = NAME.match(bench["name"])
        if not match:
            continue
        variant, n = match["variant"], int(match["n"])
        if bench.get("error_occurred"):
            errors.append(f"{variant} n={n}: {bench.get('error_message', 'failed')}")
            continue
        if "GB/s" not in bench:
            continue
        speeds.setdefault(n, {}).setdefault(variant, []).append(bench["GB/s"])
        if variant == "roofline/read":
            rooflines.setdefault(n, []).append(bench["GB/s"])
    speeds = {n: {v: statistics.median(x) for v, x in vs.items()} for n, vs in speeds.items()}
    rooflines = {n: statistics.median(x) for n, x in rooflines.items()}
    return speeds, rooflines, errors, data.get("context", {})


def plot(speeds, rooflines, context, qubit_counts, bars, out):
    columns = min(3, len(qubit_counts))
    rows = math.ceil(len(qubit_counts) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(7.5 * columns, 5.2 * rows), squeeze=False)
    for ax in axes.flat[len(qubit_counts):]:
        ax.set_visible(False)
    for ax, n in zip(axes.flat, qubit_counts):
        present = [(key, label) for key, label in bars if key in speeds[n]]
        values = [speeds[n][key] for key, _ in present]
        colours = ["tab:gray" if key.startswith("ladder/") else
                   "tab:orange" if key.startswith("cub/") else
                   "tab:purple" if key.startswith("policy/") else "tab:blue" for key, _ in present]
        positions = range(len(present))
        ax.bar(positions, values, color=colours)
        ax.set_xticks(list(positions))
        ax.set_xticklabels([label for _, label in present], rotation=90, fontsize=7)
        ax.set_ylabel("GB/s of state read")
        ax.set_title(f"n = {n} ({(16 << n) / 2**30:.3g} GiB double-complex state)")
        roofline = rooflines.get(n)
        if roofline:
            ax.axhline(roofline, color="tab:red", linestyle="--", linewidth=1.2,
                       label=f"read roofline {roofline:.0f} GB/s (same run)")
            for x, v in zip(positions, values):
                ax.text(x, v, f"{100 * v / roofline:.0f}%", ha="center", va="bottom", fontsize=6)
            ax.legend(loc="upper left", fontsize=8)
        ax.set_ylim(0, 1.12 * max(values + [roofline or 0]))
    gpu = context.get("gpu", "unknown GPU")
    fig.suptitle(f"Sum of |a|^2 over a state vector: the reduction ladder and beyond ({gpu})")
    fig.tight_layout()
    fig.savefig(out, dpi=130)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", help="Google Benchmark JSON from reduction_bench")
    parser.add_argument("-o", "--output", help="PNG to write (default: the JSON path with .png)")
    parser.add_argument("--n", type=int, nargs="*", help="qubit counts to plot (default: all in the file)")
    parser.add_argument("--policies", action="store_true", help="also plot the launch-policy variants")
    args = parser.parse_args()

    speeds, rooflines, errors, context = load(args.json)
    for error in errors:
        print(f"failed benchmark (not plotted): {error}", file=sys.stderr)
    qubit_counts = sorted(args.n or speeds.keys())
    missing = [n for n in qubit_counts if n not in speeds]
    if missing or not qubit_counts:
        sys.exit(f"no results for n = {missing or 'any'} in {args.json}")
    bars = LADDER + OTHERS + (POLICIES if args.policies else [])
    out = args.output or re.sub(r"\.json$", "", args.json) + ".png"
    plot(speeds, rooflines, context, qubit_counts, bars, out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
