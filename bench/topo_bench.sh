#!/usr/bin/env bash
# Measures `nccltune topo` wall time: from the DGX-H100-like snapshot, from this machine, and from
# generated `nvidia-smi topo -m` matrices of 200 GPUs (the merge and the renderers must stay linear
# in the pairs) and of 400 (over the device cap: refused at once). Targets (README): under 100 ms
# from a snapshot, under 1 s for 200 GPUs. `--short` runs 3 iterations (CI proves it works).
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
    "$@" >/dev/null 2>&1 || true  # the 400-GPU matrix is refused: exit 1
    end=$(date +%s%N)
    times+=($(((end - start) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v label="$label" -v n="$runs" '
    { t[NR] = $1 } END { printf "%-40s median %7.1f ms  max %7.1f ms  (%d runs)\n", label, t[int((n + 1) / 2)] / 1000, t[n] / 1000, n }'
}

# matrix N FILE: an `nvidia-smi topo -m` text of N GPUs, all NV18 to each other.
matrix() {
  awk -v n="$1" 'BEGIN {
    line = ""; for (i = 0; i < n; i++) line = line "\tGPU" i; print line "\tCPU Affinity\tNUMA Affinity"
    for (i = 0; i < n; i++) {
      line = "GPU" i
      for (j = 0; j < n; j++) line = line "\t" (i == j ? " X " : "NV18")
      print line "\t0-47\t0"
    }
  }' >"$2"
}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
matrix 200 "$scratch/200.txt"
matrix 400 "$scratch/400.txt"

median_ms "topo --from dgx-h100 snapshot (table)" "$nccltune" topo --from "$fixtures/nodes/dgx-h100"
median_ms "topo --from dgx-h100 snapshot (json)" "$nccltune" topo --from "$fixtures/nodes/dgx-h100" --format json
median_ms "check --from dgx-h100 snapshot" "$nccltune" check --from "$fixtures/nodes/dgx-h100"
median_ms "topo live (this machine)" "$nccltune" topo
median_ms "topo --from 200-GPU matrix (table)" "$nccltune" topo --from "nvidia-smi:$scratch/200.txt"
median_ms "topo --from 200-GPU matrix (json)" "$nccltune" topo --from "nvidia-smi:$scratch/200.txt" --format json
median_ms "check --from 200-GPU matrix" "$nccltune" check --from "nvidia-smi:$scratch/200.txt"
median_ms "topo --from 400-GPU matrix (refused)" "$nccltune" topo --from "nvidia-smi:$scratch/400.txt"
"$nccltune" topo --from "nvidia-smi:$scratch/200.txt" >/dev/null  # and it did succeed
