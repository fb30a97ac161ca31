#!/usr/bin/env bash
# zkpipe's CPU prover on its built-in `dense` circuit of 16,000 constraints (domain 2^14, dense
# witness) against `snarkjs groth16 prove` on the circom mulchain_16000 fixture (same domain,
# dense witness), alternating, in one run on this machine; median wall times and their ratio.
# (tools/bench_circom.sh compares the two on the very same .zkey and .wtns.)
# Usage: tools/bench/bench-vs-snarkjs.sh [ZKPIPE] [FIXTURE_DIR] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
zkpipe=${1:-$here/build/tools/zkpipe}
fixture=${2:-$here/../shared/data/circom/mulchain_16000}
rounds=${3:-3}
snarkjs="$here/tests/interop/node_modules/.bin/snarkjs"
[ -x "$snarkjs" ] || { echo "snarkjs missing: run tools/install-deps.sh"; exit 1; }
[ -f "$fixture/mulchain_16000_final.zkey" ] || { echo "fixture missing: $fixture"; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
wall() { local t0 t1; t0=$(date +%s.%N); "$@" >"$work/last.log" 2>&1 || { cat "$work/last.log"; exit 1; }; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b - a}'; }
median() { sort -n | sed -n "$(( (rounds + 1) / 2 ))p"; }

"$zkpipe" setup --circuit dense --constraints 16000 --out-dir "$work/dense" >/dev/null
for round in $(seq "$rounds"); do
  z=$(wall "$zkpipe" prove --key "$work/dense/proving.key" --proof "$work/p.json" --public "$work/pub.json")
  s=$(wall "$snarkjs" groth16 prove "$fixture/mulchain_16000_final.zkey" "$fixture/witness.wtns" "$work/sp.json" "$work/spub.json")
  echo "round $round: zkpipe dense-16000 ${z} s, snarkjs mulchain_16000 ${s} s"
  echo "$z" >> "$work/zkpipe"; echo "$s" >> "$work/snarkjs"
done
z=$(median < "$work/zkpipe"); s=$(median < "$work/snarkjs")
echo "median of $rounds: zkpipe ${z} s, snarkjs ${s} s, snarkjs/zkpipe $(awk -v a="$s" -v b="$z" 'BEGIN{printf "%.1f", a / b}')x"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
