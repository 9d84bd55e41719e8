#!/usr/bin/env bash
# Every job size, on the fake GPU stack with a model whose best middle-size algorithm changes
# between 2 and 8 nodes (tests/fixtures/models/node-crossover.yaml; 2 ranks per emulated node):
# 1. tuned at 2 nodes only, a job of 8 nodes gets only what holds at 8 (env --nodes 8), and a
#    bench at 8 emulated nodes under exactly that env is at least 0.98x NCCL's defaults at every
#    size, while the transport knob that helps at every count still reaches it;
# 2. `tune --node-counts 2,8` on 8 emulated nodes writes both profiles, each with its count's own
#    choice, in at most 2x the trials of one count;
# 3. bad --node-counts: one line naming the flag, exit 2, nothing measured.
# usage: node_counts_test.sh NCCLTUNE FAKECUDA FAKENCCL FIXTURES
nccltune=$1 fakecuda=$2 fakenccl=$3 fixtures=$4
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCLTUNE_CUDA_LIB=$fakecuda NCCLTUNE_NCCL_LIB=$fakenccl
export NCCLTUNE_FAKE_MODEL=$fixtures/models/node-crossover.yaml
for name in $(compgen -e | grep '^NCCL_'); do unset "$name"; done
export NCCLTUNE_TEST_TAG="node-counts-test-$$-$RANDOM"
on_exit 'kill -9 $(tagged_processes) 2>/dev/null'
check_that() { if eval "$1"; then pass; else fail "$2"; return 1; fi; }
show_log() { sed 's/^/  | /' "$1" | tail -n 20; }

# tune RANKS NODES OUT [args...]: output in $work/log.
tune() {
  local ranks=$1 nodes=$2 out=$3
  shift 3
  NCCLTUNE_EMULATE_NODES=$nodes timeout 900 mpirun -np "$ranks" "$nccltune" tune --space "$fixtures/spaces/tune-small.yaml" \
    --out "$out" --max-bytes 1M --init-timeout 20 --size-timeout 10 --progress log --comms world "$@" >"$work/log" 2>&1
}
# bench_busbw NAME [VAR=VALUE...]: all_reduce at 8 emulated nodes (16 ranks), one busbw per size in $work/NAME.
bench_busbw() {
  local name=$1
  shift
  env NCCLTUNE_EMULATE_NODES=8 "$@" timeout 300 mpirun -np 16 "$nccltune" bench -b 8 -e 1M -f 4 -n 3 -w 1 \
    --init-timeout 20 --size-timeout 10 >"$work/$name.out" 2>&1
  awk '$1 ~ /^[0-9]+$/ { print $1, $8 }' "$work/$name.out" >"$work/$name"
}

# 3. Bad input, before any trial.
for bad in 0 -2 two 2,2 16; do
  tune 16 8 "$work/bad" --node-counts "$bad"
  status=$?
  check_that "[ $status -eq 2 ]" "--node-counts $bad exits 2 (got $status)" || show_log "$work/log"
  check_that "[ \$(grep -c '^nccltune tune: --node-counts' '$work/log') -eq 1 ]" "--node-counts $bad: one line naming the flag" ||
    show_log "$work/log"
  check_that "! grep -q 'trial 1 ' '$work/log'" "--node-counts $bad: nothing measured"
done

# 1. Tuned at 2 nodes only, served to 8.
tune 4 2 "$work/two"
status=$?
check_that "[ $status -eq 0 ]" "tune on 2 nodes exits 0 (got $status)" || show_log "$work/log"
cp "$work/log" "$work/log.two"
profile=$(find "$work/two" -name 2n.yaml)
key=$(basename "$(dirname "$profile")")
check_that "sed -n '/^env:/,/^collectives:/p' '$profile' | grep -q 'NCCL_ALGO: \"Ring\"'" \
  "2 nodes: rings ship (NCCL's defaults run trees in the middle sizes there)" || show_log "$work/log"
"$nccltune" env --strict --profiles "$work/two" --shape "$key" --nodes 8 --gpus-per-node 2 --format sh >"$work/env8" 2>"$work/env8.err"
check_that "grep -q \"^export NCCL_NET_GDR_LEVEL='SYS'\" '$work/env8'" "8 nodes: the transport knob reaches the job" ||
  sed 's/^/  | /' "$work/env8"
check_that "! grep -q '^export NCCL_ALGO' '$work/env8'" "8 nodes: no NCCL_ALGO carried from 2 nodes"
check_that "grep -q '^# nccltune withheld: NCCL_ALGO=Ring: above the largest measured node count (2)' '$work/env8'" \
  "8 nodes: the withheld setting is named in a comment" || sed 's/^/  | /' "$work/env8"
bench_busbw defaults
(set -a; source "$work/env8"; set +a; bench_busbw served)
check_that "[ \$(wc -l <'$work/defaults') -ge 5 ] && [ \$(wc -l <'$work/served') -eq \$(wc -l <'$work/defaults') ]" \
  "both benches measured every size" || cat "$work/defaults.out" | tail -5
if paste "$work/defaults" "$work/served" | awk '$2 > 0 && $4 < 0.98 * $2 { bad = 1; print "  | " $1 ": " $4 " vs " $2 } END { exit bad }'; then
  pass
else
  fail "8 nodes under the served env: a size below 0.98x NCCL's defaults"
fi
# The same env without the rule (the 2-node profile whole) is what the rule prevents.
(export NCCL_ALGO=Ring NCCL_NET_GDR_LEVEL=SYS; bench_busbw carried)
check_that "paste '$work/defaults' '$work/carried' | awk '\$4 < 0.9 * \$2 { slow = 1 } END { exit !slow }'" \
  "the 2-node NCCL_ALGO=Ring is slower at 8 nodes (what the rule withholds)"

# 2. Both counts in one allocation of 8 nodes.
tune 16 8 "$work/both" --node-counts 2,8
status=$?
check_that "[ $status -eq 0 ]" "tune --node-counts 2,8 exits 0 (got $status)" || show_log "$work/log"
two=$(find "$work/both" -name 2n.yaml)
eight=$(find "$work/both" -name 8n.yaml)
check_that "[ -n '$two' ] && [ -n '$eight' ]" "both profiles written" || show_log "$work/log"
check_that "grep -q 'nccltune tune: node counts 8, 2' '$work/log'" "the plan is printed" || show_log "$work/log"
check_that "sed -n '/^env:/,/^collectives:/p' '$two' | grep -q 'NCCL_ALGO: \"Ring\"'" "2n.yaml: rings" || show_log "$work/log"
check_that "! sed -n '/^env:/,/^collectives:/p' '$eight' | grep -q NCCL_ALGO" "8n.yaml: NCCL's trees stand" ||
  show_log "$work/log"
check_that "grep -q 'NCCL_NET_GDR_LEVEL: \"SYS\"' '$eight' && grep -q 'NCCL_NET_GDR_LEVEL: \"SYS\"' '$two'" \
  "the transport knob in both"
# The budget each run spent, from its summaries ("...; 57 measurements against --max-trials ...").
trials_of() { grep -Eo '[0-9]+ measurements against' "$1" | awk '{ n += $1 } END { print n + 0 }'; }
one=$(trials_of "$work/log.two")
both=$(trials_of "$work/log")
check_that "[ $one -gt 0 ] && [ $both -le \$((2 * one)) ]" "2 counts in at most 2x the trials of one ($both vs $one)"
finish
