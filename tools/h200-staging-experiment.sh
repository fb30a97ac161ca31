#!/usr/bin/env bash
# h200-staging-experiment.sh — the pageable-vs-pinned staging experiment (issue 4), rerunnable on
# any machine with a CUDA GPU, and end to end on the CPU backend at a tiny size.
#
# For each circuit (Filecoin-like poseidon-merkle and dense; default 8 partitions of 2^24-domain
# proofs, 16 synthesis threads loading host memory while the copies run):
#   pageable   the job with a/b/c in pageable memory (the driver's bounce-buffer copy path)
#   pinned     the same job with a/b/c written straight into slabs of a pinned pool
#   synth      the synthesis stage's capacity alone (partitions synthesized into slabs and dropped;
#              at least one partition per synthesis thread, so that every thread is busy)
#   gpu        the GPU stage's capacity alone (copy + kernels, no synthesis load; pinned slabs)
# then, for the sweep circuit, synthesis threads {4,8,12,16} x pool slabs {1,2,4,8} (pinned),
# each point measured --sweep-repeats times (runs sweep-t<T>-s<S>-r<k>, k = 1.. when more than one:
# `zkpipe validate` compares the model with the median of a point's runs). The sweep's runs are
# one `zkpipe prove --runs` on one loaded key (OUT/<circuit>/sweep-runs-r<K>.csv lists them in
# order), so that a run costs its job, not the key's loading. The list opens with a warm-up run at
# the first point's settings (warmup-r<K>, neither recorded nor kept): the first job after the
# key's loading synthesized 8-12 % slower than the same work run later in the pass (H200, 2026-12-05).
#
# Every run keeps its trace in OUT/<circuit>/<run>/ (trace.csv, the trace.json sidecar with
# settings, machine facts and the trace's summary, which the tables are read from,
# trace.perfetto.json for ui.perfetto.dev, stdout.log). The default
# OUT is scenarios/calibration/traces/staging-<host>-<UTC time>/: the folder `zkpipe calibrate`
# reads measured traces from (e.g. `zkpipe calibrate --trace OUT/*/*/trace.csv`). OUT/summary.md
# holds the table printed at the end, with the issue's expectations checked against it. Passes
# into one OUT add their rows to OUT/runs.tsv (a run measured again replaces its row).
#
# Usage: tools/h200-staging-experiment.sh [options]
#   --backend cuda|cpu|fake   prover backend (default cuda)
#   --constraints N           target constraints per partition (default 16773120: domain 2^24)
#   --partitions N            partitions per run (default 8)
#   --runs "..."              the comparison's runs per circuit (default "pageable pinned synth gpu")
#   --summary-only            rewrite OUT/summary.md from OUT/runs.tsv (e.g. after runs made in several passes)
#   --threads N               synthesis threads of the pageable/pinned/synth runs (default 16)
#   --workers N               GPU workers per GPU (default 2)
#   --circuits "A B"          circuits of the comparison (default "poseidon-merkle dense")
#   --sweep-circuit NAME      circuit of the sweep (default poseidon-merkle; "none" skips it)
#   --sweep-threads "..."     (default "4 8 12 16")     --sweep-slabs "..."  (default "1 2 4 8")
#   --sweep-constraints N     constraints per partition of the sweep (default: --constraints)
#   --sweep-repeats N         measurements of each sweep point (default 1: runs sweep-t<T>-s<S>)
#   --sweep-first-repeat K    number the repeats from K (runs ...-rK and on): more runs of a sweep measured
#                             before, into the same OUT, every thread count interleaved in this pass
#   --budget SIZE             host memory budget passed to every run (default: zkpipe's, 80% of free)
#   --pool-layout L           per-host|per-gpu: the pinned runs' pool layout (default: zkpipe's, per-host);
#                             every run uses every CUDA device (zkpipe prove's default)
#   --out DIR                 where traces and the summary go
#   --keys DIR                where proving keys are made once and reused (default out/keys)
#   --zkpipe PATH             the binary (default build/tools/zkpipe)
# Tiny end-to-end check on a CPU machine (only the size and backend change on the GPU machine):
#   tools/h200-staging-experiment.sh --backend cpu --constraints 1024 --threads 2 --out /tmp/staging
# Three more measurements of the 2^22 sweep's held-out points, next to the first ones:
#   tools/h200-staging-experiment.sh --runs "" --sweep-constraints 4190000 --sweep-slabs "2 8" --sweep-repeats 3 \
#     --out scenarios/calibration/traces/staging-h200-20261129T1157
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
zkpipe=$here/build/tools/zkpipe
backend=cuda
constraints=16773120
partitions=8
runs="pageable pinned synth gpu"
summary_only=false
threads=16
workers=2
circuits="poseidon-merkle dense"
sweep_circuit=poseidon-merkle
sweep_threads="4 8 12 16"
sweep_slabs="1 2 4 8"
sweep_constraints=
sweep_repeats=1
sweep_first_repeat=1
budget=()
pool_layout=()
out=$here/scenarios/calibration/traces/staging-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)
keys=$here/out/keys

