#!/usr/bin/env bash
# Every communicator a job makes: a default `mpirun -np 8 nccltune tune` on 2 emulated nodes of 4
# ranks measures the world, the rails and the nodes in every trial, on a model whose three shapes
# want different things (fixtures/models/comm-shapes.yaml). The env ships the transport knob that
# helps all three and withholds the one that helps the world and slows the rails, saying where;
# then `bench` with the tuner plugin, the profile and its env runs each shape's own choice at 1 MiB:
# the rail's (2 ranks on 2 nodes) at 1.5x+ NCCL's own, the world's on the world.
# usage: comm_shapes_test.sh NCCLTUNE FAKECUDA FAKENCCL TUNER_PLUGIN FIXTURES
nccltune=$1 fakecuda=$2 fakenccl=$3 plugin=$4 fixtures=$5
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_CUDA_LIB=$fakecuda NCCLTUNE_NCCL_LIB=$fakenccl
export NCCLTUNE_FAKE_MODEL=$fixtures/models/comm-shapes.yaml
for name in $(compgen -e | grep -e '^NCCL_' -e '^NCCLTUNE_PROFILE'); do unset "$name"; done
export NCCLTUNE_TEST_TAG="comm-shapes-test-$$-$RANDOM"
on_exit 'kill -9 $(tagged_processes) 2>/dev/null'
check_that() { if eval "$1"; then pass; else fail "$2"; return 1; fi; }
show_log() { sed 's/^/  | /' "$1" | tail -n 20; }

# 1. The tune: no --comms, so the three shapes.
timeout 600 mpirun -np 8 "$nccltune" tune --space "$fixtures/spaces/comm-shapes.yaml" --out "$work/store" \
  --ops all_reduce --guard none --min-bytes 64K --max-bytes 1M --init-timeout 10 --size-timeout 5 --progress log >"$work/log" 2>&1
status=$?
check_that "[ $status -eq 0 ]" "tune exits 0 (got $status)" || show_log "$work/log"
check_that "grep -q '^nccltune tune: communicators: world (2 nodes x 4), rail (2 nodes x 1), node (1 node x 4)' '$work/log'" \
  "tune says which communicators every trial measures" || show_log "$work/log"
profile=$(find "$work/store" -name 2n.yaml | head -1)
check_that "[ -n '$profile' ]" "tune writes <store>/<key>/2n.yaml" || show_log "$work/log"
check_that "grep -q '^schema: nccltune/profile/v3' '$profile'" "the profile is v3, a section per shape"
env_block=$(sed -n '/^env:/,/^[a-z]/p' "$profile")
check_that "grep -q 'NCCL_NET_GDR_LEVEL: \"\\?SYS' <<<'$env_block'" "env keeps GDR=SYS, which helps every shape" ||
  echo "$env_block"
check_that "! grep -q NCCL_IB_QPS_PER_CONNECTION <<<'$env_block'" "env does not ship QPS=4, which slows the rails" ||
  echo "$env_block"
check_that "grep -q 'withheld NCCL_IB_QPS_PER_CONNECTION=4: rail (2 nodes x 1): all_reduce -' '$work/log'" \
  "the summary says QPS=4 is withheld and where it lost" || grep withheld "$work/log"
# No shape is slower under the shipped env at any measured size (beyond the 2% tolerance).
worst=$(sed -n 's/^ *worst_size_ratio: //p' "$profile" | sort -g | head -1)
check_that "[ \$(grep -c 'worst_size_ratio' '$profile') -eq 3 ] && awk -v w='$worst' 'BEGIN { exit !(w >= 0.98) }'" \
  "every shape's worst size under env is within the tolerance (worst $worst)"
for role in world rail node; do
  check_that "grep -q 'role: $role' '$profile'" "the profile has the $role section"
done

