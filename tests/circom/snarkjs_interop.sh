#!/usr/bin/env bash
# End to end against code nobody here wrote: circom2 compiles each test circuit for bls12381,
# snarkjs makes its Groth16 key and witness, zkpipe proves (CPU backend, --r1cs check), and
# `snarkjs groth16 verify` must accept zkpipe's proof. A witness with one value changed must make
# zkpipe exit non-zero before any proof file exists, with and without --r1cs. When ../shared is
# there, the 2^14 mulchain fixture is proved and verified too.
#
# usage: snarkjs_interop.sh ZKPIPE NODE_MODULES SHARED_DIR WORK_DIR
# Exit 77 (skipped) only when snarkjs/circom2 are not installed or no powers of tau can be had.
set -euo pipefail
zkpipe=$(realpath -m "$1") node_modules=$(realpath -m "$2") shared=$(realpath -m "$3") work=$(realpath -m "$4")
here=$(cd "$(dirname "$0")" && pwd)
snarkjs=$node_modules/.bin/snarkjs
circom2=$node_modules/.bin/circom2
for tool in "$snarkjs" "$circom2"; do
  if [ ! -x "$tool" ]; then
    echo "SKIP: $tool is missing: run 'npm install' in tests/interop (tools/install-deps.sh)"
    exit 77
  fi
done
[ -d "$node_modules/circomlib/circuits" ] || { echo "SKIP: circomlib is missing: run 'npm install' in tests/interop"; exit 77; }
mkdir -p "$work"
cd "$work"

# A prepared powers of tau of power 12 (circuits below 4096 rows): ../shared's, else one made
# here once (about 3 minutes on 2 cores) and kept in the build folder.
ptau=$shared/data/circom/pot12_final.ptau
if [ ! -f "$ptau" ]; then
  ptau=$work/pot12_final.ptau
  if [ ! -f "$ptau" ]; then
    echo "no $shared/data/circom/pot12_final.ptau: making a 2^12 powers of tau (a few minutes)"
    if ! { "$snarkjs" powersoftau new bls12381 12 pot12_0000.ptau &&
           "$snarkjs" powersoftau contribute pot12_0000.ptau pot12_0001.ptau --name=ci -e="zkpipe ci" &&
           "$snarkjs" powersoftau prepare phase2 pot12_0001.ptau pot12_final.ptau.tmp; } >ptau.log 2>&1; then
      cat ptau.log
      echo "SKIP: no powers of tau: ../shared/data/circom is absent and making one failed"
      exit 77
    fi
    mv pot12_final.ptau.tmp "$ptau"
    rm -f pot12_0000.ptau pot12_0001.ptau
  fi
fi

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# snarkjs prints OK! for a valid proof (its exit status is not reliable across versions).
snarkjs_accepts() {  # vk public proof
  local out
  out=$("$snarkjs" groth16 verify "$1" "$2" "$3" 2>&1 || true)
  echo "$out" | tail -1
  grep -q "OK!" <<<"$out"
}

# Copy of `file` with the low byte of its last 32-byte value flipped (the last witness value).
corrupt_last_value() {  # file out
  cp "$1" "$2"
  local size offset byte
  size=$(stat -c %s "$2")
  offset=$((size - 32))
  byte=$(od -An -tu1 -j "$offset" -N1 "$2" | tr -d ' ')
  printf "$(printf '\\%03o' $((byte ^ 1)))" | dd of="$2" bs=1 seek="$offset" conv=notrunc status=none
}

