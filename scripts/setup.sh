#!/usr/bin/env bash
# setup.sh — prepares a Debian bookworm machine to build and test ballarus.
#
# Installs, with apt, what the offline Bazel build needs: Debian's Bazel
# (bazel-bootstrap, which brings its JDK), GCC 12 with its plugin headers,
# and the system libraries the BUILD files link (third_party/BUILD).
# Idempotent: when every package is already installed it changes nothing and
# does not touch the network.  Needs root (or sudo) only when it installs.
set -euo pipefail

packages=(
  bazel-bootstrap     # Bazel 4.2.3, offline; depends on default-jdk-headless
  gcc g++ gcc-12 g++-12
  gcc-12-plugin-dev   # GCC's plugin headers (plugin/)
  libgmp-dev          # //third_party:gmp
  libgtest-dev        # //third_party:gtest, gtest_main
  nlohmann-json3-dev  # //third_party:json
  libcli11-dev        # //third_party:cli11
  libfmt-dev          # //third_party:fmt
  zlib1g-dev          # //third_party:zlib: metadata compression (plugin, reconstruct), gcov's .gcov.json.gz
  libdw-dev           # //third_party:libdw: a crash's source line in `trace` (elfutils)
  binutils            # ld >= 2.35 for --export-dynamic-symbol; nm in tests
  python3             # test scripts parse `show --json`
  lcov                # //tests:reports_e2e_test: lcov --capture, genhtml
  graphviz            # ballarus-reconstruct html: CFG pictures (dot)
  chromium            # //tests:report_tools_test: the HTML report, headless
  clang-14            # //tests:fuzz_test: libFuzzer target
  libclang-rt-14-dev  # ... its fuzzer and sanitizer runtimes
  valgrind            # //bench:quick_test, scale_quick_test: instruction counts
  strace              # //tests:store_test: the modes the kernel saw files created with
  dpkg-dev debhelper  # scripts/build_deb.sh: the Debian package
  cmake meson ninja-build ccache gcovr   # //tests/build_systems: the build systems driven
  ca-certificates
)

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "setup.sh: error: this script needs Debian's dpkg and apt-get (Debian bookworm)" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = installed ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "setup.sh: error: missing packages (${missing[*]}) and not root; run as root" >&2
    exit 2
  fi
fi

echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${packages[@]}"
echo "setup.sh: done"
