#!/usr/bin/env bash
# Configures and builds zkpipe into build/ (Release). CUDA kernels are built when nvcc is found.
# ZKPIPE_WARNINGS_AS_ERRORS=1 (as CI sets it) makes any compiler warning fail the build.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_COMPILE_WARNING_AS_ERROR="$([ "${ZKPIPE_WARNINGS_AS_ERRORS:-0}" = 1 ] && echo ON || echo OFF)" >/dev/null
cmake --build "$here/build" -j "$(nproc)"
