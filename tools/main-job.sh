#!/usr/bin/env bash
# The main job on a fresh machine: install, build, then set up, prove and verify a built-in
# circuit on the CPU (phase timings printed), check the proof with snarkjs too, and simulate the
# seed's situation (pageable vs pinned staging on a PCIe Gen5 H200 host) with the SimGrid model.
# Usage: tools/main-job.sh [circuit] [constraints]   (default: poseidon-merkle 60000)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
circuit=${1:-poseidon-merkle}
constraints=${2:-60000}
"$here/tools/install-deps.sh"
"$here/tools/build.sh"
zkpipe="$here/build/tools/zkpipe"
out="$here/out/main-job"
mkdir -p "$out"
echo "== setup: $circuit, $constraints constraints"
"$zkpipe" setup --circuit "$circuit" --constraints "$constraints" --out-dir "$out"
echo "== prove (CPU backend)"
"$zkpipe" prove --key "$out/proving.key" --proof "$out/proof.json" --public "$out/public.json"
echo "== verify (zkpipe)"
"$zkpipe" verify --vk "$out/verification_key.json" --proof "$out/proof.json" --public "$out/public.json"
echo "== verify (snarkjs)"
"$here/tests/interop/node_modules/.bin/snarkjs" groth16 verify "$out/verification_key.json" "$out/public.json" "$out/proof.json"
echo "== simulate: the seed's situation, pageable vs pinned staging (scenarios/seed-pageable-vs-pinned.toml)"
"$zkpipe" sweep "$here/scenarios/seed-pageable-vs-pinned.toml" -o "$out/seed-sweep.csv"
