#!/usr/bin/env bash
# zkpipe (CPU backend) against `snarkjs groth16 prove` on the same snarkjs .zkey and circom .wtns,
# alternating for ROUNDS rounds in one run on this machine: prints the median wall times (whole
# process: start-up, reading the key, proving, writing JSON), the median CPU times (user + system:
# a fairer view when other work shares the cores; the load average is printed) and their ratios,
# and checks the last proofs of both with `snarkjs groth16 verify`. zkpipe also verifies its proof before writing it; --r1cs is not given,
# so neither side checks the constraints.
#
# usage: tools/bench_circom.sh [FIXTURE_DIR] [ZKPIPE] [ROUNDS]
#   FIXTURE_DIR  a folder with one *.zkey, witness.wtns and verification_key.json
#                (default ../shared/data/circom/mulchain_16000 beside the clone)
#   ZKPIPE       the zkpipe binary (default build/tools/zkpipe)
#   ROUNDS       rounds of one zkpipe and one snarkjs proof each (default 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fixture=${1:-$root/../shared/data/circom/mulchain_16000}
zkpipe=${2:-$root/build/tools/zkpipe}
rounds=${3:-3}
snarkjs=$root/tests/interop/node_modules/.bin/snarkjs
[ -x "$snarkjs" ] || { echo "bench_circom: $snarkjs missing: run tools/install-deps.sh"; exit 1; }
[ -x "$zkpipe" ] || { echo "bench_circom: $zkpipe missing: build zkpipe or pass its path"; exit 1; }
zkey=$(ls "$fixture"/*.zkey 2>/dev/null | head -1)
wtns=$fixture/witness.wtns vk=$fixture/verification_key.json
[ -n "$zkey" ] && [ -f "$wtns" ] && [ -f "$vk" ] || { echo "bench_circom: $fixture lacks a .zkey, witness.wtns or verification_key.json"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs a command, its output in $work/NAME.log; appends its wall and CPU (user + system) seconds
# to $work/NAME.wall and $work/NAME.cpu.
measure() {
  local name=$1; shift
  local TIMEFORMAT='%R %U %S' wall user sys
  { time "$@" >"$work/$name.log" 2>&1; } 2>"$work/$name.time" ||
    { cat "$work/$name.log"; echo "bench_circom: $name failed"; exit 1; }
  read -r wall user sys <"$work/$name.time"
  echo "$wall" >>"$work/$name.wall"
  awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f\n", u + s }' >>"$work/$name.cpu"
}
median() { sort -n "$1" | sed -n "$(((rounds + 1) / 2))p"; }

echo "bench_circom: $(basename "$zkey") + $(basename "$wtns"), $rounds rounds, $(nproc) cores," \
     "$(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  measure zkpipe "$zkpipe" prove --backend cpu --zkey "$zkey" --wtns "$wtns" \
    --proof "$work/zkpipe.proof.json" --public "$work/zkpipe.public.json"
  measure snarkjs "$snarkjs" groth16 prove "$zkey" "$wtns" "$work/snarkjs.proof.json" "$work/snarkjs.public.json"
  echo "round $round: zkpipe $(tail -1 "$work/zkpipe.wall") s, snarkjs $(tail -1 "$work/snarkjs.wall") s (wall)"
done
for who in zkpipe snarkjs; do
  "$snarkjs" groth16 verify "$vk" "$work/$who.public.json" "$work/$who.proof.json" 2>&1 | grep -q "OK!" ||
    { echo "bench_circom: snarkjs rejected $who's proof"; exit 1; }
done
echo "zkpipe phases, last round:"
grep -E "^  [a-z_0-9]+ " "$work/zkpipe.log"
zkpipe_wall=$(median "$work/zkpipe.wall") zkpipe_cpu=$(median "$work/zkpipe.cpu")
snarkjs_wall=$(median "$work/snarkjs.wall") snarkjs_cpu=$(median "$work/snarkjs.cpu")
echo "zkpipe (cpu)   median wall ${zkpipe_wall} s   cpu ${zkpipe_cpu} s"
echo "snarkjs        median wall ${snarkjs_wall} s   cpu ${snarkjs_cpu} s"
awk -v zw="$zkpipe_wall" -v sw="$snarkjs_wall" -v zc="$zkpipe_cpu" -v sc="$snarkjs_cpu" 'BEGIN {
  printf "ratio snarkjs/zkpipe: wall %.2f, cpu %.2f (above 1: zkpipe is faster)\n", sw / zw, sc / zc }'
echo "both proofs verified by snarkjs groth16 verify"
