#!/usr/bin/env bash
# The tuner plugin inside NCCL: `mpirun -np 4 nccltune bench` on the fake GPU stack (2 emulated
# nodes of 2 ranks), whose fake NCCL loads NCCL_TUNER_PLUGIN as NCCL 2.28.9 does and runs the pair
# of lowest cost after getCollInfo (tests/fake-gpu/README.md, "Tuner plugins"). With
# libnccl-tuner-nccltune.so and a profile whose per_size picks Ring/Simple up to 4 KiB, where the
# model's own choice is Tree/LL, NCCL's TUNING lines name Ring/Simple at those sizes, the model's
# pairs above them, and the 8-byte op takes Ring/Simple's longer time; without the plugin (or with
# NCCL_TUNER_PLUGIN=none) they name Tree/LL. The plugin is found by path and by name
# (NCCL_TUNER_PLUGIN=nccltune -> libnccl-tuner-nccltune.so on the library path), and through its v6
# table by an NCCL 2.30.3+ and its v7 table by an NCCL 2.32.6+.
# usage: plugin_nccl_test.sh NCCLTUNE FAKECUDA FAKENCCL TUNER_PLUGIN FIXTURES
nccltune=$1 fakecuda=$2 fakenccl=$3 plugin=$4 fixtures=$5
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCLTUNE_CUDA_LIB=$fakecuda NCCLTUNE_NCCL_LIB=$fakenccl
# Tree/LL up to 132624 bytes, Ring/LL128 above (its default table).
export NCCLTUNE_FAKE_MODEL=$fixtures/models/tune-one-knob.yaml
for name in $(compgen -e | grep -e '^NCCL_' -e '^NCCLTUNE_PROFILE'); do unset "$name"; done
export NCCLTUNE_TEST_TAG="plugin-nccl-test-$$-$RANDOM"
on_exit 'kill -9 $(tagged_processes) 2>/dev/null'
check_that() { if eval "$1"; then pass; else fail "$2"; return 1; fi; }

# The profile: 2 nodes of 2 GPUs, as the communicator the plugin sees.
cat >"$work/profile.yaml" <<'YAML'
schema: nccltune/profile/v1
shape: {key: "h100-80gb-hbm3.2gpu.ib.nccl2.28", nodes: 2, gpus_per_node: 2, ranks: 4,
        gpu: "NVIDIA H100 80GB HBM3", nvswitch: false, nics_per_node: 1, nccl_version: "2.28.9"}
env: {}
per_size:
  - {min_bytes: 0, max_bytes: 4096, algo: Ring, proto: Simple, channels: 0}
YAML

# bench NAME [VAR=VALUE...]: all_reduce 8 B..1 MiB at 2 emulated nodes; rank logs in $work/NAME.logs,
# the TUNING choices as "bytes ALGO PROTO" in $work/NAME.choices, "bytes time_us" in $work/NAME.times.
bench() {
  local name=$1
  shift
  mkdir -p "$work/$name.logs"
  env NCCLTUNE_EMULATE_NODES=2 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING \
    NCCL_DEBUG_FILE="$work/$name.logs/nccl.%h.%p.log" "$@" \
    timeout -k 5 300 mpirun -np 4 "$nccltune" bench -b 8 -e 1M -f 4 -n 2 -w 1 \
    --init-timeout 20 --size-timeout 10 >"$work/$name.out" 2>"$work/$name.err"
  local status=$?
  check_that "[ $status -eq 0 ]" "$name: bench exits 0 (got $status)" || { tail -5 "$work/$name.err"; tail -5 "$work/$name.out"; }
  cat "$work/$name.logs"/* 2>/dev/null |
    sed -n 's/.*NCCL INFO AllReduce: \([0-9]*\) Bytes -> Algo \([A-Z_]*\) proto \([A-Z0-9]*\) .*/\1 \2 \3/p' |
    sort -u -n >"$work/$name.choices"
  awk '$1 ~ /^[0-9]+$/ && NF >= 6 { print $1, $6 }' "$work/$name.out" >"$work/$name.times"
}
# choice NAME BYTES: the distinct "ALGO PROTO" logged at that size, one line each.
choice() { awk -v b="$2" '$1 == b { print $2, $3 }' "$work/$1.choices" | sort -u; }
time_at() { awk -v b="$2" '$1 == b { print $2; exit }' "$work/$1.times"; }

