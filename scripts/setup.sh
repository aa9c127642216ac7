#!/usr/bin/env bash
# Installs the Debian packages qmarg needs when they are missing (as root, with
# apt-get; otherwise says which are missing). The CUDA toolkit is not a Debian
# package here: it is found under /usr/local/cuda when present, and qmarg builds
# its CPU backend alone without it.
set -euo pipefail

packages=(cmake ninja-build g++ libeigen3-dev libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
          python3-matplotlib clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: add /usr/local/cuda/bin to PATH to build the CUDA backend" >&2
fi
