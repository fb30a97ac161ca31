#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of the circom readers (clang, -fsanitize=fuzzer,address,
# undefined), seeded with tiny.circom's real .wtns/.r1cs/.zkey from ../fixtures.
#
#   fuzz.sh build OUT_DIR               compile fuzz_wtns, fuzz_r1cs, fuzz_zkey into OUT_DIR
#   fuzz.sh run OUT_DIR SECONDS [JOBS]  fuzz each target SECONDS (corpus kept in OUT_DIR/corpus-*),
#                                       JOBS parallel workers each (default 1); exit 1 on any finding
#
# Longer on demand, e.g. an hour per reader on 2 cores: tests/circom/fuzz/fuzz.sh run build-fuzz 3600 2
# Findings (crash-*, timeout-*, leak-*, oom-*) land in OUT_DIR/findings-<target>/ and replay with
# OUT_DIR/fuzz_<target> FILE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
mode=${1:?usage: fuzz.sh build|run OUT_DIR [SECONDS [JOBS]]}
out=${2:?OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
targets=(wtns r1cs zkey)

build() {
  local cxx=${CLANGXX:-$(command -v clang++-14 || command -v clang++ || true)}
  [ -n "$cxx" ] || { echo "fuzz.sh: no clang++ found (libFuzzer needs clang)"; exit 77; }
  local sources=("$root/engine/circom/bin_file.cpp" "$root/engine/circom/r1cs_file.cpp"
                 "$root/engine/circom/wtns_file.cpp" "$root/engine/circom/zkey_file.cpp")
  local flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
               -fno-sanitize-recover=undefined -DFMT_HEADER_ONLY -I"$root" -pthread)
  # Reader objects once, then one link per target; rebuilt only when a source is newer.
  local objects=()
  for src in "${sources[@]}"; do
    local obj="$out/$(basename "$src" .cpp).o"
    if [ ! -f "$obj" ] || [ -n "$(find "$root/engine" "$root/kernels" -newer "$obj" -name '*.[ch]pp' -print -quit)" ]; then
      "$cxx" "${flags[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" -c "$src" -o "$obj"
    fi
    objects+=("$obj")
  done
  for t in "${targets[@]}"; do
    local bin="$out/fuzz_$t"
    if [ ! -x "$bin" ] || [ "$here/fuzz_$t.cpp" -nt "$bin" ] || [ -n "$(find "${objects[@]}" -newer "$bin" -print -quit)" ]; then
      "$cxx" "${flags[@]}" "$here/fuzz_$t.cpp" "${objects[@]}" -o "$bin"
    fi
  done
  echo "fuzz.sh: built ${targets[*]/#/fuzz_} in $out"
}

run() {
  local seconds=${1:?SECONDS} jobs=${2:-1} status=0
  for t in "${targets[@]}"; do
    [ -x "$out/fuzz_$t" ] || { echo "fuzz.sh: $out/fuzz_$t missing: run 'fuzz.sh build $out' first"; exit 1; }
    local corpus="$out/corpus-$t" findings="$out/findings-$t"
    mkdir -p "$corpus" "$findings"
    cp "$here/../fixtures/tiny.$t" "$corpus/seed-tiny.$t"
    local log="$out/fuzz-$t.log"
    local args=("$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384
                -artifact_prefix="$findings/" -print_final_stats=1)
    [ "$jobs" -gt 1 ] && args+=(-fork="$jobs")
    if "$out/fuzz_$t" "${args[@]}" >"$log" 2>&1; then
      echo "fuzz_$t: no findings in ${seconds} s: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') runs," \
           "$(grep -E '^stat::peak_rss_mb' "$log" | awk '{print $2}') MB peak, corpus $(ls "$corpus" | wc -l) files," \
           "coverage $(grep -oE 'cov: [0-9]+' "$log" | tail -1)"
    else
      tail -60 "$log"
      echo "fuzz_$t: FINDING (see $findings and $log)"
      status=1
    fi
  done
  return $status
}

case $mode in
  build) build ;;
  run) shift 2; run "$@" ;;
  *) echo "usage: fuzz.sh build|run OUT_DIR [SECONDS [JOBS]]"; exit 2 ;;
esac
