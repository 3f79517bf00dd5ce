#!/usr/bin/env bash
# test.sh — sets the machine up (scripts/setup.sh) and runs every test:
#   bazel test //... --test_output=errors
# and then, for the whole suite, the installation checks bazel's sandbox
# cannot run (scripts/package_check.sh: `bazel coverage`, the Debian
# package).  Exit status 0 when all pass.  Arguments replace //... (targets
# or flags for `bazel test`) and skip the installation checks, e.g.
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
log=$(mktemp)
trap 'rm -f "$log"' EXIT
bazel "${startup[@]+"${startup[@]}"}" test --test_output=errors "${targets[@]}" 2>&1 | tee "$log" || status=$?
# One plain closing line for CI: bazel's "Executed X out of N tests: ..."
# counts test targets; restate it as "N passed, F failed".
total=$(sed -n 's/.*Executed [0-9]* out of \([0-9]*\) tests\?:.*/\1/p' "$log" | tail -n 1)
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD)' "$log" || true)
if [ -n "$total" ]; then
  echo "tests: $((total - failed)) passed, $failed failed"
fi
if [ "$status" = 0 ] && [ ${#@} -eq 0 ]; then
  bash scripts/package_check.sh || status=$?
fi
exit "$status"