# Proves with zkpipe and checks snarkjs accepts the proof.  name zkey wtns r1cs vk
prove_and_verify() {
  local name=$1 zkey=$2 wtns=$3 r1cs=$4 vk=$5
  rm -f "$name.proof.json" "$name.public.json"
  if ! "$zkpipe" prove --zkey "$zkey" --wtns "$wtns" --r1cs "$r1cs" --backend cpu \
       --proof "$name.proof.json" --public "$name.public.json" >"$name.prove.log" 2>&1; then
    cat "$name.prove.log"; fail "$name: zkpipe prove failed"; return
  fi
  grep -E "loaded|constraints of|total" "$name.prove.log"
  if snarkjs_accepts "$vk" "$name.public.json" "$name.proof.json"; then
    echo "ok: $name: snarkjs groth16 verify accepts zkpipe's proof"
  else
    fail "$name: snarkjs rejected zkpipe's proof"
  fi
  "$zkpipe" verify --vk "$vk" --proof "$name.proof.json" --public "$name.public.json" >/dev/null ||
    fail "$name: zkpipe verify rejected its own proof under snarkjs's verification_key.json"
}

# A wrong witness: non-zero exit, an error line, and no proof file; with and without --r1cs.
wrong_witness_is_refused() {  # name zkey wtns r1cs
  local name=$1 zkey=$2 wtns=$3 r1cs=$4
  corrupt_last_value "$wtns" "$name.wrong.wtns"
  local with_r1cs
  for with_r1cs in yes no; do
    local args=(prove --zkey "$zkey" --wtns "$name.wrong.wtns" --proof "$name.wrong.proof.json" --public "$name.wrong.public.json")
    [ $with_r1cs = yes ] && args+=(--r1cs "$r1cs")
    rm -f "$name.wrong.proof.json" "$name.wrong.public.json"
    if "$zkpipe" "${args[@]}" >"$name.wrong.log" 2>&1; then
      fail "$name: zkpipe proved a wrong witness (--r1cs $with_r1cs)"
    elif [ -e "$name.wrong.proof.json" ] || [ -e "$name.wrong.public.json" ]; then
      fail "$name: a proof file was written for a wrong witness (--r1cs $with_r1cs)"
    elif [ $with_r1cs = yes ] && ! grep -q "does not satisfy constraint" "$name.wrong.log"; then
      cat "$name.wrong.log"; fail "$name: the error does not name the failing constraint"
    else
      echo "ok: $name: wrong witness refused (--r1cs $with_r1cs): $(grep 'zkpipe: error' "$name.wrong.log" | cut -c1-150)"
    fi
  done
}

# circomlib's sources beside the circuits: circom2 (WebAssembly) only opens files under the cwd.
mkdir -p circomlib
cp -r "$node_modules/circomlib/circuits" circomlib/
for name in poseidon_chain range_product; do
  start=$SECONDS
  cp "$here/circuits/$name.circom" "$here/circuits/$name.input.json" .
  "$circom2" "$name.circom" --r1cs --wasm --O2 --prime bls12381 -o . >"$name.circom.log" 2>&1 ||
    { cat "$name.circom.log"; fail "$name: circom2 failed"; continue; }
  "$snarkjs" groth16 setup "$name.r1cs" "$ptau" "$name.zkey" >"$name.setup.log" 2>&1 ||
    { cat "$name.setup.log"; fail "$name: snarkjs groth16 setup failed"; continue; }
  "$snarkjs" zkey export verificationkey "$name.zkey" "$name.vk.json" >/dev/null 2>&1
  "$snarkjs" wtns calculate "${name}_js/$name.wasm" "$name.input.json" "$name.wtns"
  echo "$name: $(grep -E 'non-linear constraints' "$name.circom.log" | sed 's/\x1b\[[0-9;]*m//g'), files ready in $((SECONDS - start)) s"
  prove_and_verify "$name" "$name.zkey" "$name.wtns" "$name.r1cs" "$name.vk.json"
  wrong_witness_is_refused "$name" "$name.zkey" "$name.wtns" "$name.r1cs"
done

mulchain=$shared/data/circom/mulchain_16000
if [ -d "$mulchain" ]; then
  prove_and_verify mulchain_16000 "$mulchain/mulchain_16000_final.zkey" "$mulchain/witness.wtns" \
    "$mulchain/mulchain_16000.r1cs" "$mulchain/verification_key.json"
else
  echo "note: $mulchain absent: the 2^14 mulchain fixture was not proved"
fi

if [ $failures -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all circom interop checks passed"
