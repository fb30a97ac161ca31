#!/usr/bin/env bash
# Each bad invocation must print exactly one "zkpipe: error:" line on stderr, nothing that looks
# like a crash, and exit with status 1, within a few seconds.
set -u
zkpipe=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

expect_error() {
  local what=$1; shift
  local err status
  err=$(timeout 60 "$zkpipe" "$@" 2>&1 >/dev/null); status=$?
  local lines; lines=$(grep -c "^zkpipe: error:" <<<"$err")
  if [ "$status" -ne 1 ] || [ "$lines" -ne 1 ]; then
    echo "FAIL: $what: status $status, stderr: $err"; failures=$((failures + 1))
  else
    echo "ok: $what -> $(grep '^zkpipe: error:' <<<"$err")"
  fi
}

"$zkpipe" setup --circuit dense --constraints 64 --out-dir "$work/k" >/dev/null || { echo "FAIL: setup"; exit 1; }
"$zkpipe" prove --key "$work/k/proving.key" --proof "$work/proof.json" --public "$work/public.json" >/dev/null || { echo "FAIL: prove"; exit 1; }

expect_error "unknown circuit" setup --circuit sha256 --constraints 100 --out-dir "$work/x"
expect_error "size too large for the machine" setup --circuit dense --constraints 250000000 --out-dir "$work/x"
expect_error "missing key" prove --key "$work/absent.key"
head -c 1000 "$work/k/proving.key" > "$work/trunc.key"
expect_error "truncated key" prove --key "$work/trunc.key"
printf 'garbage' > "$work/garbage.key"
expect_error "garbage key" prove --key "$work/garbage.key"
expect_error "unknown backend" prove --key "$work/k/proving.key" --backend opencl
printf '{"pi_a": [' > "$work/bad.json"
expect_error "malformed proof JSON" verify --vk "$work/k/verification_key.json" --proof "$work/bad.json" --public "$work/public.json"
expect_error "malformed public JSON" verify --vk "$work/k/verification_key.json" --proof "$work/proof.json" --public "$work/bad.json"
expect_error "vk JSON that is a proof" verify --vk "$work/proof.json" --proof "$work/proof.json" --public "$work/public.json"
expect_error "resume of a stage measured alone" prove --key "$work/k/proving.key" --resume --stage-alone gpu
expect_error "proofs to the missing folder" prove --key "$work/k/proving.key" --proof "$work/absent/proof.json"
fixtures=$(dirname "$0")/../circom/fixtures
expect_error "one witness named N times" prove --zkey "$fixtures/tiny.zkey" --wtns "$fixtures/tiny.wtns" --partitions 2 --out-dir "$work/o"
expect_error "an .r1cs that is a .zkey" prove --zkey "$fixtures/tiny.zkey" --wtns "$fixtures/tiny.wtns" --r1cs "$fixtures/tiny.zkey"
# ... refused before any partition is tried, not retried as a partition's failure
err=$("$zkpipe" prove --zkey "$fixtures/tiny.zkey" --wtns "$fixtures/tiny.wtns" --r1cs "$fixtures/tiny.zkey" 2>&1 >/dev/null)
if grep -q "not a .r1cs file" <<<"$err" && ! grep -q "attempts" <<<"$err"; then
  echo "ok: the .r1cs is checked before proving"
else
  echo "FAIL: the .r1cs was not checked before proving: $err"; failures=$((failures + 1))
fi

# The command line's own refusals follow the same rule, their one line naming the option. A whole
# number is read in decimal, as written: a sign on a count, size or seed, or a number past 64 bits,
# is refused.
expect_refused() {
  local what=$1 option=$2; shift 2
  local err status
  err=$(timeout 60 "$zkpipe" "$@" 2>&1 >/dev/null); status=$?
  if [ "$status" -ne 1 ] || [ "$(grep -c "^zkpipe: error: $option: " <<<"$err")" -ne 1 ]; then
    echo "FAIL: $what: status $status, stderr: $err"; failures=$((failures + 1))
  else
    echo "ok: $what -> $err"
  fi
}
expect_error "unknown option" setup --circuit dense --bogus 3
expect_error "no subcommand"
expect_refused "count that is no number" --partitions prove --key "$work/k/proving.key" --partitions many
expect_refused "negative budget" --budget prove --key "$work/k/proving.key" --budget=-5
expect_refused "negative size with a unit" --budget prove --key "$work/k/proving.key" --budget=-1GiB
expect_refused "budget past 64 bits" --budget prove --key "$work/k/proving.key" --budget 18446744073709551616
expect_refused "negative seed" --witness-seed prove --key "$work/k/proving.key" --witness-seed=-1
expect_refused "negative constraint count" --constraints setup --circuit dense --constraints=-5 --out-dir "$work/x"
out=$("$zkpipe" prove --key "$work/k/proving.key" --partitions 010 --budget 01GiB \
        --proof "$work/ten.json" --public "$work/ten-public.json" 2>&1)
if grep -q "^engine: 10 partition(s)" <<<"$out" && grep -q "host budget 1.0 GiB" <<<"$out" && [ -f "$work/ten-9.json" ]; then
  echo "ok: leading zeros are decimal (--partitions 010 is ten)"
else
  echo "FAIL: --partitions 010 --budget 01GiB: $out"; failures=$((failures + 1))
fi

# A valid proof with a changed public input is rejected (exit 1, "INVALID"), not an error.
sed '0,/"[0-9]*"/s//"5"/' "$work/public.json" > "$work/public_bad.json"
out=$("$zkpipe" verify --vk "$work/k/verification_key.json" --proof "$work/proof.json" --public "$work/public_bad.json"); status=$?
if [ "$status" -ne 1 ] || ! grep -q INVALID <<<"$out"; then echo "FAIL: tampered public input accepted ($status: $out)"; failures=$((failures + 1)); else echo "ok: tampered public input -> $out"; fi

[ "$failures" -eq 0 ] && echo "cli_bad_input: all passed" || { echo "cli_bad_input: $failures failed"; exit 1; }
