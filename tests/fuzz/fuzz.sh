#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of every reader of a user's file (clang,
# -fsanitize=fuzzer,address,undefined), each seeded with committed files of its format:
#
#   fuzz.sh build OUT_DIR                          compile every fuzz_<target> into OUT_DIR
#   fuzz.sh run OUT_DIR SECONDS [JOBS [TARGET...]]  fuzz each target (default: all) SECONDS (corpus kept in
#                                                  OUT_DIR/corpus-<target>), JOBS parallel workers each
#                                                  (default 1); exit 1 on any finding
#
# Targets: wtns r1cs zkey (circom), proving_key, proof_json public_json vk_json (snarkjs JSON),
# trace_csv sidecar (traces), scenario (the model's TOML), cuzk_log (`zkpipe import cuzk`),
# calibrate (`zkpipe calibrate` on a trace beside a fixed pageable two-worker sidecar). Inputs
# that once crashed a reader lie in regressions/<target>/ and join its corpus on every run.
# Longer on demand, e.g. an hour per reader on 2 cores: tests/fuzz/fuzz.sh run build-fuzz 3600 2
# FUZZ_SEED=N fixes libFuzzer's seed (CTest's runs use 1, so that CI is repeatable; 0, the default,
# draws one). Findings (crash-*, timeout-*, leak-*, oom-*) land in OUT_DIR/findings-<target>/ and replay with
# OUT_DIR/fuzz_<target> FILE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mode=${1:?usage: fuzz.sh build|run OUT_DIR [SECONDS [JOBS [TARGET...]]]}
out=${2:?OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
targets=(wtns r1cs zkey proving_key proof_json public_json vk_json trace_csv sidecar scenario cuzk_log calibrate)

keys="engine/groth16/keys.cpp engine/r1cs/r1cs.cpp engine/util/atomic_file.cpp kernels/util/parallel.cpp"
circom="engine/circom/bin_file.cpp engine/circom/r1cs_file.cpp engine/circom/wtns_file.cpp engine/circom/zkey_file.cpp $keys"
snarkjs_json="engine/groth16/snarkjs_json.cpp engine/groth16/pairing.cpp engine/util/decimal.cpp engine/util/atomic_file.cpp"
policy="engine/policy/scheduling_policy.cpp engine/policy/device_memory.cpp engine/policy/job_settings.cpp"
trace="engine/trace/trace.cpp engine/trace/trace_csv.cpp engine/trace/sidecar.cpp engine/trace/summary.cpp engine/util/atomic_file.cpp
       $policy"
declare -A sources=(
  [wtns]=$circom [r1cs]=$circom [zkey]=$circom
  [proving_key]=$keys
  [proof_json]=$snarkjs_json [public_json]=$snarkjs_json [vk_json]=$snarkjs_json
  [trace_csv]=$trace [sidecar]=$trace
  [cuzk_log]="model/cuzk_import.cpp model/cuzk_log.cpp engine/trace/perfetto.cpp $trace"
  [scenario]="model/scenario.cpp engine/trace/trace.cpp $policy engine/faults/fault_injector.cpp"
)
sources[calibrate]="model/calibration.cpp model/gpu_kernels.cpp model/trace_attempts.cpp model/sidecar_facts.cpp
                    model/scenario.cpp engine/faults/fault_injector.cpp $trace"
traces=scenarios/calibration/traces/staging-h200-20261129T1620/poseidon-merkle/synth
proofs=scenarios/calibration/traces/staging-h200-20261129T1620/dense/pageable
declare -A libraries=([scenario]=-ltomlplusplus [calibrate]=-ltomlplusplus)
checks24=scenarios/calibration/traces/checks24-h200-20261203/poseidon-merkle/t16-w2-pageable-r1
declare -A seeds=(
  [wtns]=tests/circom/fixtures/tiny.wtns [r1cs]=tests/circom/fixtures/tiny.r1cs [zkey]=tests/circom/fixtures/tiny.zkey
  [proving_key]=tests/fuzz/seeds/dense-4.key
  [proof_json]=$proofs/proof-0.json [public_json]=$proofs/public-0.json [vk_json]=tests/data/snarkjs_mulchain16000_vk.json
  # version 2 and version 1 (no attempt, worker) traces
  [trace_csv]="$traces/trace.csv scenarios/calibration/traces/staging-h200-20261129T1020/dense/pageable/trace.csv"
  [sidecar]=$traces/trace.json
  [cuzk_log]="tests/model/fixtures/cuzk/stderr.log tests/model/fixtures/cuzk/merged.log"
  [calibrate]="$checks24/trace.csv $traces/trace.csv"
  [scenario]="scenarios/seed-pageable-vs-pinned.toml scenarios/h200-pool-sizing.toml scenarios/calibration/h200-h2d.toml
              scenarios/calibration/traces/sweep-h200-20261201/calibration-poseidon-merkle-4181100.toml"
)

build() {
  local cxx=${CLANGXX:-$(command -v clang++-14 || command -v clang++ || true)}
  [ -n "$cxx" ] || { echo "fuzz.sh: no clang++ found (libFuzzer needs clang)"; exit 77; }
  # The scenario fuzzer links toml++ as zkpipe does (Debian's libtomlplusplus, not instrumented):
  # toml++ 3.3.0 as instrumented headers trips its own debug assertion on [#a] and reaches
  # __builtin_unreachable on some non-ASCII characters (marzer/tomlplusplus#190, #295; the
  # shipped library answers both with a parse error). It resolves calibration includes in
  # scenarios/, as a scenario there would.
  local flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
               -fno-sanitize-recover=undefined -DFMT_HEADER_ONLY -DTOML_HEADER_ONLY=0 -DTOML_SHARED_LIB=1
               -DZKPIPE_SCENARIOS_DIR="\"$root/scenarios\"" -DZKPIPE_FUZZ_SIDECAR="\"$root/$checks24/trace.json\""
               -I"$root" -I"$root/engine" -I"$root/model" -I/usr/include/eigen3 -pthread)
  # Each source compiled once, then one link per target; rebuilt only when a source is newer.
  local -A objects=()
  for src in $(printf '%s\n' "${sources[@]}" | tr ' ' '\n' | sort -u); do
    local obj="$out/$(echo "${src%.cpp}" | tr / _).o"
    if [ ! -f "$obj" ] || [ -n "$(find "$root/engine" "$root/kernels" "$root/model" -newer "$obj" -name '*.[ch]pp' -print -quit)" ]; then
      "$cxx" "${flags[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" -c "$root/$src" -o "$obj"
    fi
    objects[$src]=$obj
  done
  for t in "${targets[@]}"; do
    local bin="$out/fuzz_$t" linked=()
    for src in ${sources[$t]}; do linked+=("${objects[$src]}"); done
    if [ ! -x "$bin" ] || [ "$here/fuzz_$t.cpp" -nt "$bin" ] || [ "$here/fuzz_input_file.hpp" -nt "$bin" ] ||
       [ -n "$(find "${linked[@]}" -newer "$bin" -print -quit)" ]; then
      "$cxx" "${flags[@]}" "$here/fuzz_$t.cpp" "${linked[@]}" ${libraries[$t]:-} -o "$bin"
    fi
  done
  echo "fuzz.sh: built ${targets[*]/#/fuzz_} in $out"
}

