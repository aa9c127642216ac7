#!/usr/bin/env bash
# The main job: builds qmarg and runs the GHZ example circuit, printing its
# marginal distribution. It simulates on the GPU when one is usable and on the
# CPU otherwise, and says which on stderr. Extra arguments go to `qmarg run`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target qmarg_cli
exec build/release/tools/qmarg run examples/ghz.qasm "$@"
