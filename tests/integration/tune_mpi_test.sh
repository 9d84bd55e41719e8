#!/usr/bin/env bash
# `nccltune tune` as a bring-up engineer runs it, on the fake GPU stack with 2 emulated nodes:
# the model's optimum is found, failing configs are skipped and reported, a killed run resumes,
# unlike nodes are refused. usage: tune_mpi_test.sh NCCLTUNE FAKECUDA FAKENCCL FIXTURES
nccltune=$1 fakecuda=$2 fakenccl=$3 fixtures=$4
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_CUDA_LIB=$fakecuda NCCLTUNE_NCCL_LIB=$fakenccl
# Every process this test starts (mpirun, ranks, workers) carries this tag in its environment,
# so leftovers are told apart from whatever else runs on the machine.
export NCCLTUNE_TEST_TAG="tune-mpi-test-$$-$RANDOM"
on_exit 'kill -9 $(tagged_processes) 2>/dev/null'
# check_that CONDITION DESCRIPTION: CONDITION is shell text, evaluated.
check_that() { if eval "$1"; then pass; else fail "$2"; return 1; fi; }
show_log() { sed 's/^/  | /' "$1" | tail -n 15; }

tune() {  # tune MODEL SPACE OUT [args...]: output in $work/log; MODEL: a fixture's name or a path
  local model=$1 space=$2 out=$3
  shift 3
  [[ $model == /* ]] || model=$fixtures/models/$model
  NCCLTUNE_FAKE_MODEL=$model timeout 600 mpirun -np 4 "$nccltune" tune --space "$fixtures/spaces/$space" \
    --out "$out" --max-bytes "${MAX_BYTES:-1M}" --init-timeout 5 --size-timeout 3 --progress log --comms world "$@" >"$work/log" 2>&1
}

# 0. A collective tune does not measure is refused before any trial, on one line.
tune tune-one-knob.yaml tune-small.yaml "$work/bad-ops" --ops all_reduce,allgather
status=$?
check_that "[ $status -eq 2 ]" "--ops with an unknown collective exits 2 (got $status)"
check_that "grep -q \"^nccltune tune: --ops: 'allgather' is not a collective tune measures\" '$work/log'" \
  "--ops: the error names the flag and the value" || show_log "$work/log"
check_that "[ ! -e '$work/bad-ops' ]" "--ops error: nothing written"

# 1. One knob is the optimum: the profile's env is exactly that knob, per-size choices are there.
# Under umask 002, as many sites set it: the store must still be one that env accepts.
(umask 002; tune tune-one-knob.yaml tune-small.yaml "$work/one")
status=$?
check_that "[ $status -eq 0 ]" "one-knob tune exits 0 (got $status)" || show_log "$work/log"
profile=$(find "$work/one" -name 2n.yaml)
check_that "[ -n '$profile' ]" "one-knob profile written as <out>/<key>/2n.yaml"
check_that "grep -q 'NCCL_NET_GDR_LEVEL: \"SYS\"' '$profile'" "profile env has NCCL_NET_GDR_LEVEL=SYS"
check_that "[ \$(sed -n '/^env:/,/^collectives:/p' '$profile' | grep -c 'NCCL_') -eq 1 ]" "profile env has nothing else"
check_that "grep -q 'algo: \"Tree\", proto: \"LL\"' '$profile'" "per-size choice for small sizes"
check_that "grep -q 'speedup' '$work/log' && grep -q 'defaults GB/s' '$work/log'" "summary table printed"
check_that no_tagged_processes_left "no worker left after a finished tune"
check_that "! grep -q 'env will refuse' '$work/log'" "no store warning under umask 002"
check_that "[ -z \"\$(find '$work/one' -type d ! -perm 0755)\" ]" "store directories are 0755 under umask 002"
check_that "[ -z \"\$(find '$work/one' -type f ! -perm 0644)\" ]" "store files are 0644 under umask 002"
# No GPU on this machine: the hardware peak is unknown, and the profile and summary say why.
check_that "grep -q 'peak_bottleneck: \"unknown: no GPU found\"' '$profile'" "profile: peak unknown, with the reason"
check_that "! grep -q 'peak_busbw_gbps' '$profile'" "profile: no peak number invented"
# The default collectives, measured in every trial, and alltoall as a guard.
for op in all_reduce all_gather reduce_scatter; do
  check_that "sed -n '/^collectives:/,/^provenance:/p' '$profile' | grep -qx '  $op:'" "profile holds $op"
done
check_that "sed -n '/^  alltoall:/,+1p' '$profile' | grep -qx '    guard: true'" "profile holds alltoall as a guard"
check_that "grep -qx 'all_gather' '$work/log'" "summary: a table per collective"
check_that "grep -q '^peak     unknown: no GPU found' '$work/log'" "summary: peak unknown, with the reason"
: >"$work/empty-config.yaml"
key=$(basename "$(dirname "$profile")")
"$nccltune" env --config "$work/empty-config.yaml" --node-state "$work/no-node.yaml" --profiles "$work/one" --shape "$key" \
  --nodes 2 --gpus-per-node 2 --strict >"$work/env.out" 2>"$work/env.err"
check_that "[ \"\$(. '$work/env.out' && echo \"\$NCCL_NET_GDR_LEVEL\")\" = SYS ]" "env gives the profile's variables from a umask-002 store" ||
  show_log "$work/env.err"

# The plugin served the per-size choices in the confirmation's own workers: confirmed, and said last.
check_that "grep -q 'plugin: {status: confirmed, why: \"' '$profile' && grep -q 'with_plugin:' '$profile'" \
  "profile: the plugin's per-size choices confirmed where it served them"
check_that "tail -n 6 '$work/log' | grep -q '^the tuner plugin, all_reduce: confirmed: '" \
  "the tune's last lines say what the plugin delivered" || show_log "$work/log"

# 1b. The same tune on nodes read as 8-GPU DGX H100s: the plugin declines the 2-ranks-per-node
# communicator, so nothing is confirmed, no with-plugin column stands in for the env's, and the
# profile and the summary give the plugin's own reason.
tune tune-one-knob.yaml tune-small.yaml "$work/declined" --from "$fixtures/nodes/dgx-h100"
profile=$(find "$work/declined" -name 2n.yaml)
check_that "[ -n '$profile' ] && grep -q 'plugin: {status: not_served, why: \"not using .*tuned for 8 GPUs per node' '$profile'" \
  "declined: the profile says not served, with the plugin's reason" || show_log "$work/log"
check_that "! grep -q 'with_plugin:\|status: confirmed' '$profile'" "declined: nothing confirmed, no with-plugin curve"
check_that "grep -q '^the tuner plugin, all_reduce: not served: not using' '$work/log'" "declined: the summary says not served"
check_that "! grep -q 'nccltune-profile-' '$profile' '$work/log'" \
  "declined: the reason names the profile being tuned, not a rank's private copy of it"
check_that "! sed -n '/^  all_reduce:/,/^  [a-z]/p' '$profile' | grep -q 'algo: \"Tree\"'" \
  "declined: the per-size choice it did not serve is not shipped"

# 2. Hanging, crashing, corrupting and failing configs are skipped, reported, never chosen.
tune tune-faults.yaml tune-faults.yaml "$work/faults"
status=$?
check_that "[ $status -eq 0 ]" "faults tune exits 0 (got $status)" || show_log "$work/log"
profile=$(find "$work/faults" -name 2n.yaml)
for outcome in timeout crash wrong_data init_error; do
  check_that "grep -q 'outcome: \"$outcome\"' '$profile'" "profile reports a $outcome trial"
done
check_that "sed -n '/^env:/,/^collectives:/p' '$profile' | grep -q 'NCCL_NET_GDR_LEVEL: \"SYS\"'" "faults: optimum still found"
check_that "! sed -n '/^env:/,/^collectives:/p' '$profile' | grep -qE 'NTHREADS|BUFFSIZE|MIN_NCHANNELS|PHB'" "no failing value chosen"
check_that no_tagged_processes_left "no worker left after hangs and crashes"

# 3. A run killed half-way resumes from its journal and measures nothing twice.
journal=$work/resume.jsonl
NCCLTUNE_FAKE_MODEL=$fixtures/models/tune-one-knob.yaml setsid mpirun -np 4 "$nccltune" tune --space "$fixtures/spaces/tune-small.yaml" \
  --out "$work/resume" --journal "$journal" --max-bytes 1M --progress log --comms world >"$work/first.log" 2>&1 &
leader=$!
for _ in $(seq 600); do
  [ -f "$journal" ] && [ "$(wc -l <"$journal")" -ge 8 ] && break
  sleep 0.2
done
kill -9 -- -"$leader" 2>/dev/null  # mpirun only: Open MPI gives each rank its own process group
wait "$leader" 2>/dev/null
check_that no_tagged_processes_left "ranks and workers end with a killed mpirun"
done_before=$(wc -l <"$journal")
check_that "[ $done_before -ge 8 ]" "journal holds trials before the kill ($done_before)"
check_that "[ -z \"\$(find '$work/resume' -name 2n.yaml 2>/dev/null)\" ]" "no profile from the killed run"
NCCLTUNE_FAKE_MODEL=$fixtures/models/tune-one-knob.yaml timeout 600 mpirun -np 4 "$nccltune" tune --space "$fixtures/spaces/tune-small.yaml" \
  --out "$work/resume" --journal "$journal" --max-bytes 1M --progress log --comms world --resume >"$work/log" 2>&1
status=$?
check_that "[ $status -eq 0 ]" "resumed tune exits 0 (got $status)" || show_log "$work/log"
check_that "grep -qE 'resuming: ([0-9]+) finished trials' '$work/log'" "resume reports the journal's trials"
cached=$(grep -c 'from journal' "$work/log")
check_that "[ $cached -ge $((done_before - 1)) ]" "resumed run took $cached of $done_before trials from the journal"
check_that "grep -q 'NCCL_NET_GDR_LEVEL: \"SYS\"' \$(find '$work/resume' -name 2n.yaml)" "resumed run finds the optimum"
check_that no_tagged_processes_left "no worker left after the kill and resume"

# 4. Unlike nodes are refused, listing the odd one; --allow-mixed goes on.
tune tune-one-knob.yaml tune-small.yaml "$work/mixed" --from "$fixtures/nodes/dgx-h100,$fixtures/nodes/dgx-a100"
status=$?
check_that "[ $status -eq 2 ]" "mixed nodes exit 2 (got $status)"
check_that "grep -q 'not alike' '$work/log' && grep -q 'a100' '$work/log'" "mixed-node message names the odd node"
tune tune-one-knob.yaml tune-small.yaml "$work/mixed" --from "$fixtures/nodes/dgx-h100,$fixtures/nodes/dgx-a100" --allow-mixed --max-trials 12
status=$?
check_that "[ $status -eq 0 ]" "--allow-mixed tunes anyway (got $status)"
# The peak on 2 nodes of 2 ranks is the slower node's: the DGX-A100's two 200G rails, 50 GB/s
# (the DGX-H100's two 400G rails would carry 100).
profile=$(find "$work/mixed" -name 2n.yaml)
check_that "grep -q 'peak_busbw_gbps: 50$' '$profile'" "profile: peak of the slower node, 2 rails"
check_that "grep -q 'peak_bottleneck: \"network, 1x mlx5 200 Gb/s per GPU x 2 GPUs\"' '$profile'" "profile: the bottleneck"
check_that "grep -Eq '^peak     50 GB/s \(network, 1x mlx5 200 Gb/s per GPU x 2 GPUs\): busbw at 1M is [0-9]+% of it' '$work/log'" \
  "summary: the share of the peak" || show_log "$work/log"

# 5. Only what was measured. The model's defaults use Simple above 64K and LL128 wins up to 1M:
# NCCL_PROTO=LL,LL128 would take Simple from every larger size, so no list without it reaches env
# (the pair-derived candidate keeps Simple for that reason).
tune tune-drops-simple.yaml tune-small.yaml "$work/drops"
status=$?
check_that "[ $status -eq 0 ]" "drops-simple tune exits 0 (got $status)" || show_log "$work/log"
profile=$(find "$work/drops" -name 2n.yaml)
check_that "[ -n '$profile' ]" "drops-simple profile written"
proto=$(sed -n '/^env:/,/^collectives:/p' "$profile" | sed -n 's/.*NCCL_PROTO: "\([^"]*\)".*/\1/p')
check_that "[ -z '$proto' ] || echo '$proto' | grep -q Simple" "no NCCL_PROTO list without Simple in env (got '$proto')"
check_that "grep -qx '    measured: {min_bytes: 16, max_bytes: 1048576}' '$profile'" "profile records the measured range"
last=$(sed -n '/^    per_size:/,/^    results:/p' "$profile" | grep -o 'max_bytes: [0-9]*' | tail -1)
check_that "[ '$last' = 'max_bytes: 1048576' ]" "per_size ends at 1 MiB (got '$last')"
"$nccltune" show "$profile" >"$work/show.txt" 2>&1
check_that "grep -qE '^  above 1M +not measured' '$work/show.txt'" "show marks the range above 1M as not measured" ||
  show_log "$work/show.txt"

# 6. NCCL's own account. The fake NCCL reports sockets while the DGX-H100 snapshot has 8 ACTIVE
# IB ports: tune says so, and the profile records what NCCL said under the defaults and the env.
# NCCL's log goes to a private directory under TMPDIR, which is empty again afterwards.
mkdir -p "$work/capture-tmp"
{ cat "$fixtures/models/tune-one-knob.yaml"; echo "nccl_log: {transport: Socket, devices: [eth0], gdr: false}"; } \
  >"$work/socket.yaml"
TMPDIR="$work/capture-tmp" tune "$work/socket.yaml" tune-small.yaml "$work/socket" --from "$fixtures/nodes/dgx-h100" --max-trials 12
status=$?
check_that "[ $status -eq 0 ]" "socket tune exits 0 (got $status)" || show_log "$work/log"
profile=$(find "$work/socket" -name 2n.yaml)
check_that "grep -q 'fail  transport: NCCL sends between nodes over sockets although the node has 8 ACTIVE RDMA ports' '$work/log'" \
  "tune says NCCL used sockets" || show_log "$work/log"
check_that "grep -q 'NCCL chose' '$work/log' && grep -q 'measured best' '$work/log'" "summary: NCCL chose next to measured best"
check_that "sed -n '/nccl_observed:/,/^failed:/p' '$profile' | grep -q 'transport: \"Socket\"'" "profile: nccl_observed transport"
check_that "sed -n '/nccl_observed:/,/^failed:/p' '$profile' | grep -q 'level: \"fail\", check: \"transport\"'" "profile: the verdict"
check_that "sed -n '/nccl_observed:/,/^failed:/p' '$profile' | grep -q 'op: \"AllReduce\", bytes: 1048576'" "profile: NCCL's per-size choices"
check_that "[ -z \"\$(ls -A '$work/capture-tmp')\" ]" "no capture directory left in TMPDIR"
"$nccltune" show "$profile" >"$work/show.txt" 2>&1
check_that "grep -q 'NCCL chose' '$work/show.txt' && grep -q 'NCCL said (defaults): Socket' '$work/show.txt'" "show: what NCCL said" ||
  show_log "$work/show.txt"
# NCCL's own model (the init tuning table, which the fake prints from its model) beside the measurement.
check_that "sed -n '/nccl_model:/,/^failed:/p' '$profile' | grep -q 'algo: \"RING\", proto: \"SIMPLE\"'" "profile: NCCL's model" ||
  sed -n '/nccl_observed:/,/^failed:/p' "$profile" >&2
check_that "grep -q \"NCCL's model: \" '$work/show.txt'" "show: NCCL's model next to the measurement" || show_log "$work/show.txt"
{ cat "$fixtures/models/tune-one-knob.yaml"; echo "nccl_log: {transport: IB, devices: [mlx5_0, mlx5_1], gdr: false}"; } \
  >"$work/nogdr.yaml"
tune "$work/nogdr.yaml" tune-small.yaml "$work/nogdr" --from "$fixtures/nodes/dgx-h100" --max-trials 12
check_that "grep -q 'GPUDirect RDMA is off on all' '$work/log'" "tune says GPUDirect RDMA was off" || show_log "$work/log"

# 7. Several collectives, one worker run per trial. The model's NCCL_MIN_NCHANNELS=32 gives
# all_reduce +15% and costs reduce_scatter 12%: it is not shipped, and reduce_scatter keeps its
# speed at every size; GDR=SYS helps every collective and ships. No NCCL_ALGO/NCCL_PROTO list hides
# the loss: NCCL still picks its own pair under a list that allows it.
tune collectives-channels-tradeoff.yaml tune-small.yaml "$work/rs"
status=$?
check_that "[ $status -eq 0 ]" "collectives tune exits 0 (got $status)" || show_log "$work/log"
profile=$(find "$work/rs" -name 2n.yaml)
check_that "! sed -n '/^env:/,/^collectives:/p' '$profile' | grep -q NCCL_MIN_NCHANNELS" \
  "a setting that slows reduce_scatter is not shipped" || show_log "$work/log"
check_that "sed -n '/^env:/,/^collectives:/p' '$profile' | grep -q 'NCCL_NET_GDR_LEVEL: \"SYS\"'" \
  "a transport setting that helps every collective ships" || show_log "$work/log"
rs_worst=$(sed -n '/^  reduce_scatter:/,/^  [a-z_]*:$/p' "$profile" | sed -n 's/^ *worst_size_ratio: //p')
check_that "awk 'BEGIN { exit !($rs_worst >= 0.98) }'" "reduce_scatter's worst size keeps its speed (got $rs_worst)"
# all_gather's defaults keep a slow LL to 1M: the protocol list ships scoped to allgather (NCCL
# 2.28 reads lists per collective), measured to 4M so that NCCL's own choice there is kept.
MAX_BYTES=4M tune collectives-allgather-proto.yaml tune-small.yaml "$work/ag"
status=$?
check_that "[ $status -eq 0 ]" "all_gather tune exits 0 (got $status)" || show_log "$work/log"
profile=$(find "$work/ag" -name 2n.yaml)
check_that "sed -n '/^env:/,/^collectives:/p' '$profile' | grep -q 'NCCL_PROTO: \"allgather:LL128,Simple'" \
  "all_gather's protocols ship scoped to allgather" || show_log "$work/log"
check_that "! sed -n '/^env:/,/^collectives:/p' '$profile' | grep -q NCCL_ALGO" \
  "no NCCL_ALGO ships that only restates NCCL's own choices" || show_log "$work/log"
check_that "\"$nccltune\" env --strict --profiles '$work/ag' --shape \"\$(basename \"\$(dirname '$profile')\")\" --nodes 2 --gpus-per-node 2 | grep -q \"^export NCCL_PROTO='allgather:LL128,Simple\"" \
  "env emits the scoped list, quoted"

finish
