#!/usr/bin/env bash
# The CI's instrumented run: configures and builds SOURCE_DIR in BUILD_DIR with clang-14,
# AddressSanitizer + UndefinedBehaviorSanitizer on every target and libFuzzer's coverage
# instrumentation on top (NCCLTUNE_FUZZ=ON), at -O0 -g1, then runs every unit test executable
# (each whole, in one process) and the front-end tests that hold there through ctest, which sets
# ASAN_OPTIONS, LSAN_OPTIONS and UBSAN_OPTIONS (the suppressions beside this script). The same
# build serves tests/fuzz/run.sh afterwards: one instrumented build instead of two.
# usage: run_sanitized_tests.sh BUILD_DIR SOURCE_DIR [JOBS]
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR [JOBS]" >&2
  exit 2
fi
build_dir=$1 source_dir=$2 jobs=${3:-2}
sanitizers=address,undefined
unit_labels='^unit$'
# `env` is env_lean's test through the full nccltune binary: the same library, each of its
# hundreds of commands paying the instrumented start-up of MPI and hwloc; env_lean covers it.
# exit_codes (usage errors, which return before any work; cli runs such paths here) is left to
# the plain build: a minute here that the 30 minutes of ./run.sh test no longer had.
integration_tests='^(cli|env_lean|daemon)$'

# clang at -O0 -g1 compiles each file about 40% faster than GCC at -O0 -g with the same
# sanitizers, and the tests run under CI's time limit either way.
echo "== instrumented build ($sanitizers, libFuzzer coverage) of $source_dir in $build_dir"
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  CC=${CC:-clang-14} CXX=${CXX:-clang++-14} cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Debug \
    "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1" "-DCMAKE_C_FLAGS_DEBUG=-O0 -g1" \
    -DNCCLTUNE_SANITIZE=$sanitizers -DNCCLTUNE_FUZZ=ON
fi
cmake --build "$build_dir" -j "$jobs"

# Both ctest runs, even when the first fails; exit 1 when either failed.
status=0
echo "== unit tests under $sanitizers: ctest -L '$unit_labels'"
ctest --test-dir "$build_dir" -L "$unit_labels" -j "$jobs" --output-on-failure || status=1
echo "== integration tests under $sanitizers: ctest -R '$integration_tests'"
ctest --test-dir "$build_dir" -R "$integration_tests" -j "$jobs" --output-on-failure || status=1
echo "== sanitizer tests: $([ "$status" -eq 0 ] && echo passed || echo FAILED)"
exit "$status"