bench own
bench none NCCL_TUNER_PLUGIN=none
bench by_path NCCL_TUNER_PLUGIN="$plugin" NCCLTUNE_PROFILE="$work/profile.yaml"
bench by_name NCCL_TUNER_PLUGIN=nccltune LD_LIBRARY_PATH="$(dirname "$plugin")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  NCCLTUNE_PROFILE="$work/profile.yaml"

# NCCL 2.30.3 and newer look up the v6 table first (the model's nccl_version says which NCCL this is).
sed 's/^schema: .*/&\nnccl_version: 23003/' "$NCCLTUNE_FAKE_MODEL" >"$work/model-2.30.yaml"
bench v6 NCCL_TUNER_PLUGIN=nccltune LD_LIBRARY_PATH="$(dirname "$plugin")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  NCCLTUNE_PROFILE="$work/profile.yaml" NCCLTUNE_FAKE_MODEL="$work/model-2.30.yaml"
check_that "grep -qh 'TUNER/Plugin: Using nccltune (v6)' '$work/v6.logs'/*" "NCCL 2.30.3+ loads the plugin's v6 table"
check_that "[ \"\$(choice v6 8)\" = 'RING SIMPLE' ]" "v6: 8 B runs the profile's Ring/Simple (got '$(choice v6 8)')"
# NCCL 2.32.6 and newer look up the v7 table before v6.
sed 's/^schema: .*/&\nnccl_version: 23206/' "$NCCLTUNE_FAKE_MODEL" >"$work/model-2.32.yaml"
bench v7 NCCL_TUNER_PLUGIN=nccltune LD_LIBRARY_PATH="$(dirname "$plugin")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  NCCLTUNE_PROFILE="$work/profile.yaml" NCCLTUNE_FAKE_MODEL="$work/model-2.32.yaml"
check_that "grep -qh 'TUNER/Plugin: Using nccltune (v7)' '$work/v7.logs'/*" "NCCL 2.32.6+ loads the plugin's v7 table"
check_that "[ \"\$(choice v7 8)\" = 'RING SIMPLE' ]" "v7: 8 B runs the profile's Ring/Simple (got '$(choice v7 8)')"

for size in 8 32 128 512 2048; do
  for name in own none; do
    check_that "[ \"\$(choice $name $size)\" = 'TREE LL' ]" "$name: $size B runs the model's Tree/LL (got '$(choice $name $size)')"
  done
  for name in by_path by_name; do
    check_that "[ \"\$(choice $name $size)\" = 'RING SIMPLE' ]" \
      "$name: $size B runs the profile's Ring/Simple (got '$(choice $name $size)')"
  done
