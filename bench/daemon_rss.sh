#!/usr/bin/env bash
# Measures what nccltuned costs a node: resident memory (VmRSS now, VmHWM the peak) after its
# scans, and the CPU time it uses between scans (utime + stime from /proc/PID/stat, in clock
# ticks, while it sleeps). Two runs: this machine read live, and the DGX-H100 snapshot replayed
# (plus the real libnccl.so.2 when the machine has one, as on a GPU node).
# Target (README): RSS under 20 MB, no CPU between scans.
# `--short` idles 2 s instead of 30 (CI proves the script works and the targets still hold).
# usage: bench/daemon_rss.sh [--short] [NCCLTUNED] [FIXTURES]
set -euo pipefail
if [ -n "${NCCLTUNE_SANITIZE:-}" ]; then  # ctest sets it in a sanitizer build; 77 is its skip
  echo "daemon_rss: skipped in a sanitizer build ($NCCLTUNE_SANITIZE): RSS and CPU there are the sanitizers', not nccltuned's"
  exit 77
fi
idle_s=30
if [ "${1:-}" = --short ]; then idle_s=2; shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
nccltuned=${1:-$here/build/nccltuned}
fixtures=${2:-$here/tests/fixtures}
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT
ticks_per_s=$(getconf CLK_TCK)
status=0

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }  # utime + stime
kib() { awk -v key="$2:" '$1 == key { print $2 }' "/proc/$1/status"; }

# measure LABEL ARGS...: starts nccltuned with ARGS, waits for its first scan, idles, reports.
measure() {
  local label=$1
  shift
  rm -rf "$work/run" "$work/state" "$work/metrics"
  : >"$work/empty.yaml"  # a named config must exist; empty: every default
  "$nccltuned" --config "$work/empty.yaml" --interval 1h --runtime-dir "$work/run" --state-dir "$work/state" \
    --metrics-dir "$work/metrics" "$@" 2>"$work/log" &
  pid=$!
  for _ in $(seq 100); do [ -f "$work/metrics/nccltune.prom" ] && break; sleep 0.1; done
  [ -f "$work/metrics/nccltune.prom" ] || { echo "$label: no scan within 10 s"; cat "$work/log"; exit 1; }
  sleep 0.5  # the scan's last writes
  local before after rss hwm
  before=$(cpu_ticks "$pid")
  sleep "$idle_s"
  after=$(cpu_ticks "$pid")
  rss=$(kib "$pid" VmRSS)
  hwm=$(kib "$pid" VmHWM)
  kill -TERM "$pid"
  wait "$pid" || true
  pid=""
  printf '%-34s RSS %6.1f MB  peak %6.1f MB  CPU between scans %d ticks in %d s (1 tick = %d ms)\n' \
    "$label" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$(awk -v k="$hwm" 'BEGIN { print k / 1024 }')" "$((after - before))" "$idle_s" \
    "$((1000 / ticks_per_s))"
  if [ "$hwm" -ge $((20 * 1024)) ]; then echo "  over the 20 MB target"; status=1; fi
  if [ "$((after - before))" -ne 0 ]; then echo "  used CPU between scans"; status=1; fi
}

measure "live (this machine)"
measure "snapshot dgx-h100" --from "$fixtures/nodes/dgx-h100"
exit "$status"
