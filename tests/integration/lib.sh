# The harness every integration script sources: a scratch directory, pass/fail counting, the
# usual expectations, and the summary line whose exit status ctest reads.
#
#   source "$(dirname "$0")/lib.sh"     # sets $work, counts from zero
#   expect_exit 0 "help" -- "$nccltune" --help
#   expect_in "$work/out" "usage" "help says usage"
#   finish                              # "NAME: N passed, M failed"; exit 1 on any failure
#
# Scripts that start processes add their own clean-up with on_exit; it runs before $work goes.
set -u
test_name=$(basename "$0" .sh)
work=$(mktemp -d)
passed=0
failures=0
exit_hooks=()

on_exit() { exit_hooks+=("$1"); }
run_exit_hooks() {
  local status=$? hook
  for hook in "${exit_hooks[@]}"; do eval "$hook"; done
  rm -rf "$work"
  return "$status"
}
trap run_exit_hooks EXIT

pass() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
  local what=$1
  shift
  if "$@"; then pass; else fail "$what"; return 1; fi
}
# expect_exit CODE DESCRIPTION -- COMMAND...: runs COMMAND, stdout to $work/out, stderr to $work/err.
expect_exit() {
  local want=$1 what=$2
  shift 3
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then
    pass
  else
    fail "$what: exit $got, expected $want"
    sed 's/^/  | /' "$work/err" | head -5
  fi
}
# expect_status CODE DESCRIPTION COMMAND...: as expect_exit, without the -- (output not kept).
expect_status() {
  local want=$1 what=$2
  shift 2
  "$@" >"$work/status.out" 2>&1
  local got=$?
  if [ "$got" -eq "$want" ]; then pass; else fail "$what: exit $got, expected $want"; tail -5 "$work/status.out"; fi
}
expect_in() {  # expect_in FILE TEXT DESCRIPTION
  if grep -qF -- "$2" "$1" 2>/dev/null; then pass; else fail "$3: '$2' not in $1"; fi
}
expect_not_in() {  # expect_not_in FILE TEXT DESCRIPTION
  if grep -qF -- "$2" "$1" 2>/dev/null; then fail "$3: '$2' in $1"; else pass; fi
}
expect_equal() {  # expect_equal ACTUAL EXPECTED DESCRIPTION
  if [ "$1" == "$2" ]; then
    pass
  else
    fail "$3"
    echo "  expected: ${2//$'\n'/ | }"
    echo "  actual:   ${1//$'\n'/ | }"
  fi
}
expect_one_line() {  # expect_one_line FILE DESCRIPTION
  local lines
  lines=$(grep -c . "$1")
  if [ "$lines" -eq 1 ]; then pass; else fail "$2: expected one line, got $lines"; head -5 "$1"; fi
}

# Processes started by this test carry NCCLTUNE_TEST_TAG in their environment (export it first),
# so leftovers are told apart from whatever else runs on the machine. Live ones only: a zombie
# holds no GPU and no lock.
tagged_processes() {  # tagged_processes [TAG]: TAG defaults to $NCCLTUNE_TEST_TAG
  local pid state tag=${1:-${NCCLTUNE_TEST_TAG:-}}
  for pid in $(grep -lzx "NCCLTUNE_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null |
    sed 's|^/proc/\([0-9]*\)/environ$|\1|'); do
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)  # empty once the process is gone
    [ "$pid" != $$ ] && [ -n "$state" ] && [ "$state" != Z ] && echo "$pid"
  done
}
# no_tagged_processes_left: within 10 s (workers of a killed rank die of PR_SET_PDEATHSIG,
# asynchronously); lists what is left otherwise.
no_tagged_processes_left() {
  local left
  for _ in $(seq 100); do
    left=$(tagged_processes)
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  for pid in $left; do ps -o pid=,ppid=,stat=,args= -p "$pid"; done
  return 1
}

# skip_under_sanitizers REASON: in a sanitizer build (ctest sets NCCLTUNE_SANITIZE there) a check
# that cannot hold says why and exits 77, which ctest reports as skipped.
skip_under_sanitizers() {
  [ -z "${NCCLTUNE_SANITIZE:-}" ] && return 0
  echo "$test_name: skipped in a sanitizer build ($NCCLTUNE_SANITIZE): $1"
  exit 77
}

finish() {
  echo "$test_name: $passed passed, $failures failed"
  [ "$failures" -eq 0 ]
}
