#!/usr/bin/env bash
# The env plugin inside NCCL: `mpirun -np 4 nccltune bench` on the fake GPU stack (2 emulated nodes
# of 2 ranks), whose fake NCCL loads NCCL_ENV_PLUGIN as NCCL 2.28.9 does and reads every NCCL_*
# variable through its getEnv (tests/fake-gpu/README.md, "Env plugins"). No NCCL_* is set but
# NCCL_ENV_PLUGIN=nccltune, and the profile comes from a store as on a cluster (node config, node
# type from node.yaml, <store>/<key>/<nodes>n.yaml). NCCL's INFO lines show the profile's env; a
# variable the job sets keeps the job's value; torchrun's WORLD_SIZE / LOCAL_WORLD_SIZE pick the
# profile of their shape; a profile of another NCCL version, or a store others may write, serves
# nothing and NCCL runs on.
# usage: env_plugin_nccl_test.sh NCCLTUNE FAKECUDA FAKENCCL ENV_PLUGIN FIXTURES
nccltune=$1 fakecuda=$2 fakenccl=$3 plugin=$4 fixtures=$5
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCLTUNE_CUDA_LIB=$fakecuda NCCLTUNE_NCCL_LIB=$fakenccl
export NCCLTUNE_FAKE_MODEL=$fixtures/models/tune-one-knob.yaml
for name in $(compgen -e | grep -e '^NCCL_' -e '^NCCLTUNE_PROFILE' -e '^NCCLTUNE_DISABLE' -e '^SLURM_' \
  -e '^WORLD_SIZE$' -e '^LOCAL_WORLD_SIZE$'); do unset "$name"; done
export NCCLTUNE_TEST_TAG="env-plugin-nccl-test-$$-$RANDOM"
on_exit 'kill -9 $(tagged_processes) 2>/dev/null'
check_that() { if eval "$1"; then pass; else fail "$2"; return 1; fi; }

# The store: the node type of node.yaml, a profile for 2 nodes and one for 1 node, both 2 GPUs
# per node as the emulated nodes have (4 ranks of the one-node job would not fit).
key=h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28
store=$work/store
mkdir -p "$store/$key"
profile() {  # profile NODES NCCL_VERSION ENV: writes <store>/<key>/<NODES>n.yaml
  cat >"$store/$key/$1n.yaml" <<YAML
schema: nccltune/profile/v1
shape: {key: "$key", nodes: $1, gpus_per_node: 2, ranks: $(($1 * 2)), gpu: "NVIDIA H100 80GB HBM3",
        nvswitch: false, nics_per_node: 1, nccl_version: "$2"}
env: $3
per_size: []
YAML
}
profile 2 2.28.9 '{NCCL_NET_GDR_LEVEL: SYS, NCCL_BUFFSIZE: "8388608"}'
profile 1 2.28.9 '{NCCL_BUFFSIZE: "2097152"}'
chmod -R go-w "$store"
printf 'env:\n  store: %s\n' "$store" >"$work/nccltune.yaml"
export NCCLTUNE_CONFIG=$work/nccltune.yaml NCCLTUNE_NODE_STATE=$fixtures/plugin/node.yaml

