#!/usr/bin/env bash
# The fleet survey's wall time as the allocation grows: 4, 8 and 16 emulated nodes of 2 GPUs on
# the fake GPU stack (tests/fixtures/models/fleet-slow-node-link.yaml), the default rounds (each
# node meets 3 partners). The survey runs every group of a stage at once, so it should take
# about R + 1 stages (the local stage and R rounds) whatever N, not N^2 pairs one after another:
# the table gives the wall time, the pairs measured and the wall time per stage. Each run must
# still name the slow node (the model's node 3).
#
# `--short` (CI): 4 nodes only, to prove the script still works.
# usage: bench/fleet_bench.sh [--short] [NCCLTUNE] [LIBFAKECUDA] [LIBFAKENCCL] [FIXTURES]
set -euo pipefail
nodes_list=(4 8 16)
if [ "${1:-}" = --short ]; then nodes_list=(4); shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
nccltune=${1:-$here/build/nccltune}
fakecuda=${2:-$here/build/tests/fake-gpu/libfakecuda.so}
fakenccl=${3:-$here/build/tests/fake-gpu/libfakenccl.so}
fixtures=${4:-$here/tests/fixtures}
per_node=2

for name in $(compgen -e | grep '^NCCL_' || true); do unset "$name"; done
export NCCLTUNE_FAKE_MODEL=$fixtures/models/fleet-slow-node-link.yaml
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-6s %-6s %-7s %-6s %8s %14s\n' nodes ranks rounds pairs "wall s" "s per stage"
for nodes in "${nodes_list[@]}"; do
  ranks=$((nodes * per_node))
  start=$(date +%s%N)
  status=0
  NCCLTUNE_EMULATE_NODES=$nodes timeout -k 5 1200 mpirun --oversubscribe -np "$ranks" "$nccltune" fleet \
    --cuda-lib "$fakecuda" --nccl-lib "$fakenccl" --bytes 1M --small-bytes 8K --iterations 5 \
    --init-timeout 60 --size-timeout 30 --format json --out "$work/$nodes.json" >"$work/log.$nodes" 2>&1 || status=$?
  end=$(date +%s%N)
  if [ "$status" -gt 2 ] || ! grep -q -- '-node3"' "$work/$nodes.json"; then
    tail -n 20 "$work/log.$nodes" >&2
    echo "fleet_bench: the survey of $nodes nodes failed (exit $status) or missed node 3" >&2
    exit 1
  fi
  awk -v nodes="$nodes" -v ranks="$ranks" -v wall="$(((end - start) / 1000000))" '
    /"round":/ { if (match($0, /[0-9]+/)) { r = substr($0, RSTART, RLENGTH) + 0; if (r > rounds) rounds = r; pairs++ } }
    END { w = wall / 1000; printf "%-6d %-6d %-7d %-6d %8.1f %14.1f\n", nodes, ranks, rounds, pairs, w, w / (rounds + 1) }
  ' "$work/$nodes.json"
done