done
# Above the profile's range the plugin leaves NCCL's choice.
for name in by_path by_name; do
  check_that "[ \"\$(choice $name 8192)\" = 'TREE LL' ]" "$name: 8192 B keeps the model's Tree/LL (got '$(choice $name 8192)')"
  check_that "[ \"\$(choice $name 524288)\" = 'RING LL128' ]" \
    "$name: 512 KiB keeps the model's Ring/LL128 (got '$(choice $name 524288)')"
  check_that "grep -qh 'TUNER/Plugin: Using nccltune (v5)' '$work/$name.logs'/*" "$name: NCCL's load line names the plugin's v5 table"
  check_that "grep -qh 'TUNER/nccltune: using $work/profile.yaml (NCCLTUNE_PROFILE) for 2 nodes, 4 ranks' '$work/$name.logs'/*" \
    "$name: the plugin says it uses the profile for 2 nodes" || grep -h 'TUNER' "$work/$name.logs"/* | head -5
done
check_that "! grep -qh 'TUNER/nccltune\|TUNER/Plugin: Using' '$work/own.logs'/* '$work/none.logs'/*" \
  "without the plugin nothing of it is logged"
# Unset, NCCL looks for libnccl-tuner.so and says it found none (FIDELITY.md F35); `none` looks for nothing.
check_that "grep -qh 'TUNER/Plugin: Could not find: libnccl-tuner.so' '$work/own.logs'/*" \
  "NCCL_TUNER_PLUGIN unset: NCCL's line for the default library it did not find"
check_that "! grep -qh 'TUNER/' '$work/none.logs'/*" "NCCL_TUNER_PLUGIN=none: no TUNER line at all"
# Ring/Simple costs 40 us of latency in the model, Tree/LL 7: the plugin's choice is what is timed.
own8=$(time_at own 8) path8=$(time_at by_path 8)
check_that "awk -v a='$own8' -v b='$path8' 'BEGIN { exit !(a > 0 && b > 2 * a) }'" \
  "the 8-byte op takes Ring/Simple's time under the plugin ($path8 us vs $own8 us)"

# The demo's layout (run.sh: 2 emulated nodes of 2 ranks, the demo's model and its 2-GPU nodes): a
# profile whose all_gather per_size picks Ring/LL128 from 128 KiB is served, and at 512 KiB NCCL runs
# Ring/LL128, where its own choice is Ring/LL, at about twice the busbw: the gain the demo shows.
cat >"$work/demo-profile.yaml" <<'YAML'
schema: nccltune/profile/v2
shape: {key: "h100-80gb-hbm3.2gpu.nvswitch.2xib400.pix.nccl2.28", nodes: 2, gpus_per_node: 2, ranks: 4,
        gpu: "NVIDIA H100 80GB HBM3", nvswitch: true, nics_per_node: 2, nccl_version: "2.28.9"}
env: {}
collectives:
  all_gather:
    per_size:
      - {min_bytes: 131072, max_bytes: 8388608, algo: "Ring", proto: "LL128", channels: 0}
YAML
demo_bench() {  # demo_bench NAME [VAR=VALUE...]: all_gather 128K..2M; busbw "bytes GB/s" in $work/NAME.busbw
  local name=$1
  shift
  mkdir -p "$work/$name.logs"
  env NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_FAKE_MODEL="$repo/configs/demo/dgx-h100-model.yaml" NCCL_DEBUG=INFO \
    NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_DEBUG_FILE="$work/$name.logs/nccl.%h.%p.log" "$@" \
    timeout -k 5 300 mpirun -np 4 "$nccltune" bench --op all_gather -b 128K -e 2M -f 4 -n 5 -w 1 \
    --init-timeout 20 --size-timeout 10 >"$work/$name.out" 2>"$work/$name.err"
  check_that "[ $? -eq 0 ]" "$name: bench exits 0" || tail -5 "$work/$name.err"
  cat "$work/$name.logs"/* 2>/dev/null |
    sed -n 's/.*NCCL INFO AllGather: \([0-9]*\) Bytes -> Algo \([A-Z_]*\) proto \([A-Z0-9]*\) .*/\1 \2 \3/p' |
    sort -u -n >"$work/$name.choices"
  awk '$1 ~ /^[0-9]+$/ && NF >= 8 { print $1, $8 }' "$work/$name.out" >"$work/$name.busbw"
}
repo=$(cd "$(dirname "$0")/../.." && pwd)
demo_bench demo_own
demo_bench demo_plugin NCCL_TUNER_PLUGIN="$plugin" NCCLTUNE_PROFILE="$work/demo-profile.yaml"
check_that "[ \"\$(choice demo_own 524288)\" = 'RING LL' ]" "demo: NCCL's own all_gather at 512K is Ring/LL (got '$(choice demo_own 524288)')"
check_that "[ \"\$(choice demo_plugin 524288)\" = 'RING LL128' ]" \
  "demo: with the plugin all_gather at 512K runs the profile's Ring/LL128 (got '$(choice demo_plugin 524288)')"
check_that "! grep -qh 'not using' '$work/demo_plugin.logs'/*" "demo: the plugin serves the 2-ranks-per-node communicator"
own512=$(awk '$1 == 524288 { print $2; exit }' "$work/demo_own.busbw") plugin512=$(awk '$1 == 524288 { print $2; exit }' "$work/demo_plugin.busbw")
check_that "awk -v a='$own512' -v b='$plugin512' 'BEGIN { exit !(a > 0 && b > 1.5 * a) }'" \
  "demo: all_gather at 512K gains at least 1.5x with the plugin ($plugin512 vs $own512 GB/s)"
finish
