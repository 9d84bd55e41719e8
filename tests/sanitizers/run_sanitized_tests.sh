#!/usr/bin/env bash
# The CI's sanitizer run: configures and builds an ASan + UBSan build of SOURCE_DIR in BUILD_DIR,
# then runs the unit tests and the integration tests that hold there through ctest, which sets
# ASAN_OPTIONS, LSAN_OPTIONS and UBSAN_OPTIONS (the suppressions beside this script).
# usage: run_sanitized_tests.sh BUILD_DIR SOURCE_DIR [JOBS]
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR [JOBS]" >&2
  exit 2
fi
build_dir=$1 source_dir=$2 jobs=${3:-2}
sanitizers=address,undefined
unit_labels='^unit$'
integration_tests='^(cli|env|env_lean|daemon|exit_codes)$'

# Debug (-O0 -g): with ASan and UBSan, -O2 compiles each file five to eight times slower than
# -O0, and the tests run under CI's time limit either way.
echo "== sanitizer build ($sanitizers) of $source_dir in $build_dir"
cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Debug -DNCCLTUNE_SANITIZE=$sanitizers
cmake --build "$build_dir" -j "$jobs"

# Both ctest runs, even when the first fails; exit 1 when either failed.
status=0
echo "== unit tests under $sanitizers: ctest -L '$unit_labels'"
ctest --test-dir "$build_dir" -L "$unit_labels" -j "$jobs" --output-on-failure || status=1
echo "== integration tests under $sanitizers: ctest -R '$integration_tests'"
ctest --test-dir "$build_dir" -R "$integration_tests" --output-on-failure || status=1
echo "== sanitizer tests: $([ "$status" -eq 0 ] && echo passed || echo FAILED)"
exit "$status"
