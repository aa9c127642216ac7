#!/usr/bin/env bash
# Everything that needs a GPU, run against an existing build (`cmake --preset
# release && cmake --build --preset release` first):
#   1. the whole test suite, GPU instances included (they skip elsewhere);
#   2. the GPU tests under compute-sanitizer memcheck and racecheck, on a
#      filter of small cases so that they finish in minutes;
#   3. the benchmarks, each writing Google Benchmark JSON into OUTDIR.
# Prints a summary table last. Usage: scripts/gpu_check.sh [BUILD_DIR] [OUTDIR] [tests|sanitize|bench]...
set -uo pipefail
build=${1:-build/release}
out=${2:-gpu-results}
shift $(( $# > 2 ? 2 : $# ))
steps=("$@")
((${#steps[@]})) || steps=(tests sanitize bench)
mkdir -p "$out"
summary=()
want() { local s; for s in "${steps[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }
record() { summary+=("$(printf '%-28s %s' "$1" "$2")"); }

# A build copied to another machine finds the source tree (example circuits,
# corpora) and the tool through these.
export QMARG_SOURCE_DIR=${QMARG_SOURCE_DIR:-$PWD}
[[ -x $build/tools/qmarg ]] && export QMARG_CLI_PATH=${QMARG_CLI_PATH:-$PWD/$build/tools/qmarg}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
tests=$build/tests/qmarg_tests

if want tests; then
  "$tests" --gtest_output=json:"$out/tests.json" >"$out/tests.log" 2>&1
  rc=$?
  record "tests" "rc=$rc $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests.log" | tr '\n' ' ')"
fi

if want sanitize; then
  # Small sizes only: the sanitizers slow kernels down by 10-100x. The default
  # reaches every GPU kernel (the marginal strategies, the engine's paths, the
  # reductions, every gate path, circuits) in a few minutes. OutcomeProbabilities
  # is left out: it launches one reduction per outcome, thousands of launches
  # that racecheck alone runs for many minutes (its kernel is the reductions'
  # tree_reduce, which the Reductions and MarginalQueries tests cover).
  filter=${QMARG_SANITIZE_FILTER:-'MarginalStrategiesTest/*.SmallStatesEveryOrderedSubset:MarginalStrategiesTest/*.EdgeCases:MarginalStrategiesTest/*.DeviceBufferResultsStayOnTheGpu:MarginalStrategiesTest/*.SharedPrivatizedBeyondSharedMemoryIsAnError:MarginalStrategiesTest/*.BinStationaryIsBitwiseRepeatable:MarginalVsProjectors/GPU*:ExpectationZTest/GPU*:ReductionsGpuTest/*.AgreesWithTheCpuBackend:ReductionsGpuTest/*.TotalProbabilityOfAnUnnormalisedState:StateVectorTest/GPU*:GatesVsKronecker/GPU*:ApplyMatrixGpuTest/*.EveryKernelOnSmallStates:ApplyMatrixGpuTest/*.DenseTensorCorePathOnPartialTilesMatchesCpu:ApplyMatrixGpuTest/*.DenseTensorCorePathOnFewTilesPerBlockMatchesCpu:ApplyMatrixGpuTest/*.DenseTensorCorePathAcrossTilesMatchesCpu:ApplyMatrixGpuTest/*.WarpStreamKernelMatchesCpu:ApplyMatrixGpuTest/*.NamedDiagonalAndPermutationGatesMatchCpu:CircuitRun/GPU*:DmmaFragments.*:MarginalTransposeTest/*.NeighboursOfItsRange:MarginalSectorStoresTest/*:MarginalStepSegmentsTest/*:MarginalQueries/GPU_double.*:FusedRun/GPU_double.*:-MarginalQueries/*.OutcomeProbabilities'}
  for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 \
      "$tests" --gtest_filter="$filter" >"$out/$tool.log" 2>&1
    rc=$?
    record "compute-sanitizer $tool" "rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool.log" | tail -1)"
  done
fi

if want bench; then
  for bench in "$build"/bench/*_bench; do
    [[ -x $bench ]] || continue
    name=$(basename "$bench")
    "$bench" --benchmark_out="$out/$name.json" --benchmark_out_format=json >"$out/$name.log" 2>&1
    record "$name" "rc=$? $(grep -c '"name"' "$out/$name.json" 2>/dev/null) records"
  done
fi

echo
echo "== summary ($(head -2 "$out/gpu.txt" | tail -1))"
printf '%s\n' "${summary[@]}"
