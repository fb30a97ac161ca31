#!/usr/bin/env bash
# Writes zkpipe's man pages from its --help (help2man): zkpipe.1.gz for the command and
# zkpipe-<subcommand>.1.gz for every subcommand that `zkpipe --help` lists, gzipped as Debian
# installs them. The build runs it (tools/CMakeLists.txt) whenever the binary changes.
# Usage: tools/man-pages.sh ZKPIPE_BINARY VERSION OUT_DIR
set -euo pipefail
zkpipe=$1 version=$2 out=$3
mkdir -p "$out"
rm -f "$out"/zkpipe*.1 "$out"/zkpipe*.1.gz
# The subcommands: the lines of the "Subcommands:" block of --help, "  NAME   DESCRIPTION".
mapfile -t subcommands < <("$zkpipe" --help | sed -n '/^Subcommands:/,$p' | sed -n 's/^  \([a-z][a-z0-9-]*\) .*/\1/p')
[ ${#subcommands[@]} -gt 0 ] || { echo "man-pages: no subcommands in $zkpipe --help" >&2; exit 1; }
see_also="$out/see-also.h2m"
{
  echo "[SEE ALSO]"
  for sub in "${subcommands[@]}"; do echo ".BR zkpipe-$sub (1)$([ "$sub" = "${subcommands[-1]}" ] || echo ,)"; done
  echo ".PP"
  echo "The scenarios shipped with the package are in /usr/share/zkpipe/scenarios (their README.md lists every key);"
  echo "the project's README is in /usr/share/doc/zkpipe."
} >"$see_also"
page() {  # page FILE NAME COMMAND...: one page from the --help of COMMAND
  local file=$1 name=$2
  shift 2
  help2man --no-info --version-string="$version" --name="$name" --include="$see_also" --output="$file" "$*"
  gzip -9n "$file"
}
page "$out/zkpipe.1" "Groth16 proving pipelines on CPU and GPU, and their SimGrid model" "$zkpipe"
for sub in "${subcommands[@]}"; do
  description=$("$zkpipe" --help | sed -n "s/^  $sub  *//p" | head -n1)
  page "$out/zkpipe-$sub.1" "$description" "$zkpipe" "$sub"
done
rm -f "$see_also"
echo "man-pages: $((${#subcommands[@]} + 1)) pages in $out"