while [ $# -gt 0 ]; do
  case $1 in
    --backend) backend=$2 ;;
    --constraints) constraints=$2 ;;
    --partitions) partitions=$2 ;;
    --runs) runs=$2 ;;
    --summary-only) summary_only=true; shift; continue ;;
    --threads) threads=$2 ;;
    --workers) workers=$2 ;;
    --circuits) circuits=$2 ;;
    --sweep-circuit) sweep_circuit=$2 ;;
    --sweep-threads) sweep_threads=$2 ;;
    --sweep-slabs) sweep_slabs=$2 ;;
    --sweep-constraints) sweep_constraints=$2 ;;
    --sweep-repeats) sweep_repeats=$2 ;;
    --sweep-first-repeat) sweep_first_repeat=$2 ;;
    --budget) budget=(--budget "$2") ;;
    --pool-layout) pool_layout=(--pool-layout "$2") ;;
    --out) out=$2 ;;
    --keys) keys=$2 ;;
    --zkpipe) zkpipe=$2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "h200-staging-experiment: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift 2
done
$summary_only || [ -x "$zkpipe" ] || { echo "h200-staging-experiment: no zkpipe binary at $zkpipe (build it, or give --zkpipe)" >&2; exit 1; }
mkdir -p "$out" "$keys"
rows=$out/runs.tsv
[ -f "$rows" ] || printf 'circuit\trun\tstaging\tthreads\tslabs\tproved\tpartitions_per_s\th2d_gbps\tidle_h2d_gbps\tidle_from\tgpu_util_pct\twait_pool_s\tstaging_memory\tsteady_partitions_per_s\tconstraints\n' >"$rows"

echo "h200-staging-experiment: backend $backend, $partitions partitions of $constraints constraints, $(nproc) cores," \
     "$(date -u +%FT%TZ), traces in $out"
$summary_only || ! command -v nvidia-smi >/dev/null || nvidia-smi --query-gpu=name,pcie.link.gen.current,pcie.link.width.current,memory.total \
  --format=csv,noheader >"$out/gpus.txt" 2>/dev/null || true

setup_backend=cpu
[ "$backend" = cuda ] && setup_backend=cuda  # the fixed-base products of setup on the GPU
key_for() {  # circuit constraints -> proving key path, made once
  local dir=$keys/$1-$2
  if [ ! -f "$dir/proving.key" ]; then
    echo "== setup $1 ($2 constraints, fixed-base products on $setup_backend) into $dir" >&2
    "$zkpipe" setup --circuit "$1" --constraints "$2" --backend "$setup_backend" --out-dir "$dir" >"$dir.setup.log" 2>&1 ||
      { mkdir -p "$dir"; cat "$dir.setup.log"; echo "h200-staging-experiment: setup of $1 failed" >&2; exit 1; }
  fi
  echo "$dir/proving.key"
}

# The run's figures from its sidecar (DIR/trace.json), tab-separated: proved, partitions/s wall,
# steady partitions/s, a/b/c H2D GB/s, idle H2D GB/s, the memory it was read from, GPU utilization
# %, pool wait s, the staging memory the copies used.
figures() {
  python3 - "$1/trace.json" <<'PY'
import json, sys
sidecar = json.load(open(sys.argv[1]))
summary, machine, settings = sidecar["summary"], sidecar["machine"], sidecar["settings"]
outcome = settings["outcome"]
rate = outcome["proved"] / max(outcome["wall_s"], 1e-9)
print("\t".join([str(outcome["proved"]), f"{rate:.3g}", f"{summary['steady_partitions_per_s']:.3g}",
                 f"{summary['h2d_gbps']:.3g}", f"{machine['idle_h2d_gbps']:.2f}", machine["idle_h2d_from"],
                 f"{100 * summary['gpu_utilization']:.1f}", f"{summary['wait_pool_s']:.3g}", settings["staging"]]))
PY
}

