#!/usr/bin/env bash
# package_check.sh — the installation checks `bazel test` cannot run inside
# its sandbox:
#   1. `bazel coverage` with ballarus against Bazel's gcov-based coverage
#      (tools/bazel_coverage/check.sh);
#   2. the Debian package: built (scripts/build_deb.sh) and checked
#      (tests/package/deb_check.sh); as root, and when no ballarus package
#      is installed yet, also installed, used by name and by
#      `bazel coverage --config=ballarus`, and removed.
# Exit status 0 when every check passes.  BAZEL_STARTUP_OPTS is passed to
# bazel.
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT

echo "== bazel coverage: ballarus against gcov"
bash tools/bazel_coverage/check.sh

echo "== Debian package"
deb=$(bash scripts/build_deb.sh "$work/deb" | tail -n 1)
opts=()
if [ "$(id -u)" = 0 ] \
    && ! dpkg-query -W -f='${db:Status-Status}' ballarus 2>/dev/null | grep -qx installed; then
  opts=(--install --bazel)
else
  echo "(not root, or ballarus already installed: the package is not installed)"
fi
bash tests/package/deb_check.sh "${opts[@]+"${opts[@]}"}" "$deb"
echo "package_check: all passed"
