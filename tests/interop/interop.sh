#!/usr/bin/env bash
# Independent verification: zkpipe proves both built-in circuits on the CPU, then snarkjs
# (`snarkjs groth16 verify`) and @noble/curves (verify_noble.mjs) must accept each proof and
# reject a corrupted one. Needs tests/interop/node_modules (tools/install-deps.sh installs it).
set -u
zkpipe=$1
here=$(cd "$(dirname "$0")" && pwd)
snarkjs="$here/node_modules/.bin/snarkjs"
if [ ! -x "$snarkjs" ] || [ ! -d "$here/node_modules/@noble/curves" ]; then
  echo "interop: snarkjs/@noble/curves are not installed in $here/node_modules; run tools/install-deps.sh"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check WHAT EXPECTED_STATUS command...
  local what=$1 expected=$2; shift 2
  local out status
  out=$("$@" 2>&1); status=$?
  if { [ "$expected" = ok ] && [ "$status" -eq 0 ]; } || { [ "$expected" = reject ] && [ "$status" -ne 0 ]; }; then
    echo "ok: $what"
  else
    echo "FAIL: $what (status $status): $(tail -3 <<<"$out")"; failures=$((failures + 1))
  fi
}

for spec in "dense 2000" "poseidon-merkle 8000"; do
  set -- $spec
  name=$1 size=$2 dir="$work/$1"
  "$zkpipe" setup --circuit "$name" --constraints "$size" --out-dir "$dir" >/dev/null || { echo "FAIL: setup $name"; exit 1; }
  "$zkpipe" prove --key "$dir/proving.key" --proof "$dir/proof.json" --public "$dir/public.json" >/dev/null || { echo "FAIL: prove $name"; exit 1; }
  check "snarkjs accepts the $name proof" ok "$snarkjs" groth16 verify "$dir/verification_key.json" "$dir/public.json" "$dir/proof.json"
  check "noble accepts the $name proof" ok node "$here/verify_noble.mjs" "$dir/verification_key.json" "$dir/public.json" "$dir/proof.json"
  # Corrupt pi_c by swapping in pi_a (a valid curve point, the wrong one).
  node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync(process.argv[1]));p.pi_c=p.pi_a;fs.writeFileSync(process.argv[2],JSON.stringify(p));' "$dir/proof.json" "$dir/bad_proof.json"
  check "snarkjs rejects a corrupted $name proof" reject bash -c "'$snarkjs' groth16 verify '$dir/verification_key.json' '$dir/public.json' '$dir/bad_proof.json' | grep -q 'OK!'"
  check "noble rejects a corrupted $name proof" reject node "$here/verify_noble.mjs" "$dir/verification_key.json" "$dir/public.json" "$dir/bad_proof.json"
  check "zkpipe rejects a corrupted $name proof" reject "$zkpipe" verify --vk "$dir/verification_key.json" --proof "$dir/bad_proof.json" --public "$dir/public.json"
done
[ "$failures" -eq 0 ] && echo "interop: all passed" || { echo "interop: $failures failed"; exit 1; }
