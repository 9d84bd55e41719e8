#!/usr/bin/env bash
# The tune harness as the cluster grows: the coordinator's overhead per trial (the tune's wall
# time minus the time its trials took, which the journal records, divided by the trials): the
# strategy, rank 0's messages, gathering what each node reports (its topology, NCCL's logs of the
# captured trials), building and writing the profile. It must grow with the nodes, not with the
# ranks times the log size. 4 ranks per emulated node, on the fake GPU stack, a small space and
# tiny sizes, so that the workers' own work stays small.
#
# `--short` (CI): one tune at 32 ranks on 8 emulated nodes, which must end with a profile.
# Otherwise: 8, 16, 32 and 64 ranks, one run each (a 2-core machine runs 2 processes per rank).
# usage: bench/scale_bench.sh [--short] [NCCLTUNE] [LIBFAKECUDA] [LIBFAKENCCL] [FIXTURES]
set -euo pipefail
ranks_list=(8 16 32 64)
if [ "${1:-}" = --short ]; then ranks_list=(32); shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
nccltune=${1:-$here/build/nccltune}
fakecuda=${2:-$here/build/tests/fake-gpu/libfakecuda.so}
fakenccl=${3:-$here/build/tests/fake-gpu/libfakenccl.so}
fixtures=${4:-$here/tests/fixtures}
per_node=4

for name in $(compgen -e | grep '^NCCL_' || true); do unset "$name"; done
export NCCLTUNE_FAKE_MODEL=$fixtures/models/tune-one-knob.yaml
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-8s %-6s %-7s %10s %12s %14s\n' ranks nodes trials "wall s" "in trials s" "overhead/trial"
for ranks in "${ranks_list[@]}"; do
  nodes=$((ranks / per_node))
  out=$work/$ranks
  start=$(date +%s%N)
  if ! NCCLTUNE_EMULATE_NODES=$nodes timeout -k 5 1200 mpirun --oversubscribe -np "$ranks" "$nccltune" tune \
      --cuda-lib "$fakecuda" --nccl-lib "$fakenccl" --space "$fixtures/spaces/tune-small.yaml" --out "$out" \
      --node-counts "$nodes" --comms world --max-bytes 1K --max-trials 20 --init-timeout 60 --size-timeout 30 --progress log \
      >"$work/log.$ranks" 2>&1; then
    tail -n 20 "$work/log.$ranks" >&2
    echo "scale_bench: the tune at $ranks ranks failed" >&2
    exit 1
  fi
  end=$(date +%s%N)
  [ -n "$(find "$out" -name "${nodes}n.yaml")" ] || { echo "scale_bench: no profile at $ranks ranks" >&2; exit 1; }
  awk -v ranks="$ranks" -v nodes="$nodes" -v wall="$(((end - start) / 1000000))" '
    /"duration_s":/ { n++; if (match($0, /"duration_s":[0-9.eE+-]+/)) t += substr($0, RSTART + 13, RLENGTH - 13) }
    END { w = wall / 1000; printf "%-8d %-6d %-7d %10.1f %12.1f %11.0f ms\n", ranks, nodes, n, w, t, n ? (w - t) / n * 1000 : 0 }
  ' "$out/journal.jsonl"
done
