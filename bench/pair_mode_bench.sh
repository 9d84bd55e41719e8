#!/usr/bin/env bash
# What pair mode saves in start-up: `tune --ops all_reduce` on 2 emulated nodes x 2 GPUs of the
# fake GPU stack, on a model whose processes and communicators take as long to start as real ones
# (tests/fixtures/models/startup-cost.yaml: 300 ms per CUDA context, 900 ms per ncclCommInitRank)
# and on the same model without that cost (tune-one-knob.yaml), each with --pair-mode off (one env
# trial per NCCL_ALGO x NCCL_PROTO pair, as before) and auto (the pairs of one env in one
# communicator through nccltune's tuner plugin). Per run: wall time, trials, communicator inits
# and pairs measured in-process (the summary line, checked against the journal's counts), and
# whether env and per_size are those of the zero-cost env-trial run. Exits 1 when a run fails,
# its counts disagree with its journal, or its profile differs.
#
# `--short` (CI): init costs a tenth as long, sizes up to 1 MiB, and two runs only (zero cost with
# env trials, the start-up cost in pair mode), to prove the script and its checks still work.
# usage: bench/pair_mode_bench.sh [--short] [NCCLTUNE] [LIBFAKECUDA] [LIBFAKENCCL] [FIXTURES]
set -euo pipefail
max_bytes=16M
short=0
if [ "${1:-}" = --short ]; then short=1 max_bytes=1M; shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
nccltune=${1:-$here/build/nccltune}
fakecuda=${2:-$here/build/tests/fake-gpu/libfakecuda.so}
fakenccl=${3:-$here/build/tests/fake-gpu/libfakenccl.so}
fixtures=${4:-$here/tests/fixtures}

for name in $(compgen -e | grep '^NCCL_' || true); do unset "$name"; done
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCLTUNE_EMULATE_NODES=2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
startup=$fixtures/models/startup-cost.yaml
if [ "$short" = 1 ]; then
  sed 's/^init_cost_ms: .*/init_cost_ms: {cuda_context: 30, nccl_comm: 90}/' "$startup" >"$work/startup-cost.yaml"
  startup=$work/startup-cost.yaml
fi
grep -q '^init_cost_ms:' "$startup" || { echo "pair_mode_bench: $startup has no init_cost_ms" >&2; exit 1; }

# The profile's env and per_size: what must not change with the start-up cost or the pair mode.
# A per_size range starts at a fitted switch between two measured sizes, measured again
# in pair mode, so its first byte moves a little with each run's noise: what must not change is
# the measured size where its choice first won, the smallest grid size at or above that byte (the
# final grid is every fourth power of two down from max_bytes, itself a power of 4 here). A
# collective's `switches` are that measurement's evidence (brackets and fits), not a decision.
decisions() {
  sed -n '/^keep_defaults:/,/^    results:/p' "$1" | sed '$d' | awk '
    /^ *switches:/ || /^ *- \{lo: / { next }
    /\{min_bytes: [0-9]+, max_bytes: [0-9]+, / {
      n = $0; sub(/.*\{min_bytes: /, "", n); sub(/,.*/, "", n)
      for (g = 1; g < n + 0; g *= 4) {}
      sub(/\{min_bytes: [0-9]+, max_bytes: [0-9]+, /, "{first_won_at: " g ", ")
    }
    { print }'
}

# run NAME MODEL MODE: one tune; prints its row.
run() {
  local name=$1 model=$2 mode=$3 out=$work/$1 start end status=0
  start=$(date +%s%N)
  NCCLTUNE_FAKE_MODEL=$model timeout -k 5 1500 mpirun --oversubscribe -np 4 "$nccltune" tune --ops all_reduce \
    --guard none --comms world --max-bytes "$max_bytes" --pair-mode "$mode" --cuda-lib "$fakecuda" --nccl-lib "$fakenccl" \
    --out "$out" --progress log >"$work/$name.log" 2>&1 || status=$?
  end=$(date +%s%N)
  local summary profile
  summary=$(grep -E '^[0-9]+ env trials?[ ,]' "$work/$name.log" || true)
  profile=$(ls "$out"/*/2n.yaml 2>/dev/null | head -1)
  if [ "$status" -ne 0 ] || [ -z "$summary" ] || [ -z "$profile" ]; then
    tail -n 20 "$work/$name.log" >&2
    echo "pair_mode_bench: $name failed (exit $status)" >&2
    exit 1
  fi
  local trials inits pairs
  # trials: the budget's measurements (a pair counts one), as this table has always counted them.
  trials=$(echo "$summary" | sed -n 's/.*; \([0-9]*\) measurements against.*/\1/p')
  inits=$(echo "$summary" | sed -n 's/.*, \([0-9]*\) communicator inits.*/\1/p')
  pairs=$(echo "$summary" | sed -n 's/.* and \([0-9]*\) pairs\{0,1\} measured in a communicator.*/\1/p')
  pairs=${pairs:-0}
  # The journal's own counts: one line per worker run, each with its communicators.
  local journal_inits
  journal_inits=$(grep -o '"communicators":[0-9]*' "$out/journal.jsonl" | awk -F: '{ n += $2 } END { print n + 0 }')
  [ "$journal_inits" = "$inits" ] ||
    { echo "pair_mode_bench: $name: the summary says $inits communicator inits, the journal $journal_inits" >&2; exit 1; }
  # And its pairs: each pair-mode line lists them (none of these runs fails).
  local journal_pairs
  journal_pairs=$({ grep -o '"pairs":\[[^]]*\]' "$out/journal.jsonl" || true; } | awk -F, '{ n += NF } END { print n + 0 }')
  [ "$journal_pairs" = "$pairs" ] ||
    { echo "pair_mode_bench: $name: the summary says $pairs pairs measured in a communicator, the journal $journal_pairs" >&2; exit 1; }
  decisions "$profile" >"$work/$name.decisions"
  local same=same
  [ -f "$work/reference.decisions" ] || cp "$work/$name.decisions" "$work/reference.decisions"
  cmp -s "$work/reference.decisions" "$work/$name.decisions" || same=DIFFERS
  awk -v n="$name" -v w="$(((end - start) / 1000000))" -v t="$trials" -v i="$inits" -v p="$pairs" -v s="$same" \
    'BEGIN { printf "%-24s %8.1f %7d %7d %7d %9.2f  %s\n", n, w / 1000, t, i, p, i / t, s }'
  [ "$same" = same ] || { diff "$work/reference.decisions" "$work/$name.decisions" >&2; exit 1; }
}

echo "# pair mode: tune --ops all_reduce, 2 emulated nodes x 2 GPUs, sizes to $max_bytes, $(nproc) CPU cores"
echo "# start-up cost: $(grep '^init_cost_ms:' "$startup")"
printf '%-24s %8s %7s %7s %7s %9s  %s\n' run "wall s" trials inits pairs inits/tr "env + per_size"
run zero-cost,env-trials "$fixtures/models/tune-one-knob.yaml" off
if [ "$short" = 0 ]; then
  run zero-cost,pair-mode "$fixtures/models/tune-one-knob.yaml" auto
  run start-up,env-trials "$startup" off
fi
run start-up,pair-mode "$startup" auto
echo "# env + per_size: the same as the first run's, or the run fails"