run() {
  local seconds=${1:?SECONDS} jobs=${2:-1} status=0
  shift $(($# < 2 ? $# : 2))
  local chosen=("$@")
  [ ${#chosen[@]} -gt 0 ] || chosen=("${targets[@]}")
  for t in "${chosen[@]}"; do
    [ -n "${sources[$t]:-}" ] || { echo "fuzz.sh: no target $t (targets: ${targets[*]})"; exit 2; }
    [ -x "$out/fuzz_$t" ] || { echo "fuzz.sh: $out/fuzz_$t missing: run 'fuzz.sh build $out' first"; exit 1; }
    local corpus="$out/corpus-$t" findings="$out/findings-$t"
    mkdir -p "$corpus" "$findings"
    for seed in ${seeds[$t]}; do cp "$root/$seed" "$corpus/seed-$(echo "$seed" | tr / _)"; done
    [ -d "$here/regressions/$t" ] && cp "$here/regressions/$t"/* "$corpus/"
    local log="$out/fuzz-$t.log"
    local args=("$corpus" -max_total_time="$seconds" -seed="${FUZZ_SEED:-0}" -timeout=10 -rss_limit_mb=2048 -max_len=16384
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
  *) echo "usage: fuzz.sh build|run OUT_DIR [SECONDS [JOBS [TARGET...]]]"; exit 2 ;;
esac
