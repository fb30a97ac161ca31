#!/usr/bin/env bash
# Builds zkpipe's Debian package with CPack: out/package/zkpipe_<version>_<arch>.deb, holding
# /usr/bin/zkpipe, its man pages (made from each subcommand's --help by help2man), the scenarios
# under /usr/share/zkpipe/scenarios and the READMEs under /usr/share/doc/zkpipe. Depends: the
# Debian packages of the shared libraries zkpipe links (dpkg-shlibdeps). tools/check-package.sh
# installs and tries it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
for tool in help2man dpkg-shlibdeps cpack; do
  command -v "$tool" >/dev/null || { echo "package: $tool is missing: run tools/install-deps.sh" >&2; exit 1; }
done
"$here/tools/build.sh"
rm -rf "$here/out/package"
(cd "$here/build" && cpack -G DEB -B "$here/out/package" >/dev/null)
rm -rf "$here/out/package/_CPack_Packages"
deb=$(ls "$here"/out/package/zkpipe_*.deb)
echo "package: $deb ($(du -h "$deb" | cut -f1))"
echo "package: Depends: $(dpkg-deb --field "$deb" Depends)"