run() {  # circuit constraints run-name staging threads slabs [extra zkpipe options...]
  local circuit=$1 run_constraints=$2 name=$3 staging=$4 run_threads=$5 slabs=$6; shift 6
  local dir=$out/$circuit/$name key
  key=$(key_for "$circuit" "$run_constraints")
  mkdir -p "$dir"
  local slab_option=()
  [ "$staging" = pinned ] && slab_option=(--pool-slabs "$slabs" "${pool_layout[@]}")
  echo "== $circuit $name: staging $staging, $run_threads synthesis threads${slabs:+, $slabs slabs} $*"
  if ! "$zkpipe" prove --key "$key" --backend "$backend" --partitions "${run_partitions:-$partitions}" --synthesis-threads "$run_threads" \
      --staging "$staging" "${slab_option[@]}" --workers "$workers" "${budget[@]}" --trace-dir "$dir" \
      --proof "$dir/proof.json" --public "$dir/public.json" "$@" >"$dir/stdout.log" 2>&1; then
    tail -5 "$dir/stdout.log"; echo "h200-staging-experiment: run $circuit/$name failed (log: $dir/stdout.log)" >&2; exit 1
  fi
  record
}

list_runs() {  # circuit constraints list: the list's pinned runs (tools/run_list.hpp) on one loaded key
  local circuit=$1 run_constraints=$2 list=$3 key
  key=$(key_for "$circuit" "$run_constraints")
  echo "== $circuit: $(($(wc -l <"$list") - 1)) runs of $list, pinned, on one loaded key"
  if ! "$zkpipe" prove --key "$key" --backend "$backend" --partitions "$partitions" --staging pinned "${pool_layout[@]}" \
      --workers "$workers" "${budget[@]}" --trace-dir "$out/$circuit" --runs "$list"; then
    echo "h200-staging-experiment: the runs of $list failed (each run's log: $out/$circuit/<run>/stdout.log)" >&2; exit 1
  fi
  local name run_threads slabs
  while IFS=, read -r name run_threads slabs; do
    local dir=$out/$circuit/$name staging=pinned
    if [[ $name == warmup-* ]]; then rm -rf "$dir"; continue; fi
    record
  done < <(tail -n +2 "$list")
}

record() {  # the run in $dir ($circuit $name $staging $run_threads $slabs $run_constraints): its row in runs.tsv
  local proved rate steady h2d idle idle_from util wait_pool memory
  IFS=$'\t' read -r proved rate steady h2d idle idle_from util wait_pool memory < <(figures "$dir")
  awk -F'\t' -v c="$circuit" -v n="$name" '!($1 == c && $2 == n)' "$rows" >"$rows.tmp" && mv "$rows.tmp" "$rows"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$circuit" "$name" "$staging" "$run_threads" \
    "${slabs:--}" "$proved" "$rate" "${h2d:-0}" "$idle" "$idle_from" "${util:-0}" "${wait_pool:-0}" "$memory" "${steady:-0}" \
    "$run_constraints" >>"$rows"
  echo "   $proved partitions, $rate partitions/s ($steady/s after the first), a/b/c H2D ${h2d:-0} GB/s (idle $idle GB/s from $idle_from), GPU ${util:-0} %"
}

pinned_slabs=$((threads + 2 * workers))  # every synthesis thread and every worker holds one partition
synth_partitions=$((partitions > threads ? partitions : threads))
$summary_only && runs= && sweep_circuit=none
for circuit in $circuits; do
  for name in $runs; do
    case $name in
      pageable) run "$circuit" "$constraints" pageable pageable "$threads" "" ;;
      pinned) run "$circuit" "$constraints" pinned pinned "$threads" "$pinned_slabs" ;;
      synth) run_partitions=$synth_partitions run "$circuit" "$constraints" synth pinned "$threads" "$pinned_slabs" --stage-alone synthesis ;;
      gpu) run "$circuit" "$constraints" gpu pinned 2 "$((2 + 2 * workers))" --stage-alone gpu ;;  # two replaying threads keep the workers fed
      *) echo "h200-staging-experiment: unknown run $name (pageable, pinned, synth, gpu)" >&2; exit 2 ;;
    esac
  done
done
if [ "$sweep_circuit" != none ]; then
  last_repeat=$((sweep_first_repeat + sweep_repeats - 1))  # runs are numbered -r<k> once there is more than one
  list=$out/$sweep_circuit/sweep-runs-r$sweep_first_repeat.csv
  mkdir -p "$out/$sweep_circuit"
  echo run,synthesis_threads,pool_slabs >"$list"
  read -r first_threads _ <<<"$sweep_threads"; read -r first_slabs _ <<<"$sweep_slabs"
  echo "warmup-r$sweep_first_repeat,$first_threads,$first_slabs" >>"$list"
  for r in $(seq "$sweep_first_repeat" "$last_repeat"); do  # repeats interleaved: a drift of the machine spreads over every point
    for t in $sweep_threads; do
      for s in $sweep_slabs; do
        name=sweep-t$t-s$s
        [ "$last_repeat" -gt 1 ] && name=$name-r$r
        echo "$name,$t,$s" >>"$list"
      done
    done
  done
  list_runs "$sweep_circuit" "${sweep_constraints:-$constraints}" "$list"
