#!/usr/bin/env bash
# build_deb.sh — builds the Debian package ballarus_VERSION_amd64.deb from
# this tree with `dpkg-buildpackage -b -us -uc` (debian/rules: the offline
# Bazel build, then //:install --gcc into the package as /usr).
#
#   bash scripts/build_deb.sh [OUTDIR]     (default OUTDIR: ./_deb)
#
# dpkg-buildpackage writes its results beside the tree; they are moved into
# OUTDIR, and the .deb's path is printed last.  Needs dpkg-dev and
# debhelper, and what scripts/setup.sh installs.
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."

die() {
  printf 'build_deb.sh: error: %s\n' "$1" >&2
  exit 2
}

out=$(realpath -m -- "${1:-_deb}")
command -v dpkg-buildpackage >/dev/null 2>&1 || die "dpkg-buildpackage not found (apt-get install dpkg-dev debhelper)"
command -v dh >/dev/null 2>&1 || die "dh not found (apt-get install debhelper)"

version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg-architecture -q DEB_HOST_ARCH)
base=ballarus_${version}_${arch}

dpkg-buildpackage -b -us -uc >&2 || die "dpkg-buildpackage failed"
mkdir -p -- "$out"
for f in "../$base.deb" "../$base.buildinfo" "../$base.changes"; do
  [ -f "$f" ] && mv -f -- "$f" "$out/"
done
[ -f "$out/$base.deb" ] || die "no $base.deb produced"
echo "$out/$base.deb"
