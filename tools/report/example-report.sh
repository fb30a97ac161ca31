#!/usr/bin/env bash
# The report of a measured 2^24 run beside its simulation, made from committed traces and checked
# in headless Chromium: zkpipe validate calibrates on the H200's 2^24 pageable run and predicts the
# pinned one (engine-h200-20261201), zkpipe sweep predicts that run's GPU utilization over
# synthesis threads x pool slabs, zkpipe report puts all of it on one page, and check_report.mjs
# opens the page (tools/report/check_report.mjs says what it checks) and takes its screenshots.
#
#   tools/report/example-report.sh ZKPIPE OUT [--charts DIR]
#
# OUT gets validation/, sweep.csv, report.html and report.png; --charts DIR one PNG per chart (the
# README's come from --charts model/report-screenshots). Exit 77 where chromium is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
zkpipe=$(realpath "$1")
out=$2
shift 2
traces=$here/scenarios/calibration/traces/engine-h200-20261201
run=new-poseidon-merkle-24-pinned
mkdir -p "$out"
"$zkpipe" validate --traces "$traces" --runs 'new-poseidon-merkle-24-*' --calibration "$here/scenarios/calibration/h200-h2d.toml" \
  --seeds 5 -j 2 -o "$out/validation" > "$out/validate.log"
# The predicted run's scenario with a [sweep] over the settings the heatmap shows.
{ cat "$out/validation/$run/scenario.toml"
  printf '\n[sweep]\n"policy.synthesis_threads" = [2, 4, 6, 8]\n"policy.pool_slabs" = [1, 2, 4, 8]\n'; } > "$out/sweep.toml"
"$zkpipe" sweep "$out/sweep.toml" -j 2 -o "$out/sweep.csv" > "$out/sweep.log" 2>&1
"$zkpipe" report "$traces/$run" --simulated "$out/validation/$run/simulated.csv" --validation "$out/validation/validation.md" \
  --sweep "$out/sweep.csv" --title "poseidon-merkle 2^24 on the H200, pinned staging: measured and simulated" -o "$out/report.html"
node "$here/tools/report/check_report.mjs" "$out/report.html" "$out/report.png" \
  --expect timeline-0,timeline-1,h2d,gpu-busy,phases,waits,heatmap "$@"
