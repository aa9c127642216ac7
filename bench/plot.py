#!/usr/bin/python3
"""Plots the JSON of `qmarg bench marginal`.

  plot.py [--out-dir DIR] RESULTS.json [MORE.json ...]
      For each file and precision, two PNGs: GB/s of state read, and the ratio
      to the read roofline, against n. One row of panels per qubit layout, one
      column per k, one line per strategy (the roofline dashed in the GB/s one).
      Written as <DIR>/<file stem>_<precision>_gbps.png and ..._ratio.png.
      With --merge NAME, the records of all the files (say, a sweep run as
      several commands) are plotted together as <DIR>/NAME_<precision>_....
      With --against k, the x axis is k and there is one column per n instead
      (the files are then named ..._gbps_vs_k.png and ..._ratio_vs_k.png).

  plot.py --compare BEFORE.json AFTER.json [--out-dir DIR] [--name NAME]
      For each precision in both runs, AFTER's GB/s over BEFORE's for every
      case the two share (above 1: AFTER is faster), laid out the same way, as
      <DIR>/<NAME>_<precision>.png (NAME defaults to compare_<before>_<after>),
      and the median ratio per strategy on stdout.

Uses matplotlib's Agg backend (no display, no network). Run it with the
system Python, where Debian's python3-matplotlib is installed.
"""
import argparse
import json
import os
import statistics
import sys
from collections import defaultdict

REQUIRED_RECORD_KEYS = ("precision", "n", "k", "layout", "strategy", "gb_per_s", "roofline_gb_per_s",
                        "roofline_ratio", "skipped_reason")
LAYOUT_ORDER = ["low", "high", "scattered", "descending", "random"]
STRATEGY_ORDER = ["BinStationary", "BinStationaryAtomic", "Auto", "SharedPrivatized", "GlobalAtomic", "Partitioned"]


class InputError(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise InputError(f"{path} is not JSON: {e}")
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise InputError(f"{path} is not the JSON of `qmarg bench marginal` (no 'records' list)")
    for i, r in enumerate(data["records"]):
        missing = [key for key in REQUIRED_RECORD_KEYS if not isinstance(r, dict) or key not in r]
        if missing:
            raise InputError(f"{path}: record {i} lacks {', '.join(missing)}")
    if not any(r["skipped_reason"] is None for r in data["records"]):
        raise InputError(f"{path} holds no case that ran (every record is skipped or there are none)")
    return data


def load_merged(paths):
    """The records of several runs (a sweep run as several commands) as one run,
    with the first file's context; a case in two files is an error."""
    runs = [load(path) for path in paths]
    seen = set()
    for path, run in zip(paths, runs):
        for r in run["records"]:
            key = (r["precision"], r["n"], r["k"], r["layout"], r["strategy"])
            if key in seen:
                raise InputError(f"{path}: case {key} is also in an earlier file; "
                                 "merge runs of different n or precisions")
            seen.add(key)
    return dict(runs[0], records=[r for run in runs for r in run["records"]])


def ordered(values, order):
    return sorted(set(values), key=lambda v: (order.index(v) if v in order else len(order), v))


def ran(records):
    return [r for r in records if r["skipped_reason"] is None]


def title_of(data, path):
    device = data.get("device", {})
    parts = [device.get("name", "unknown device"), f"commit {data.get('git_commit', '?')}", data.get("date", "")]
    return f"{os.path.basename(path)}: " + ", ".join(p for p in parts if p)


def panel_grid(plt, layouts, columns, column="k", x_label="n (qubits)"):
    fig, axes = plt.subplots(len(layouts), len(columns), figsize=(3.2 * len(columns) + 1, 2.6 * len(layouts) + 1),
                             squeeze=False, sharex=True)
    for row, layout in enumerate(layouts):
        for col, value in enumerate(columns):
            ax = axes[row][col]
            ax.grid(True, alpha=0.3)
            if row == 0:
                ax.set_title(f"{column} = {value}")
            if col == 0:
                ax.set_ylabel(layout)
            if row == len(layouts) - 1:
                ax.set_xlabel(x_label)
    return fig, axes


def finish(fig, axes, title, target, ticks):
    handles, labels = {}, []
    for ax in axes.flat:
        ax.set_xticks(ticks)
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in handles:
                handles[label] = h
                labels.append(label)
    axes[0][-1].legend([handles[label] for label in labels], labels, fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.6 / fig.get_figheight()))
    fig.savefig(target, dpi=110)
    print(target)


