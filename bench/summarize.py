#!/usr/bin/python3
"""Sums up the JSON of `qmarg bench marginal` against the engine's targets.

  summarize.py [--target R] [--deterministic-target R] [--auto-within F] RESULTS.json [MORE.json ...]

The records of all the files are taken together (a sweep run as several
commands; a case present in two files is an error). For each precision, n and
strategy it prints the number of cells, the median and worst ratio to the read
roofline (naming the worst cell), and how many cells reach --target (0.9) and
--deterministic-target (0.85). Then, per precision and n, Auto's worst ratio to
the fastest strategy timed in the same cell, and the cells where Auto falls more
than --auto-within (0.05) behind it or under --target. The worst cell is what a
results note has to quote, so it is printed, not left to a plot.

Needs no matplotlib: it shares only the loaders of plot.py.
"""
import argparse
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot import STRATEGY_ORDER, InputError, load_merged, ordered, ran  # noqa: E402


SHOWN_CELLS = 6  # cells named in a list of those under the target; the rest are counted


def cell_name(r):
    return f"k = {r['k']} {r['layout']}"


def summarize(records, target, deterministic_target, auto_within, out):
    by_group = defaultdict(list)
    for r in records:
        by_group[(r["precision"], r["n"])].append(r)
    for precision, n in sorted(by_group):
        group = by_group[(precision, n)]
        print(f"{precision} n = {n}", file=out)
        print(f"  {'strategy':<20} {'cells':>5} {'median':>7} {'worst':>7}  {'worst cell':<18}"
              f" {'>= ' + format(target, 'g'):>7} {'>= ' + format(deterministic_target, 'g'):>7}", file=out)
        for strategy in ordered([r["strategy"] for r in group], STRATEGY_ORDER):
            rows = [r for r in group if r["strategy"] == strategy]
            ratios = [r["roofline_ratio"] for r in rows]
            worst = min(rows, key=lambda r: r["roofline_ratio"])
            print(f"  {strategy:<20} {len(rows):>5} {statistics.median(ratios):>7.3f} {worst['roofline_ratio']:>7.3f}"
                  f"  {cell_name(worst):<18} {sum(x >= target for x in ratios):>7}"
                  f" {sum(x >= deterministic_target for x in ratios):>7}", file=out)

        cells = defaultdict(dict)
        for r in group:
            cells[(r["k"], r["layout"])][r["strategy"]] = r
        autos, against_best = [], []
        for strategies in cells.values():
            if "Auto" not in strategies:
                continue
            auto = strategies["Auto"]
            autos.append(auto)
            if len(strategies) > 1:
                best = max(strategies.values(), key=lambda r: r["gb_per_s"])
                against_best.append((auto["gb_per_s"] / best["gb_per_s"], auto, best))
        if against_best:
            worst_fraction, auto, best = min(against_best, key=lambda t: t[0])
            print(f"  Auto / best strategy: worst {worst_fraction:.3f} ({cell_name(auto)}, best {best['strategy']})",
                  file=out)
            for fraction, auto, best in sorted((t for t in against_best if t[0] < 1 - auto_within), key=lambda t: t[0]):
                print(f"    behind by more than {auto_within:g}: {cell_name(auto)} {fraction:.3f} of {best['strategy']}",
                      file=out)
        under = sorted((r for r in autos if r["roofline_ratio"] < target), key=lambda r: r["roofline_ratio"])
        if under:
            shown = ", ".join(f"{cell_name(r)} {r['roofline_ratio']:.3f}" for r in under[:SHOWN_CELLS])
            more = f" and {len(under) - SHOWN_CELLS} more" if len(under) > SHOWN_CELLS else ""
            print(f"  Auto under {target:g} in {len(under)} cells, lowest first: {shown}{more}", file=out)


def main(argv):
    parser = argparse.ArgumentParser(prog="summarize.py", description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", metavar="RESULTS.json")
    parser.add_argument("--target", type=float, default=0.9, help="ratio to the read roofline every cell should reach")
    parser.add_argument("--deterministic-target", type=float, default=0.85,
                        help="the same for the deterministic strategy (BinStationary)")
    parser.add_argument("--auto-within", type=float, default=0.05,
                        help="how far Auto may fall behind the fastest strategy of a cell")
    args = parser.parse_args(argv)
    for name in ("target", "deterministic_target", "auto_within"):
        value = getattr(args, name)
        if not 0 < value <= 1:
            parser.error(f"--{name.replace('_', '-')} {value} is not in (0, 1]")
    try:
        summarize(ran(load_merged(args.files)["records"]), args.target, args.deterministic_target, args.auto_within, sys.stdout)
    except InputError as e:
        sys.exit(f"summarize.py: error: {e}")


if __name__ == "__main__":
    main(sys.argv[1:])
