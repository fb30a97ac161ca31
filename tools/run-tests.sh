#!/usr/bin/env bash
# Installs what zkpipe needs, builds it, and runs every test (CTest: unit tests, properties,
# interop with snarkjs and noble, model tests; GPU tests skip where no GPU is present).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/tools/install-deps.sh"
"$here/tools/build.sh"
cd "$here/build"
ctest --output-on-failure -j "$(nproc)" --timeout 1800
