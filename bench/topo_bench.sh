#!/usr/bin/env bash
# Measures `nccltune topo` wall time: from the DGX-H100-like snapshot and from this machine.
# Target (README): under 100 ms from a snapshot. `--short` runs 3 iterations (CI proves it works).
# usage: bench/topo_bench.sh [--short] [NCCLTUNE] [FIXTURES]
set -euo pipefail
runs=30
if [ "${1:-}" = --short ]; then runs=3; shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
nccltune=${1:-$here/build/nccltune}
fixtures=${2:-$here/tests/fixtures}

# median_ms LABEL COMMAND...: runs COMMAND $runs times, prints the median and max in ms.
median_ms() {
  local label=$1
  shift
  local times=()
  for _ in $(seq "$runs"); do
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s%N)
    times+=($(((end - start) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v label="$label" -v n="$runs" '
    { t[NR] = $1 } END { printf "%-40s median %7.1f ms  max %7.1f ms  (%d runs)\n", label, t[int((n + 1) / 2)] / 1000, t[n] / 1000, n }'
}

median_ms "topo --from dgx-h100 snapshot (table)" "$nccltune" topo --from "$fixtures/nodes/dgx-h100"
median_ms "topo --from dgx-h100 snapshot (json)" "$nccltune" topo --from "$fixtures/nodes/dgx-h100" --format json
median_ms "check --from dgx-h100 snapshot" "$nccltune" check --from "$fixtures/nodes/dgx-h100"
median_ms "topo live (this machine)" "$nccltune" topo
