#!/usr/bin/env bash
# Every size a job asks for: on a model whose Tree/LL128 beats Ring/LL128 (NCCL's own
# choice) below about 1.4 MiB at 4 ranks, between the grid's 1M and 4M
# (fixtures/models/tune-off-grid-crossover.yaml), `mpirun -np 4 nccltune tune` puts the switch
# where the measured costs cross, records it with its bracket, and `bench` through the tuner
# plugin with the profile runs at 0.75x, 1.5x and 3x of the grid sizes around it within 3% of
# NCCL's own choice or better, while the gain below the crossover still reaches the job.
# usage: off_grid_crossover_test.sh NCCLTUNE FAKECUDA FAKENCCL TUNER_PLUGIN FIXTURES
nccltune=$1 fakecuda=$2 fakenccl=$3 plugin=$4 fixtures=$5
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_CUDA_LIB=$fakecuda NCCLTUNE_NCCL_LIB=$fakenccl
export NCCLTUNE_FAKE_MODEL=$fixtures/models/tune-off-grid-crossover.yaml
for name in $(compgen -e | grep -e '^NCCL_' -e '^NCCLTUNE_PROFILE'); do unset "$name"; done
export NCCLTUNE_TEST_TAG="off-grid-crossover-test-$$-$RANDOM"
on_exit 'kill -9 $(tagged_processes) 2>/dev/null'
check_that() { if eval "$1"; then pass; else fail "$2"; return 1; fi; }
show_log() { sed 's/^/  | /' "$1" | tail -n 20; }

# 1. The tune, as the issue measured it: the world, all_reduce, up to 16M.
timeout 900 mpirun -np 4 "$nccltune" tune --space "$fixtures/spaces/algo-proto.yaml" --out "$work/store" \
  --comms world --ops all_reduce --guard none --max-bytes 16M --init-timeout 60 --size-timeout 60 \
  --progress log >"$work/log" 2>&1
status=$?
check_that "[ $status -eq 0 ]" "tune exits 0 (got $status)" || show_log "$work/log"
profile=$(find "$work/store" -name 2n.yaml | head -1)
check_that "[ -n '$profile' ]" "tune writes <store>/<key>/2n.yaml" || show_log "$work/log"

# 2. The profile records the switch from Tree/LL128 to Ring/LL128 with its bracket inside 1M..4M,
# no wider than 1.25x or fitted; show names it.
switch=$(grep -m1 'below: "\?Tree/LL128' "$profile")
check_that "[ -n \"\$switch\" ]" "the profile records the Tree/LL128 switch" || sed -n '/per_size:/,/results:/p' "$profile"
lo=$(sed -n 's/.*lo: \([0-9]*\).*/\1/p' <<<"$switch") hi=$(sed -n 's/.*hi: \([0-9]*\).*/\1/p' <<<"$switch")
at=$(sed -n 's/.*bytes: \([0-9]*\).*/\1/p' <<<"$switch")
check_that "[ -n '$lo' ] && [ $lo -ge 1048576 ] && [ ${hi:-0} -le 4194304 ] && [ ${at:-0} -gt $lo ] && [ ${at:-0} -le ${hi:-0} ]" \
  "the switch lies in its bracket inside 1M..4M (lo $lo, bytes $at, hi $hi)"
"$nccltune" show "$profile" >"$work/show" 2>&1
check_that "grep -q 'Tree/LL128 -> Ring/LL128' '$work/show'" "show names the switch" || show_log "$work/show"

# 3. bench NAME [VAR=VALUE...]: all_reduce at 384K .. 12M by 2x; busbw per size in $work/NAME.busbw.
bench() {
  local name=$1
  shift
  env "$@" timeout -k 5 300 mpirun -np 4 "$nccltune" bench -b 384K -e 12M -f 2 -n 20 -w 2 --init-timeout 60 \
    --size-timeout 60 >"$work/$name.out" 2>"$work/$name.err"
  check_that "[ $? -eq 0 ]" "$name: bench exits 0" || tail -5 "$work/$name.err"
  awk '$1 ~ /^[0-9]+$/ && NF >= 8 { print $1, $8 }' "$work/$name.out" >"$work/$name.busbw"
}
profile_env=()
while read -r name value; do profile_env+=("$name=$value"); done < <(
  sed -n '/^env:/,/^[a-z]/p' "$profile" | sed -n 's/^  \(NCCL_[A-Z0-9_]*\): "\?\([^"]*\)"\?$/\1 \2/p')
bench own "${profile_env[@]}"
bench served NCCL_TUNER_PLUGIN="$plugin" NCCLTUNE_PROFILE="$profile" "${profile_env[@]}"
ratios=$(join "$work/own.busbw" "$work/served.busbw" | awk '{ printf "%s %.3f\n", $1, $3 / $2 }')
check_that "[ \$(wc -l <<<'$ratios') -eq 6 ]" "both benches measured 6 sizes" || echo "$ratios"
# 768K, 1.5M and 3M (0.75x, 1.5x and 3x of 1M), 6M and 12M (1.5x and 3x of 4M): within 3% or better.
check_that "awk '\$1 >= 786432 && \$2 < 0.97 { bad = 1 } END { exit bad }' <<<'$ratios'" \
  "with the plugin no size from 768K to 12M runs below 0.97x of NCCL's own choice: $(tr '\n' ' ' <<<"$ratios")"
# 384K, below the crossover: Tree/LL128's gain reaches the job.
check_that "awk '\$1 == 393216 && \$2 >= 1.2 { ok = 1 } END { exit !ok }' <<<'$ratios'" \
  "below the crossover the plugin's Tree/LL128 gains at least 1.2x at 384K: $(head -1 <<<"$ratios")"
finish