fi

# The table, and the issue's expectations checked per circuit.
summary=$out/summary.md
cores=$(nproc)
if $summary_only; then  # the measuring machine's cores, from a run's sidecar
  sidecar=$(ls "$out"/*/*/trace.json 2>/dev/null | head -1)
  [ -n "$sidecar" ] && cores=$(grep -m1 -oE '"cores": *[0-9]+' "$sidecar" | grep -oE '[0-9]+$')
fi
{
  echo "# Staging experiment: backend $backend, $partitions partitions of $constraints constraints (sweep: ${sweep_constraints:-$constraints}), $cores cores, $(date -u +%F)"
  echo
  echo "partitions/s: completed / wall time (pipeline fill included); steady: (completed - 1) / time from the first"
  echo "completion to the last, the rate once the pipeline is full. Checks use the steady rate, except for the synthesis"
  echo "stage alone, whose partitions/s has no fill to exclude (synthesis is the first stage; its steady rate is not"
  echo "defined: it ends no partition with an assemble or verify span)."
  echo
  echo "| circuit | constraints | run | staging (memory) | synth threads | slabs | proved | partitions/s | steady partitions/s | a/b/c H2D GB/s | idle H2D GB/s | GPU util % | pool wait s |"
  echo "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$rows" | awk -F'\t' '{ printf "| %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s |\n",
    $1, $15, $2, $3, $13, $4, $5, $6, $7, $14, $8, $9, $10, $11, $12 }'
  echo
  for circuit in $circuits; do
    awk -F'\t' -v c="$circuit" '
      $1 == c { rate[$2] = ($2 == "synth") ? $7 : $14; h2d[$2] = $8; idle[$2] = $9; from[$2] = $10; util[$2] = $11 }
      END {
        # A check whose runs were not made in this folder says so instead of passing on empty values.
        if ("pageable" in h2d)
          printf "- %s: pageable copies %.2f GB/s (expected single-digit GB/s: %s)\n", c, h2d["pageable"],
                 (h2d["pageable"] + 0 < 10) ? "holds" : "does not hold"
        else
          printf "- %s: pageable copies not measured here (no pageable run)\n", c
        if (!("pinned" in rate)) {
          printf "- %s: the pinned checks need a pinned run; none here\n", c
          exit
        }
        if (from["pinned"] == "pinned")
          printf "- %s: pinned copies %.2f GB/s = %.0f%% of the idle pinned %.2f GB/s (expected >= 80%%: %s)\n", c,
                 h2d["pinned"], 100 * h2d["pinned"] / idle["pinned"], idle["pinned"],
                 (h2d["pinned"] + 0 >= 0.8 * idle["pinned"]) ? "holds" : "does not hold"
        else
          printf "- %s: pinned run staged from %s memory (no pinning here): the 80%%-of-idle check needs a CUDA device\n", c, from["pinned"]
        if (!("synth" in rate) || !("gpu" in rate)) {
          printf "- %s: pinned against the slowest stage alone needs the synth and gpu runs; not both here\n", c
          exit
        }
        slowest = (rate["synth"] + 0 < rate["gpu"] + 0) ? "synth" : "gpu"
        capacity = rate[slowest]
        printf "- %s: pinned %.3g partitions/s (steady) vs the slowest stage alone (%s, %.3g partitions/s steady): %.0f%% (expected >= 90%%: %s)\n",
               c, rate["pinned"], slowest, capacity, 100 * rate["pinned"] / capacity,
               (rate["pinned"] + 0 >= 0.9 * capacity) ? "holds" : "does not hold"
        if (slowest == "gpu")
          printf "- %s: GPU utilization with pinned staging %.1f%% (expected >= 90%% where the GPU is the slowest stage: %s)\n",
                 c, util["pinned"], (util["pinned"] + 0 >= 90) ? "holds" : "does not hold"
      }' "$rows"
  done
} >"$summary.partial"  # renamed whole, as zkpipe writes its files
mv -f "$summary.partial" "$summary"
cat "$summary"
echo "h200-staging-experiment: traces and summary in $out"
