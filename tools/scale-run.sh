#!/usr/bin/env bash
# scale-run.sh — one large job with zkpipe's default settings, measured from outside: makes a
# poseidon-merkle proving key of N constraints (timed, its size on disk), proves P partitions with
# every setting left to zkpipe (its log, trace and sidecar kept), and samples what the job held:
# the process's peak resident memory (/usr/bin/time) and the GPUs' memory in use every 0.5 s
# (nvidia-smi). Writes OUT/summary.txt, OUT/setup.log, OUT/prove.log, OUT/gpu-memory.csv and
# OUT/trace/ (trace.csv, trace.json); proofs are verified by `zkpipe prove` as it writes them.
# Usage: tools/scale-run.sh OUT CONSTRAINTS [PARTITIONS] [ZKPIPE]
#   e.g. tools/scale-run.sh /tmp/scale26 67100000 3   (domain 2^26; a 2^27 domain: 134200000)
# KEYS (default /tmp/zkpipe-scale-keys) is where the key is made; an existing key of that size is reused.
set -uo pipefail
out=${1:?usage: scale-run.sh OUT CONSTRAINTS [PARTITIONS] [ZKPIPE]}
constraints=${2:?usage: scale-run.sh OUT CONSTRAINTS [PARTITIONS] [ZKPIPE]}
partitions=${3:-3}
zkpipe=${4:-build/tools/zkpipe}
keys=${KEYS:-/tmp/zkpipe-scale-keys}/$constraints
mkdir -p "$out" "$keys"
summary=$out/summary.txt
note() { echo "$*" | tee -a "$summary"; }
: >"$summary"
note "scale-run: poseidon-merkle, $constraints constraints, $partitions partitions, $(date -u +%FT%TZ)"
note "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) memory, disk free $(df -h --output=avail "$keys" | tail -1 | tr -d ' ')"
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader | sed 's/^/gpu: /' | tee -a "$summary"

# Peak resident memory and wall time of one command, from GNU time's report in LOG.
peak_of() { awk -F': ' '/Maximum resident set size/ {printf "%.1f GiB", $2 / 1048576}' "$1"; }
wall_of() { awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$1"; }

if [ ! -f "$keys/proving.key" ]; then
  /usr/bin/time -v "$zkpipe" setup --circuit poseidon-merkle --constraints "$constraints" --backend cuda \
    --out-dir "$keys" >"$out/setup.log" 2>&1
  status=$?
  note "setup: exit $status, wall $(wall_of "$out/setup.log"), peak RSS $(peak_of "$out/setup.log"), key $(du -h --apparent-size "$keys/proving.key" 2>/dev/null | cut -f1)"
  [ $status -eq 0 ] || { tail -5 "$out/setup.log" | tee -a "$summary"; exit $status; }
fi

nvidia-smi --query-gpu=timestamp,index,memory.used --format=csv,noheader,nounits -lms 500 >"$out/gpu-memory.csv" &
sampler=$!
/usr/bin/time -v "$zkpipe" prove --key "$keys/proving.key" --partitions "$partitions" --trace-dir "$out/trace" \
  --proof "$out/proof.json" --public "$out/public.json" >"$out/prove.log" 2>&1
status=$?
kill $sampler 2>/dev/null
note "prove: exit $status, wall $(wall_of "$out/prove.log"), peak RSS $(peak_of "$out/prove.log"), device memory high-water $(awk -F', ' '$3 > m {m = $3} END {printf "%.0f MiB", m}' "$out/gpu-memory.csv")"
grep -E "^engine: |^prove: .*proved|error" "$out/prove.log" | tail -12 | tee -a "$summary"
cp "$keys/verification_key.json" "$out/" 2>/dev/null
exit $status
