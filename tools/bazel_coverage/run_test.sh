#!/usr/bin/env bash
# run_test.sh — `--run_under` wrapper for `bazel coverage` with ballarus:
# under coverage it points the ballarus runtime of the test and of every
# process it starts at one pooled profile, $COVERAGE_DIR/ballarus.profile,
# which collect_cc_coverage.sh then reads.  Outside coverage it only runs
# the test.  (The objects' own homes, beside them in the execution root the
# compiler ran in, are neither stable nor writable inside a test sandbox.)
if [ -n "${COVERAGE_DIR:-}" ]; then
  export BALLARUS_PROFILE="$COVERAGE_DIR/ballarus.profile"
fi
exec "$@"
