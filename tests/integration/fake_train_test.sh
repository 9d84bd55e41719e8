#!/usr/bin/env bash
# `mpirun -np 8 fake_train` on 2 emulated nodes, as a 3D-parallel job runs: the world, rail and
# node communicators split off with their names (ncclConfig_t's commName), each collective given
# to a profiler plugin as NCCL gives it (the fake's test plugin writes what it saw), and a
# late_rank fault: every other rank of the late rank's communicators waits for it, at every
# collective, and only those.
# usage: fake_train_test.sh FAKE_TRAIN FAKECUDA FAKENCCL TEST_PROFILER FIXTURES
fake_train=$1 fakecuda=$2 fakenccl=$3 profiler=$4 fixtures=$5
source "$(dirname "$0")/lib.sh"
for name in $(compgen -e | grep '^NCCL_'); do unset "$name"; done
unset NCCLTUNE_EMULATE_NODES NCCLTUNE_FAKE_MODEL
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# train NAME MODEL [FAKE_TRAIN ARGS...]: 8 ranks, 2 emulated nodes; the plugin's files are
# $work/NAME/calls.<comm name>.<rank>.
train() {
  local name=$1 model=$2
  shift 2
  mkdir -p "$work/$name"
  NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_FAKE_MODEL=$model NCCLTUNE_FAKE_TIMEOUT_S=20 NCCL_PROFILER_PLUGIN=$profiler \
    FAKE_TEST_PROFILER_OUT="$work/$name/calls" \
    timeout -k 5 60 mpirun --oversubscribe -np 8 "$fake_train" --nccl-lib "$fakenccl" --cuda-lib "$fakecuda" "$@" \
    >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
}

# exec_times FILE: "<func> <seq> <ns>" per collective, from its first channel's GPU timer.
exec_times() {
  awk '/^coll /{ for (i = 2; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }; func_ = f["func"]; seq = f["seq"] }
       /^kernel ch=0 /{ split($4, kv, "="); start = kv[2] }
       /^kernel-stop ch=0 /{ split($3, kv, "="); print func_, seq, kv[2] - start }' "$1"
}

train plain "$fixtures/models/comm-shapes.yaml" --steps 3 --bytes 64K,1M --compute-us 200
expect_equal "$rc" 0 "plain run: exit status"
expect_in "$work/plain.out" "fake_train: 3 steps on 8 ranks (2 nodes): 3 communicators per rank" "plain run: summary"
for rank in 0 1 2 3 4 5 6 7; do
  node=$((rank / 4)) local=$((rank % 4))
  expect_in "$work/plain/calls.world.$rank" "name=world nodes=2 ranks=8 rank=$rank" "world rank $rank: init"
  expect_in "$work/plain/calls.rail $local.$node" "name=rail $local nodes=2 ranks=2 rank=$node" \
    "rail $local rank $node: init"
  expect_in "$work/plain/calls.node $node.$local" "name=node $node nodes=1 ranks=4 rank=$local" \
    "node $node rank $local: init"
done
# 3 steps of 2 sizes: all_reduce on the world and the rails, all_gather and reduce_scatter on the nodes.
expect_equal "$(grep -c '^coll func=AllReduce' "$work/plain/calls.world.5")" 6 "world: 6 all_reduce"
expect_equal "$(grep -c '^coll func=AllReduce' "$work/plain/calls.rail 1.1")" 6 "rail: 6 all_reduce"
expect_equal "$(grep -c '^coll func=AllGather' "$work/plain/calls.node 1.1")" 6 "node: 6 all_gather"
expect_equal "$(grep -c '^coll func=ReduceScatter' "$work/plain/calls.node 1.1")" 6 "node: 6 reduce_scatter"
expect_in "$work/plain/calls.world.0" "coll func=AllReduce seq=5 count=262144 type=ncclFloat32" "world: NCCL's names"
expect_in "$work/plain/calls.node 0.0" "coll func=AllGather seq=0 count=4096 type=ncclFloat32" \
  "node: all_gather counts a rank's part"
expect_equal "$(grep -c '^finalize' "$work/plain/calls.world.3")" 1 "world: finalized"

