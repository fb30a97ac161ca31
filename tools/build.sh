#!/usr/bin/env bash
# Configures and builds zkpipe into build/ (Release). CUDA kernels are built when nvcc is found.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$here/build" -j "$(nproc)"