# bench NAME [VAR=VALUE...] [-- MPIRUN_ARGS...]: all_reduce 8 B..1 KiB at 2 emulated nodes, the
# plugin found by name on the library path; rank logs in $work/NAME.logs, one rank's in NAME.log.
bench() {
  local name=$1 vars=() mpi=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1") && shift; done
  [ "${1:-}" = -- ] && shift && mpi=("$@")
  mkdir -p "$work/$name.logs"
  env NCCLTUNE_EMULATE_NODES=2 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV NCCL_ENV_PLUGIN=nccltune \
    LD_LIBRARY_PATH="$(dirname "$plugin")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    NCCL_DEBUG_FILE="$work/$name.logs/nccl.%h.%p.log" "${vars[@]}" \
    timeout -k 5 300 mpirun -np 4 "${mpi[@]}" "$nccltune" bench -b 8 -e 1K -f 4 -n 2 -w 1 \
    --init-timeout 20 --size-timeout 10 >"$work/$name.out" 2>"$work/$name.err"
  local status=$?
  check_that "[ $status -eq 0 ]" "$name: bench exits 0, NCCL's init went on (got $status)" ||
    { tail -5 "$work/$name.err"; tail -5 "$work/$name.out"; }
  cat "$(ls "$work/$name.logs"/* | head -n 1)" >"$work/$name.log"
}
# said NAME TEXT: whether NCCL's logs or the job's stderr (where a v1 plugin, which has no logger,
# writes) of run NAME hold TEXT; count_said NAME TEXT: in how many lines of one rank's log or of
# the job's stderr (each rank writes one).
said() { grep -qF -- "$2" "$work/$1.logs"/* "$work/$1.err"; }
# set_to NAME VARIABLE: what NCCL's INFO line says the variable was set to on every rank ("" when
# no rank said; "a b" when ranks disagree).
set_to() {
  cat "$work/$1.logs"/* | sed -n "s/.*NCCL INFO $2 set by environment to \\(.*\\)$/\\1/p" | sort -u | tr '\n' ' ' | sed 's/ $//'
}

bench served
check_that "[ \"\$(set_to served NCCL_NET_GDR_LEVEL)\" = SYS ]" \
  "the profile's NCCL_NET_GDR_LEVEL reaches NCCL on every rank (got '$(set_to served NCCL_NET_GDR_LEVEL)')" ||
  grep -h 'ENV' "$work/served.logs"/* | head -8
check_that "[ \"\$(set_to served NCCL_BUFFSIZE)\" = 8388608 ]" "the profile's NCCL_BUFFSIZE reaches NCCL"
# NCCL 2.28.9 looks up the v1 table only; the plugin says what it serves on stderr under NCCL_DEBUG=INFO.
check_that "grep -q 'ENV/Plugin: Using nccltune (v1)' '$work/served.log'" "NCCL 2.28.9's load line names the v1 table"
check_that "said served 'job shape from Open MPI'" "the shape comes from mpirun's variables"

bench own NCCL_BUFFSIZE=4194304
check_that "[ \"\$(set_to own NCCL_BUFFSIZE)\" = 4194304 ]" "the job's own NCCL_BUFFSIZE wins (got '$(set_to own NCCL_BUFFSIZE)')"
check_that "[ \"\$(set_to own NCCL_NET_GDR_LEVEL)\" = SYS ]" "the profile still sets what the job did not"

# torchrun's variables (here handed to every rank by mpirun) come before Open MPI's. As torchrun
# sets them for this job (4 ranks, 2 per node): the two-node profile.
bench torchrun -- -x WORLD_SIZE=4 -x LOCAL_WORLD_SIZE=2
check_that "[ \"\$(set_to torchrun NCCL_BUFFSIZE)\" = 8388608 ]" \
  "WORLD_SIZE=4 LOCAL_WORLD_SIZE=2: the two-node profile (got '$(set_to torchrun NCCL_BUFFSIZE)')"
check_that "said torchrun 'job shape from torchrun'" "the plugin says the shape came from torchrun"
# Another shape there (2 ranks, 2 per node): the one-node profile, whatever mpirun says.
bench torchrun_one -- -x WORLD_SIZE=2 -x LOCAL_WORLD_SIZE=2
check_that "[ \"\$(set_to torchrun_one NCCL_BUFFSIZE)\" = 2097152 ]" \
  "WORLD_SIZE=2 LOCAL_WORLD_SIZE=2: the one-node profile (got '$(set_to torchrun_one NCCL_BUFFSIZE)')"

bench off NCCLTUNE_DISABLE=1
check_that "[ -z \"\$(set_to off NCCL_NET_GDR_LEVEL)\" ]" "NCCLTUNE_DISABLE=1: nothing served"

profile 2 2.21.5 '{NCCL_NET_GDR_LEVEL: SYS, NCCL_BUFFSIZE: "8388608"}'
chmod go-w "$store/$key/2n.yaml"
bench other_version
check_that "[ -z \"\$(set_to other_version NCCL_NET_GDR_LEVEL)\" ]" "a profile tuned with NCCL 2.21: nothing served"
check_that "[ \"\$(grep -c 'tuned for 2.21, this job loads 2.28' '$work/other_version.err')\" = 4 ]" \
  "one line per rank (on stderr: v1 has no logger) says why" || cat "$work/other_version.err"

profile 2 2.28.9 '{NCCL_NET_GDR_LEVEL: SYS}'
chmod 777 "$store"
bench hostile_store
check_that "[ -z \"\$(set_to hostile_store NCCL_NET_GDR_LEVEL)\" ]" "a store anyone may write: nothing served"
check_that "said hostile_store 'nccltune env plugin: $store'" "one warning names the store" || cat "$work/hostile_store.err"
chmod 755 "$store"

# An NCCL that looks up the v2 table (2.30.7 on, src/plugin/env.cc; the model's nccl_version 23007) hands the
# plugin its logger: the plugin's lines are NCCL's INFO and WARN lines.
sed 's/^schema: .*/&\nnccl_version: 23007/' "$NCCLTUNE_FAKE_MODEL" >"$work/model-v2.yaml"
profile 2 2.30.7 '{NCCL_NET_GDR_LEVEL: SYS}'
chmod go-w "$store/$key/2n.yaml"
bench v2 NCCLTUNE_FAKE_MODEL="$work/model-v2.yaml"
check_that "[ \"\$(set_to v2 NCCL_NET_GDR_LEVEL)\" = SYS ]" "v2: the profile's env reaches NCCL"
check_that "grep -q 'ENV/Plugin: Using nccltune (v2)' '$work/v2.log'" "v2: NCCL's load line names the v2 table"
check_that "grep -q 'NCCL INFO ENV/nccltune: serving 1 variable' '$work/v2.log'" "v2: the plugin's line is NCCL's INFO line"
finish
