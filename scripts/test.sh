#!/usr/bin/env bash
# test.sh — sets the machine up (scripts/setup.sh) and runs every test:
#   bazel test //... --test_output=errors
# Its exit status is bazel's.  Arguments replace //... (targets or flags for
# `bazel test`), e.g.
#   bash scripts/test.sh //wrappers:all
# BAZEL_STARTUP_OPTS (e.g. --output_base=DIR) is passed to bazel as startup
# options.
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(//...)
read -r -a startup <<<"${BAZEL_STARTUP_OPTS:-}"
status=0
bazel "${startup[@]+"${startup[@]}"}" test --test_output=errors "${targets[@]}" || status=$?
exit "$status"