# Rank 5 (node 1, local rank 1) reaches every collective 400 us late.
cp "$fixtures/models/comm-shapes.yaml" "$work/late.yaml"
echo "faults: [{fault: late_rank, rank: 5, delay_us: 400}]" >>"$work/late.yaml"
train late "$work/late.yaml" --steps 3 --bytes 64K,1M --compute-us 200
expect_equal "$rc" 0 "late run: exit status"
# waits FILE_OF_LATE_RANK OTHER_FILE [US]: the collectives where the other rank ran US (default
# 380, for a delay of 400: noise is 1%) or more longer than the late one, and all of them.
waits() {
  join <(exec_times "$1" | awk '{print $1 "-" $2, $3}' | sort) <(exec_times "$2" | awk '{print $1 "-" $2, $3}' | sort) |
    awk -v least="${3:-380}" '{ n++; if ($3 - $2 >= least * 1000) w++ } END { print w + 0, n + 0 }'
}
expect_equal "$(waits "$work/late/calls.world.5" "$work/late/calls.world.0")" "6 6" "world: rank 0 waits for rank 5"
expect_equal "$(waits "$work/late/calls.world.5" "$work/late/calls.world.7")" "6 6" "world: rank 7 waits for rank 5"
expect_equal "$(waits "$work/late/calls.node 1.1" "$work/late/calls.node 1.3")" "12 12" \
  "node 1: its other ranks wait for rank 5"
expect_equal "$(waits "$work/late/calls.rail 1.1" "$work/late/calls.rail 1.0")" "6 6" "rail 1: rank 1 waits for rank 5"
# Node 0's communicator has no late rank, but its rank 1 shares rail 1 with rank 5: held up there,
# it reaches the all_gather that follows late, and node 0 waits for it, never at the
# reduce_scatter after that. Not at the first all_gather either: a communicator's first
# collective on a stream has no earlier end to count from, so only a late_rank delay counts there
# (5 of 12). Rank 2's rail is on time: rank 2 makes nobody wait.
expect_equal "$(waits "$work/late/calls.node 0.1" "$work/late/calls.node 0.3")" "5 12" \
  "node 0: waits for rank 1 after rail 1's wait, at the all_gather only"
expect_equal "$(exec_times "$work/late/calls.node 0.1" | awk '$3 > 300000 {print $1}' | sort -u)" "" \
  "node 0: rank 1 itself never waits"
expect_equal "$(waits "$work/late/calls.node 0.2" "$work/late/calls.node 0.3")" "0 12" "node 0: rank 2 is on time"

# Node 1 late (every rank on it, 300 us): in the world node 0's ranks wait for node 1's (at least
# the 300 us; not the 600 us node 1 spent late in its own communicator before the first world
# collective: FIDELITY.md P10), which wait for nobody; nobody waits inside node 1.
cp "$fixtures/models/comm-shapes.yaml" "$work/late-node.yaml"
echo "faults: [{fault: late_rank, node: 1, delay_us: 300}]" >>"$work/late-node.yaml"
train late_node "$work/late-node.yaml" --steps 2 --bytes 1M --compute-us 200
expect_equal "$rc" 0 "late node run: exit status"
expect_equal "$(waits "$work/late_node/calls.world.6" "$work/late_node/calls.world.2" 290)" "2 2" \
  "late node: node 0's ranks wait for node 1 in the world"
expect_equal "$(waits "$work/late_node/calls.world.6" "$work/late_node/calls.world.4" 20)" "0 2" \
  "late node: node 1's ranks wait for nobody in the world"
expect_equal "$(waits "$work/late_node/calls.node 1.1" "$work/late_node/calls.node 1.2" 20)" "0 4" \
  "late node: nobody waits inside node 1"

# Usage errors: one line, exit 2, before MPI starts.
expect_exit 2 "unknown communicator" -- "$fake_train" --comms world,pipeline
expect_equal "$(cat "$work/err")" "fake_train: --comms: unknown communicator 'pipeline' (world, rail, node)" \
  "unknown communicator: the line"
expect_exit 2 "odd size" -- "$fake_train" --bytes 1M,6
expect_in "$work/err" "fake_train: --bytes: '6' is not a size in bytes" "odd size: the line"
finish
