#!/bin/sh
# bench/plot.py on a small CPU run of `qmarg bench marginal`: both plots of
# each precision and a --compare plot must be written, and bad input must be a
# one-line error; bench/summarize.py must sum the runs up and refuse a case
# given twice; bench/plot_apply_matrix.py must draw the committed gate runs.
# Exits 77 (a skip for ctest) when the system Python has no matplotlib, which
# scripts/setup.sh installs.
# Usage: plot_test.sh QMARG_TOOL SOURCE_DIR WORK_DIR
set -eu
tool=$1 source=$2 work=$3
python=/usr/bin/python3
if ! "$python" -c 'import matplotlib' 2>/dev/null; then
    echo "plot_test: skipped: $python has no matplotlib (apt-get install python3-matplotlib)"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work"
"$tool" bench marginal --device cpu --n 10,12 --k 1,3 --runs 3 --seed 3 -q --out "$work/run.json" > /dev/null
"$python" "$source/bench/plot.py" --out-dir "$work" "$work/run.json"
for png in run_double_gbps run_double_ratio run_float_gbps run_float_ratio; do
    test -s "$work/$png.png" || { echo "plot_test: $png.png was not written"; exit 1; }
done
cp "$work/run.json" "$work/again.json"
"$python" "$source/bench/plot.py" --out-dir "$work" --compare "$work/run.json" "$work/again.json" --name cmp
test -s "$work/cmp_double.png" || { echo "plot_test: cmp_double.png was not written"; exit 1; }
"$tool" bench marginal --device cpu --n 14 --k 2 --runs 3 --seed 3 -q --out "$work/more.json" > /dev/null
"$python" "$source/bench/plot.py" --out-dir "$work" --merge merged "$work/run.json" "$work/more.json"
test -s "$work/merged_float_ratio.png" || { echo "plot_test: merged_float_ratio.png was not written"; exit 1; }
"$python" "$source/bench/plot.py" --out-dir "$work" --against k --merge merged "$work/run.json" "$work/more.json"
for png in merged_double_gbps_vs_k merged_float_ratio_vs_k; do
    test -s "$work/$png.png" || { echo "plot_test: $png.png was not written"; exit 1; }
done
"$python" "$source/bench/summarize.py" "$work/run.json" "$work/more.json" > "$work/summary.txt"
for line in "double n = 14" "float n = 12" "Auto under 0.9 in"; do
    grep -q "$line" "$work/summary.txt" || { echo "plot_test: summary lacks '$line'"; cat "$work/summary.txt"; exit 1; }
done
# The CPU runs Auto alone: a second strategy twice as fast in every cell must
# put Auto at 0.5 of the best and name the cells it trails.
"$python" - "$work/run.json" "$work/two.json" <<'EOF_PY'
import json, sys
data = json.load(open(sys.argv[1]))
data["records"] += [dict(r, strategy="BinStationary", gb_per_s=2 * r["gb_per_s"], roofline_ratio=2 * r["roofline_ratio"])
                    for r in data["records"] if r["strategy"] == "Auto"]
json.dump(data, open(sys.argv[2], "w"))
EOF_PY
"$python" "$source/bench/summarize.py" "$work/two.json" > "$work/two.txt"
for line in "Auto / best strategy: worst 0.500" "behind by more than 0.05: k = 1 low 0.500 of BinStationary"; do
    grep -q "$line" "$work/two.txt" || { echo "plot_test: summary lacks '$line'"; cat "$work/two.txt"; exit 1; }
done
if "$python" "$source/bench/summarize.py" "$work/run.json" "$work/again.json" 2> "$work/twice.err"; then
    echo "plot_test: summarize.py took a case twice"; exit 1
fi
grep -q "is also in an earlier file" "$work/twice.err" || { cat "$work/twice.err"; exit 1; }
echo '{"records": 3}' > "$work/bad.json"
if "$python" "$source/bench/plot.py" --out-dir "$work" "$work/bad.json" 2> "$work/bad.err"; then
    echo "plot_test: bad input was accepted"; exit 1
fi
grep -q "not the JSON of .qmarg bench marginal" "$work/bad.err" || { cat "$work/bad.err"; exit 1; }
# The gate plot, on a committed run with the SM clock (a third row) and on
# one from before the clock was recorded.
for run in apply_matrix_H100 apply_matrix_H200; do
    "$python" "$source/bench/plot_apply_matrix.py" "$source/bench/results/$run.json" "$work/$run.png" > /dev/null
    test -s "$work/$run.png" || { echo "plot_test: $run.png was not written"; exit 1; }
done
echo "plot_test: ok"
