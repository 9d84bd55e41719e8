#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS [BUILD_DIR]: runs every libFuzzer target in tests/fuzz for SECONDS
# each, from a scratch copy of its seed corpus (tests/fuzz/corpus/<name>/, never written to).
# Configures BUILD_DIR (default build-fuzz) with clang-14 and NCCLTUNE_FUZZ=ON when it has no
# build yet, and builds the targets. Exits 1 when any target crashed, leaked, timed out or ran out
# of memory, after naming the input that did it; 2 on bad usage or a failed build.
#
# Environment: NCCLTUNE_FUZZ_TARGETS="profile journal" runs only those; NCCLTUNE_FUZZ_JOBS=N runs
# N targets at a time; CC/CXX override clang-14. A BUILD_DIR configured with NCCLTUNE_FUZZ=ON by
# someone else (./run.sh test's instrumented build, with the sanitizers and tests) is used as it is.
set -uo pipefail

usage() { echo "usage: $0 SECONDS [BUILD_DIR]" >&2; exit 2; }
[[ $# -ge 1 && $# -le 2 && $1 =~ ^[0-9]+$ && $1 -gt 0 ]] || usage
seconds=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${2:-$root/build-fuzz}

if [[ ! -f $build/CMakeCache.txt ]]; then
  CC=${CC:-clang-14} CXX=${CXX:-clang++-14} cmake -S "$root" -B "$build" -DNCCLTUNE_FUZZ=ON \
    -DNCCLTUNE_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo || exit 2
elif ! grep -q '^NCCLTUNE_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
  echo "$0: $build is not a fuzz build (NCCLTUNE_FUZZ=ON); name another directory" >&2
  exit 2
fi
cmake --build "$build" --target fuzz -j "${NCCLTUNE_FUZZ_BUILD_JOBS:-2}" || exit 2

if [[ -n ${NCCLTUNE_FUZZ_TARGETS:-} ]]; then
  read -r -a targets <<<"$NCCLTUNE_FUZZ_TARGETS"
else
  targets=()
  for source in "$here"/fuzz_*.cpp; do
    name=${source##*/fuzz_}
    targets+=("${name%.cpp}")
  done
fi

# Scratch space: the corpora the fuzzer grows, crash inputs and logs, one folder per target,
# emptied when that target starts.
scratch=$build/fuzz-run
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# One target: its run, then one summary line (or the report and the saved input) on stdout, and
# its name in $scratch/failed when it failed.
run_target() {
  local name=$1 binary=$build/tests/fuzz/fuzz_$1 work=$scratch/$1
  if [[ ! -x $binary ]]; then
    echo "fuzz_$name: no binary $binary"
    echo "$name" >>"$scratch/failed"
    return
  fi
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  if [[ -d $here/corpus/$name ]]; then cp -R "$here/corpus/$name/." "$work/corpus/"; fi
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$work/artifacts/")
  if [[ -f $here/dict/$name.dict ]]; then args+=(-dict="$here/dict/$name.dict"); fi
  local seeds
  seeds=$(find "$here/corpus/$name" -type f 2>/dev/null | wc -l)
  "$binary" "${args[@]}" "$work/corpus" >"$work/log" 2>&1
  local rc=$?
  local execs rate cov
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -n 1)
  cov=$(grep -Eo 'cov: [0-9]+' "$work/log" | tail -n 1)
  if [[ $rc -eq 0 ]]; then
    echo "fuzz_$name: ok, ${seconds}s from $seeds seeds, ${execs:-?} runs, ${rate:-?} exec/s, ${cov:-cov: ?}, corpus $(find "$work/corpus" -type f | wc -l) files"
    return
  fi
  echo "$name" >>"$scratch/failed"
  {
    echo "fuzz_$name: FAILED (exit $rc); from $work/log:"
    # What follows libFuzzer's last progress line: the target's message, the sanitizer's report.
    awk '/^#[0-9]+\t/ { n = 0; next } { kept[++n] = $0 } END { for (i = 1; i <= n && i <= 300; ++i) print kept[i] }' \
      "$work/log"
    local artifact found=0
    for artifact in "$work"/artifacts/*; do
      [[ -f $artifact ]] || continue
      found=1
      echo "fuzz_$name: input saved in $artifact; reproduce with: $binary $artifact"
    done
    [[ $found -eq 1 ]] || echo "fuzz_$name: no input was saved (see the log)"
  } >&2
}

# NCCLTUNE_FUZZ_JOBS targets at a time (default 1); each prints its lines when it ends.
mkdir -p "$scratch"
rm -f "$scratch/failed"
jobs=${NCCLTUNE_FUZZ_JOBS:-1}
running=0
for name in "${targets[@]}"; do
  if [[ $running -ge $jobs ]]; then
    wait -n
    running=$((running - 1))
  fi
  run_target "$name" &
  running=$((running + 1))
done
wait
failed=()
if [[ -f $scratch/failed ]]; then mapfile -t failed <"$scratch/failed"; fi

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: ${#failed[@]} of ${#targets[@]} targets failed: ${failed[*]} (inputs and logs in $scratch)" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds}s each without a finding"
