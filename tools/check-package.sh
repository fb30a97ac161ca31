#!/usr/bin/env bash
# Installs the Debian package that tools/package.sh built, tries it from a folder outside the
# checkout, and removes it (CI runs this, .ci/run): the package's Depends cover every library
# zkpipe links (and no CUDA library: the CUDA runtime is static), `zkpipe --version`, the man page
# renders, a tiny circuit is set up, proved on the CPU and verified, and the seed scenario is
# simulated from /usr/share/zkpipe/scenarios with its calibration files.
# Usage: tools/check-package.sh [DEB]   (default: out/package/zkpipe_*.deb)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
deb=$(realpath "${1:-$(ls "$here"/out/package/zkpipe_*.deb)}")
passed=0
fail() { echo "check-package: FAILED: $*" >&2; echo "check-package: $passed passed, 1 failed"; exit 1; }
pass() { passed=$((passed + 1)); echo "ok: $*"; }
dpkg -s zkpipe >/dev/null 2>&1 && fail "a zkpipe package is installed already: remove it first (apt-get remove zkpipe)"

work=$(mktemp -d)
echo "== install $deb"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$deb" >/dev/null
remove() { cd /; rm -rf "$work"; echo "== remove"; DEBIAN_FRONTEND=noninteractive $sudo apt-get remove -y -qq zkpipe >/dev/null; }
trap remove EXIT
zkpipe=/usr/bin/zkpipe
[ "$(command -v zkpipe)" = "$zkpipe" ] || fail "zkpipe on PATH is $(command -v zkpipe), not $zkpipe"
pass "installed: $zkpipe"

echo "== what zkpipe links, and the package's Depends"
depends=$(dpkg-deb --field "$deb" Depends)
echo "Depends: $depends"
depended=$(sed 's/ ([^)]*)//g; s/, */\n/g' <<<"$depends")  # the package names, one a line
! ldd "$zkpipe" | grep -q "not found" || fail "unresolved libraries: $(ldd "$zkpipe" | grep 'not found')"
! ldd "$zkpipe" | grep -Eq "libcuda|libcudart" || fail "zkpipe links a CUDA library dynamically"
for library in $(objdump -p "$zkpipe" | awk '$1 == "NEEDED" { print $2 }'); do
  # "lib.so => /path (addr)", or "/path (addr)" for the dynamic loader
  path=$(ldd "$zkpipe" | awk -v lib="$library" '$1 == lib { print $3 } $1 ~ "/" lib "$" { print $1 }')
  [ -n "$path" ] || fail "ldd does not show where $library is"
  owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "/usr$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null) ||
    fail "$library ($path) belongs to no Debian package"
  package=${owner%%:*}
  grep -qxF "$package" <<<"$depended" || fail "$library comes from $package, which Depends does not name"
  echo "  $library: $package"
done
pass "Depends names the package of every library zkpipe links; no CUDA library linked"

cd "$work"
echo "== zkpipe --version (in $work)"
version=$("$zkpipe" --version)
grep -Eq '^zkpipe [0-9]+\.[0-9]+\.[0-9]+$' <<<"$version" || fail "zkpipe --version printed '$version'"
pass "$version"

echo "== man zkpipe"
page=/usr/share/man/man1/zkpipe.1.gz
[ -f "$page" ] || fail "$page is not installed"
if command -v man >/dev/null; then
  rendered=$(MANWIDTH=80 man -P cat zkpipe 2>&1)
else
  rendered=$(zcat "$page")  # no man-db here: the roff source, which names the same sections
fi
for section in NAME SYNOPSIS OPTIONS "SEE ALSO"; do
  grep -q "$section" <<<"$rendered" || fail "man zkpipe has no $section section"
done
head -n 5 <<<"$rendered"
for sub in prove simulate; do [ -f "/usr/share/man/man1/zkpipe-$sub.1.gz" ] || fail "no man page zkpipe-$sub"; done
pass "man zkpipe renders; zkpipe-prove and zkpipe-simulate are installed"

echo "== a tiny proof on the CPU (no CUDA needed)"
"$zkpipe" setup --circuit poseidon-merkle --constraints 256 --out-dir keys >/dev/null
"$zkpipe" prove --backend cpu --key keys/proving.key | tail -n 1
"$zkpipe" verify --vk keys/verification_key.json
pass "set up, proved on the CPU and verified"

echo "== zkpipe simulate /usr/share/zkpipe/scenarios/seed-pageable-vs-pinned.toml"
"$zkpipe" simulate /usr/share/zkpipe/scenarios/seed-pageable-vs-pinned.toml | tee simulate.log
grep -q "^scenario seed-pageable-vs-pinned" simulate.log || fail "the seed scenario did not simulate"
pass "simulated the installed seed scenario"
trap - EXIT
remove
[ ! -e "$zkpipe" ] && ! dpkg -s zkpipe >/dev/null 2>&1 || fail "zkpipe is still installed after apt-get remove"
pass "removed"
echo "check-package: $passed passed, 0 failed"