def plot_file(plt, path, out_dir, data=None, stem=None, against="n"):
    """against="n": x = n, one column per k; against="k": x = k, one column per n."""
    data = data or load(path)
    stem = stem or os.path.splitext(os.path.basename(path))[0]
    column = "k" if against == "n" else "n"
    x_label = "n (qubits)" if against == "n" else "k (qubits in the marginal)"
    suffix = "" if against == "n" else "_vs_k"
    records = ran(data["records"])
    written = []
    for precision in ordered((r["precision"] for r in records), ["double", "float"]):
        rows = [r for r in records if r["precision"] == precision]
        layouts = ordered((r["layout"] for r in rows), LAYOUT_ORDER)
        columns = sorted({r[column] for r in rows})
        strategies = ordered((r["strategy"] for r in rows), STRATEGY_ORDER)
        roofline = {}
        for r in rows:
            roofline[r["n"]] = r["roofline_gb_per_s"]
        for metric, label in (("gb_per_s", "GB/s of state read"), ("roofline_ratio", "ratio to the read roofline")):
            fig, axes = panel_grid(plt, layouts, columns, column, x_label)
            for row, layout in enumerate(layouts):
                for col, value in enumerate(columns):
                    ax = axes[row][col]
                    for strategy in strategies:
                        points = sorted((r[against], r[metric]) for r in rows
                                        if r["layout"] == layout and r[column] == value and r["strategy"] == strategy)
                        if points:
                            ax.plot(*zip(*points), marker="o", markersize=3, label=strategy,
                                    color=f"C{strategies.index(strategy)}")
                    if metric == "gb_per_s":
                        if against == "n":
                            ns = sorted(n for n in roofline if n > value)
                            ax.plot(ns, [roofline[n] for n in ns], "k--", linewidth=1, label="read roofline")
                        else:
                            ax.axhline(roofline[value], color="k", linestyle="--", linewidth=1, label="read roofline")
                        ax.set_ylim(bottom=0)
                    else:
                        ax.axhline(1.0, color="k", linestyle="--", linewidth=1)
                        ax.set_ylim(0, max(1.1, 1.05 * max(r[metric] for r in rows)))
            kind = "gbps" if metric == "gb_per_s" else "ratio"
            target = os.path.join(out_dir, f"{stem}_{precision}_{kind}{suffix}.png")
            finish(fig, axes, f"{title_of(data, path)}\n{precision}: {label}", target,
                   sorted({r[against] for r in rows}))
            plt.close(fig)
            written.append(target)
    return written


def compare(plt, before_path, after_path, out_dir, name):
    before, after = load(before_path), load(after_path)

    def key(r):
        return (r["precision"], r["n"], r["k"], r["layout"], r["strategy"])

    old = {key(r): r for r in ran(before["records"])}
    shared = [(old[key(r)], r) for r in ran(after["records"]) if key(r) in old]
    if not shared:
        raise InputError(f"{before_path} and {after_path} share no case that ran in both")
    name = name or "compare_{}_{}".format(*(os.path.splitext(os.path.basename(p))[0] for p in (before_path, after_path)))
    written = []
    for precision in ordered((a["precision"] for _, a in shared), ["double", "float"]):
        pairs = [(b, a) for b, a in shared if a["precision"] == precision]
        layouts = ordered((a["layout"] for _, a in pairs), LAYOUT_ORDER)
        ks = sorted({a["k"] for _, a in pairs})
        strategies = ordered((a["strategy"] for _, a in pairs), STRATEGY_ORDER)
        fig, axes = panel_grid(plt, layouts, ks)
        for row, layout in enumerate(layouts):
            for col, k in enumerate(ks):
                ax = axes[row][col]
                ax.axhline(1.0, color="k", linestyle="--", linewidth=1)
                for strategy in strategies:
                    points = sorted((a["n"], a["gb_per_s"] / b["gb_per_s"]) for b, a in pairs
                                    if a["layout"] == layout and a["k"] == k and a["strategy"] == strategy)
                    if points:
                        ax.plot(*zip(*points), marker="o", markersize=3, label=strategy,
                                color=f"C{strategies.index(strategy)}")
        target = os.path.join(out_dir, f"{name}_{precision}.png")
        finish(fig, axes, f"{os.path.basename(after_path)} over {os.path.basename(before_path)}\n"
                          f"{precision}: GB/s ratio (above 1: faster after)", target,
               sorted({a["n"] for _, a in pairs}))
        plt.close(fig)
        written.append(target)
        for strategy in strategies:
            ratios = [a["gb_per_s"] / b["gb_per_s"] for b, a in pairs if a["strategy"] == strategy]
            print(f"{precision} {strategy}: median after/before {statistics.median(ratios):.3f} "
                  f"over {len(ratios)} cases (min {min(ratios):.3f}, max {max(ratios):.3f})")
    return written


def main(argv):
    parser = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", metavar="RESULTS.json")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE.json", "AFTER.json"))
    parser.add_argument("--out-dir", default=None, help="where the PNGs go (default: next to the first input)")
    parser.add_argument("--name", default=None, help="file name stem of the --compare plots")
    parser.add_argument("--merge", default=None, metavar="NAME",
                        help="plot the records of all RESULTS.json together, as NAME_<precision>_*.png")
    parser.add_argument("--against", choices=("n", "k"), default="n",
                        help="the x axis: n with one column per k (default), or k with one column per n")
    args = parser.parse_args(argv)
    if bool(args.files) == bool(args.compare):
        parser.error("give either one or more RESULTS.json or --compare BEFORE.json AFTER.json")
    if args.compare and args.against != "n":
        parser.error("--against applies to plots of runs, not to --compare")
    inputs = args.compare or args.files
    out_dir = args.out_dir or os.path.dirname(os.path.abspath(inputs[0]))
    if not os.path.isdir(out_dir):
        parser.error(f"--out-dir {out_dir} is not a directory")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.exit(f"plot.py: error: matplotlib is missing ({e}); install python3-matplotlib and run with /usr/bin/python3")

    try:
        if args.compare:
            compare(plt, args.compare[0], args.compare[1], out_dir, args.name)
        elif args.merge:
            plot_file(plt, args.merge, out_dir, load_merged(args.files), args.merge, args.against)
        else:
            for path in args.files:
                plot_file(plt, path, out_dir, against=args.against)
    except InputError as e:
        sys.exit(f"plot.py: error: {e}")


if __name__ == "__main__":
    main(sys.argv[1:])
