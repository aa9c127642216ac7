#!/usr/bin/env bash
# Builds and runs every test: the release build (CPU tests; GPU tests run when a
# GPU is usable and skip otherwise; the installed-package consumer), then the
# CPU tests again under AddressSanitizer + UndefinedBehaviorSanitizer. The
# sanitizer build is -O1 -g1 (the sanitize preset): line tables are all a
# report's stack needs, and on two cores it builds in 7 minutes where -O2 -g
# took 15, its tests running as long (121 s).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
scripts/setup.sh

jobs=$(nproc)
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j "$jobs"
ctest --preset sanitize -j "$jobs"
scripts/fuzz.sh 60