# 2. bench NAME RANKS [VAR=VALUE...]: all_reduce at 1 MiB; "ALGO PROTO" of NCCL's TUNING line at
# 1 MiB in $work/NAME.choice, busbw in $work/NAME.busbw.
bench() {
  local name=$1 ranks=$2
  shift 2
  mkdir -p "$work/$name.logs"
  env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_DEBUG_FILE="$work/$name.logs/nccl.%h.%p.log" "$@" \
    timeout -k 5 300 mpirun -np "$ranks" "$nccltune" bench -b 1M -e 1M -n 5 -w 1 --init-timeout 20 \
    --size-timeout 10 >"$work/$name.out" 2>"$work/$name.err"
  check_that "[ $? -eq 0 ]" "$name: bench exits 0" || tail -5 "$work/$name.err"
  cat "$work/$name.logs"/* 2>/dev/null |
    sed -n 's/.*NCCL INFO AllReduce: 1048576 Bytes -> Algo \([A-Z_]*\) proto \([A-Z0-9]*\) .*/\1 \2/p' | sort -u \
    >"$work/$name.choice"
  awk '$1 == 1048576 && NF >= 8 { print $8; exit }' "$work/$name.out" >"$work/$name.busbw"
}
served=(NCCL_TUNER_PLUGIN="$plugin" NCCLTUNE_PROFILE="$profile" NCCL_NET_GDR_LEVEL=SYS)
bench rail_own 2
bench rail_served 2 "${served[@]}"
check_that "[ \"\$(cat '$work/rail_served.choice')\" = 'RING LL128' ]" \
  "rail: with the plugin all_reduce at 1M runs the rail's Ring/LL128 (got '$(cat "$work/rail_served.choice")', NCCL's own '$(cat "$work/rail_own.choice")')"
own=$(cat "$work/rail_own.busbw") tuned=$(cat "$work/rail_served.busbw")
check_that "awk -v a='$own' -v b='$tuned' 'BEGIN { exit !(a > 0 && b >= 1.5 * a) }'" \
  "rail: all_reduce at 1M gains at least 1.5x with the plugin and env ($tuned vs $own GB/s)"
bench world_served 8 "${served[@]}"
check_that "[ \"\$(cat '$work/world_served.choice')\" = 'TREE LL128' ]" \
  "world: with the plugin all_reduce at 1M runs the world's Tree/LL128 (got '$(cat "$work/world_served.choice")')"

# 3. Each communicator's account of what NCCL did stays its own: a default three-shape tune of the
# demo's model (NVSwitch nodes with NVLS) on its node snapshot records the world's NVLS as the
# world's NCCL reported it, the rail's (one GPU per node, no NVLS there) apart, and warns of no
# fabric manager.
repo=$(cd "$(dirname "$0")/../.." && pwd)
NCCLTUNE_FAKE_MODEL="$repo/configs/demo/dgx-h100-model.yaml" timeout 300 mpirun -np 4 "$nccltune" tune \
  --space "$fixtures/spaces/comm-shapes.yaml" --out "$work/demo-store" --from "$repo/configs/demo/vm-h100-2gpu-node" \
  --ops all_reduce --guard none --min-bytes 64K --max-bytes 1M --init-timeout 10 --size-timeout 5 --progress log \
  >"$work/demo.log" 2>&1
status=$?
check_that "[ $status -eq 0 ]" "demo tune exits 0 (got $status)" || show_log "$work/demo.log"
check_that "! grep -q 'fabric manager' '$work/demo.log'" "a three-shape tune with NVLS warns of no fabric manager" ||
  grep -n 'NCCL said\|nvls' "$work/demo.log"
check_that "grep -q '^NCCL said (defaults): .*NVLS 16 channels' '$work/demo.log'" \
  "the world's account says NVLS 16 channels, as the world's NCCL did" || grep -n 'NCCL said' "$work/demo.log"
check_that "grep -q '^NCCL said (rail): .*NVLS unavailable' '$work/demo.log'" "the rail's account is its own"
demo_profile=$(find "$work/demo-store" -name 2n.yaml | head -1)
check_that "sed -n '/^  nccl_observed:/,/^    comms:/p' '$demo_profile' | grep -q 'nvls_available: true'" \
  "the profile records the world's nvls_available: true (first), the rail's under comms"
finish
