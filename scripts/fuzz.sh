#!/usr/bin/env bash
# Fuzzes the OpenQASM reader with libFuzzer for a bounded time and fails on
# any finding. The target (fuzz/qasm_fuzz.cpp) is built with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer from the reader's sources
# alone, in build/fuzz. Seeds: the example circuits and the test corpus;
# inputs found to be new are kept in build/fuzz/corpus for the next run.
#
# Usage: scripts/fuzz.sh [seconds]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
build=build/fuzz
cmake -S fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++}" >/dev/null
cmake --build "$build"

mkdir -p "$build/corpus" "$build/artifacts"
rm -f "$build"/artifacts/*
if ! "$build/qasm_fuzz" "$build/corpus" examples tests/qasm_corpus/valid tests/qasm_corpus/invalid \
    -dict=fuzz/qasm.dict -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -artifact_prefix="$build/artifacts/" -print_final_stats=1 2>"$build/fuzz.log"; then
  tail -n 60 "$build/fuzz.log" >&2
  echo "fuzz: finding; the input that caused it is in $build/artifacts/" >&2
  exit 1
fi
grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)" "$build/fuzz.log" | sed 's/^/fuzz: /' >&2 || true
echo "fuzz: no finding in ${seconds} s" >&2
