#!/usr/bin/env bash
# Installs everything zkpipe needs on a fresh Debian machine. Idempotent; safe to run again.
# Debian packages for the build, tests and the Debian package (help2man: its man pages); from npm,
# snarkjs for the independent verifier and ECharts and playwright-core for the report.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
packages=(build-essential cmake pkg-config libsimgrid-dev libeigen3-dev libgtest-dev
          librapidcheck-dev libfccp-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
          libfmt-dev libbenchmark-dev chromium clang-14 libclang-rt-14-dev help2man)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
# Node.js: the machine's own (it may come from NodeSource, whose nodejs package carries npm and
# conflicts with Debian's npm), else Debian's.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-deps: apt-get install nodejs npm"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm
fi
if [ ! -x "$here/tests/interop/node_modules/.bin/snarkjs" ] || [ ! -x "$here/tests/interop/node_modules/.bin/circom2" ] ||
   [ ! -d "$here/tests/interop/node_modules/@noble/curves" ]; then
  echo "install-deps: npm install (snarkjs, @noble/curves, circom2, circomlib) in tests/interop"
  (cd "$here/tests/interop" && npm install --no-audit --no-fund --loglevel=error)
fi
# The report's charting library (ECharts, inlined into each page) and its browser check
# (playwright-core, driving Debian's chromium: no browser download).
if [ ! -f "$here/tools/report/node_modules/echarts/dist/echarts.min.js" ] || [ ! -d "$here/tools/report/node_modules/playwright-core" ]; then
  echo "install-deps: npm install (echarts, playwright-core) in tools/report"
  (cd "$here/tools/report" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error)
fi
echo "install-deps: done"
