#!/usr/bin/env bash
# What measuring every communicator shape costs: `tune --ops all_reduce --guard none` of 8 ranks on
# 2 emulated nodes of the fake GPU stack (tests/fixtures/models/comm-shapes.yaml), `--comms world`
# against the default world, rail and node, without and with a start-up cost of 300 ms per CUDA
# context, 900 ms per ncclCommInitRank and 150 ms per ncclCommSplit (NCCL's own "Init timings -
# ncclCommSplit" lines: a split loads no kernels and does no root rendezvous; the fake's ledger,
# tests/fake-gpu/FIDELITY.md F21). Per run: wall time, trials, communicator inits (the summary line), and from them the world
# inits (each trial's workers init one world; a 3-shape run splits 2 more from it), the worker
# processes (world inits x ranks) and world inits per env trial or pair. Targets (README): at most
# 1.3x the worker processes and 2x the wall time of the world-only tune, at most 0.6 world inits
# per env trial or pair.
#
# `--short`: sizes up to 64K and no start-up cost, to prove the script still works.
# usage: bench/comm_shapes_bench.sh [--short] [NCCLTUNE] [LIBFAKECUDA] [LIBFAKENCCL] [FIXTURES]
set -euo pipefail
max_bytes=1M
short=0
if [ "${1:-}" = --short ]; then short=1 max_bytes=64K; shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
nccltune=${1:-$here/build/nccltune}
fakecuda=${2:-$here/build/tests/fake-gpu/libfakecuda.so}
fakenccl=${3:-$here/build/tests/fake-gpu/libfakenccl.so}
fixtures=${4:-$here/tests/fixtures}

for name in $(compgen -e | grep '^NCCL_' || true); do unset "$name"; done
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCLTUNE_EMULATE_NODES=2 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ranks=8
model=$fixtures/models/comm-shapes.yaml
{ cat "$model"; echo "init_cost_ms: {cuda_context: 300, nccl_comm: 900, nccl_split: 150}"; } >"$work/startup.yaml"

# run NAME MODEL COMMS: one tune; sets wall, trials, inits, pairs.
run() {
  local name=$1 model=$2 comms=$3 start end summary
  start=$(date +%s%N)
  if ! NCCLTUNE_FAKE_MODEL=$model timeout -k 5 1500 mpirun -np "$ranks" "$nccltune" tune --ops all_reduce \
      --guard none --comms "$comms" --max-bytes "$max_bytes" --cuda-lib "$fakecuda" --nccl-lib "$fakenccl" \
      --init-timeout 30 --size-timeout 10 --out "$work/$name" --progress log >"$work/$name.log" 2>&1; then
    tail -n 20 "$work/$name.log" >&2
    echo "comm_shapes_bench: the $name tune failed" >&2
    exit 1
  fi
  end=$(date +%s%N)
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  summary=$(grep -E '^[0-9]+ env trials?[ ,]' "$work/$name.log")
  # trials: the budget's measurements (a pair counts one), as this table has always counted them.
  trials=$(sed -n 's/.*; \([0-9]*\) measurements against.*/\1/p' <<<"$summary")
  inits=$(sed -n 's/.*, \([0-9]*\) communicator inits.*/\1/p' <<<"$summary")
  pairs=$(sed -n 's/.* and \([0-9]*\) pairs\{0,1\} measured in a communicator.*/\1/p' <<<"$summary")
  pairs=${pairs:-0}
}

met=1
costs=("" startup)
[ "$short" = 1 ] && costs=("")
echo "# tune --ops all_reduce, $ranks ranks on 2 emulated nodes, sizes to $max_bytes, $(nproc) CPU cores"
printf '%-22s %-16s %7s %7s %6s %7s %8s %8s %9s\n' "start-up cost" comms "wall s" trials pairs inits world workers "world/tr"
for cost in "${costs[@]}"; do
  file=$model
  [ -n "$cost" ] && file=$work/startup.yaml
  declare -A w=() p=()
  for comms in world world,rail,node; do
    splits=$(( $(tr ',' '\n' <<<"$comms" | wc -l) - 1 ))
    run "${cost:-none}-${comms//,/-}" "$file" "$comms"
    world=$((inits / (1 + splits)))
    w[$comms]=$wall p[$comms]=$((world * ranks))
    printf '%-22s %-16s %7s %7s %6s %7s %8s %8s %9.2f\n' "${cost:-none}" "$comms" "$wall" "$trials" "$pairs" \
      "$inits" "$world" "$((world * ranks))" "$(awk -v a="$world" -v b="$trials" 'BEGIN { print a / b }')"
    awk -v a="$world" -v b="$trials" 'BEGIN { exit !(a / b <= 0.6) }' || met=0
  done
  processes=$(awk -v a="${p[world,rail,node]}" -v b="${p[world]}" 'BEGIN { printf "%.2f", a / b }')
  slower=$(awk -v a="${w[world,rail,node]}" -v b="${w[world]}" 'BEGIN { printf "%.2f", a / b }')
  echo "  3 shapes against the world alone (start-up cost: ${cost:-none}): ${processes}x the worker processes, ${slower}x the wall time"
  awk -v a="$processes" -v b="$slower" 'BEGIN { exit !(a <= 1.3 && b <= 2) }' || met=0
done
[ "$met" = 1 ] && echo "targets (1.3x the processes, 2x the wall time, 0.6 world inits per trial): met" ||
  echo "targets (1.3x the processes, 2x the wall time, 0.6 world inits per trial): NOT met"
