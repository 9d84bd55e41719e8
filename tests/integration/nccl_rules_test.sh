#!/usr/bin/env bash
# Knobs NCCL ignores never look like gains, and never ship (tests/fake-gpu/FIDELITY.md F30, F31,
# F33, F35, F37): on a Socket network without GPUDirect RDMA or multicast whose model gives IB and GDR
# knobs 20% each, `bench` under them matches the defaults (which never run LL128) and `tune` ships none of them;
# NCCL_NVLS_ENABLE=1 fails init as NCCL does and never ships; with NCCL_TUNER_PLUGIN unset, a
# libnccl-tuner.so on the library path is loaded, as NCCL loads it, and says so; check names it and
# tune measures its baselines under it.
# usage: nccl_rules_test.sh NCCLTUNE FAKECUDA FAKENCCL FIXTURES
nccltune=$1 fakecuda=$2 fakenccl=$3 fixtures=$4
source "$(dirname "$0")/lib.sh"
for name in $(compgen -e | grep '^NCCL_'); do unset "$name"; done
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 NCCLTUNE_EMULATE_NODES=2
export NCCLTUNE_CUDA_LIB=$fakecuda NCCLTUNE_NCCL_LIB=$fakenccl
export NCCLTUNE_FAKE_MODEL=$fixtures/models/nccl-rules-socket.yaml
export NCCLTUNE_TEST_TAG="nccl-rules-test-$$-$RANDOM"
on_exit 'kill -9 $(tagged_processes) 2>/dev/null'

# bench NAME [VAR=VALUE...]: all_reduce 1 KiB..1 MiB; the table's rows in $work/NAME.rows, rank
# logs (NCCL_DEBUG=INFO, INIT and TUNING) in $work/NAME.logs, exit status in $rc.
bench() {
  local name=$1
  shift
  mkdir -p "$work/$name.logs"
  env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_DEBUG_FILE="$work/$name.logs/nccl.%h.%p.log" "$@" \
    timeout -k 5 120 mpirun -np 4 "$nccltune" bench -b 1K -e 1M -f 4 -n 5 -w 1 --init-timeout 20 \
    --size-timeout 10 >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  grep -E '^ +[0-9]+ ' "$work/$name.out" >"$work/$name.rows"
}
same_rows() {  # same_rows A B DESCRIPTION
  if [ -s "$work/$1.rows" ] && cmp -s "$work/$1.rows" "$work/$2.rows"; then pass; else
    fail "$3"
    diff "$work/$1.rows" "$work/$2.rows" | head -6
  fi
}

# 1. IB and GDR knobs on a Socket network without GDR: the defaults' times, to the digit.
bench defaults
check "defaults: bench exits 0" [ "$rc" -eq 0 ]
# Without GPUDirect RDMA the GPU reaches the NIC through the CPU, where NCCL does not trust
# LL128 (F37): NCCL's model rates Ring/LL128 cheapest at 256K, yet it is never picked.
check "defaults: LL128 never runs across nodes without GDR" \
  [ "$(cat "$work/defaults.logs"/nccl.* | grep -c 'Bytes -> Algo .* proto LL128')" -eq 0 ]
check "defaults: the TUNING lines are there" grep -qh "AllReduce: 262144 Bytes -> Algo" "$work/defaults.logs"/nccl.*
for setting in NCCL_IB_QPS_PER_CONNECTION=4 NCCL_IB_SPLIT_DATA_ON_QPS=1 NCCL_NET_GDR_LEVEL=SYS NCCL_NET_GDR_READ=1; do
  bench "${setting%%=*}" "$setting"
  same_rows defaults "${setting%%=*}" "$setting on Socket without GDR: the defaults' times (the model says +20%)"
done

# 2. NCCL_NVLS_ENABLE=1 without multicast: init fails, with NCCL's WARN and ncclUnhandledCudaError.
bench nvls-forced NCCL_NVLS_ENABLE=1
check "NCCL_NVLS_ENABLE=1: bench fails by itself (exit $rc)" [ "$rc" -ne 0 -a "$rc" -ne 124 -a "$rc" -ne 137 ]
expect_in "$work/nvls-forced.err" "unhandled cuda error" "NCCL_NVLS_ENABLE=1: the init error is ncclUnhandledCudaError"
check "NCCL_NVLS_ENABLE=1: NCCL's WARN line" grep -qh "NCCL WARN Cuda failure 801 'operation not supported'" \
  "$work/nvls-forced.logs"/nccl.*

# 3. NCCL_TUNER_PLUGIN unset: libnccl-tuner.so from the library path (a test plugin that forces
# Tree/Simple), with NCCL's lines; `none` loads nothing; without the file, NCCL's INFO line.
mkdir -p "$work/lib"
cp "$(dirname "$fakenccl")/libfake_test_tuner.so" "$work/lib/libnccl-tuner.so"
bench default-tuner LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
check "default tuner: bench exits 0" [ "$rc" -eq 0 ]
check "default tuner: NCCL's load lines name the library it found" \
  grep -qh "NCCL INFO Successfully loaded external tuner plugin $work/lib/libnccl-tuner.so" "$work/default-tuner.logs"/nccl.*
check "default tuner: its table" grep -qh "NCCL INFO TUNER/Plugin: Using fake_test (v5)" "$work/default-tuner.logs"/nccl.*
check "default tuner: its choice runs" grep -qh "AllReduce: 1024 Bytes -> Algo TREE proto SIMPLE" \
  "$work/default-tuner.logs"/nccl.*
bench no-tuner LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" NCCL_TUNER_PLUGIN=none
same_rows defaults no-tuner "NCCL_TUNER_PLUGIN=none: nothing loaded, the defaults' times"
check "no default tuner on the path: NCCL's INFO line" \
  grep -qh "NCCL INFO TUNER/Plugin: Could not find: libnccl-tuner.so$" "$work/defaults.logs"/nccl.*

# 4. tune over those knobs ships none of them; NCCL_NVLS_ENABLE=1 is a failed config.
timeout 300 mpirun -np 4 "$nccltune" tune --space "$fixtures/spaces/nccl-rules.yaml" --out "$work/store" \
  --max-bytes 1M --init-timeout 5 --size-timeout 3 --progress log --comms world >"$work/tune.log" 2>&1
status=$?
check "tune exits 0 (got $status)" [ "$status" -eq 0 ] || tail -5 "$work/tune.log"
profile=$(find "$work/store" -name 2n.yaml)
check "tune writes a profile" [ -n "$profile" ]
check "the profile's env sets nothing NCCL ignores here" \
  [ "$(sed -n '/^env:/,/^collectives:/p' "$profile" | grep -c 'NCCL_')" -eq 0 ]
expect_in "$work/tune.log" "NCCL_NVLS_ENABLE=1: init_error" "tune: NCCL_NVLS_ENABLE=1 fails init, a failed config"

# 5. The default tuner of 3 on the library path: check names it; tune says in its header that its
# baselines run under it, NCCL's account of the defaults in the profile names the tuner they ran
# (its "TUNER/Plugin: Using fake_test" line), and the profile notes it.
with_tuner=(env LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
"${with_tuner[@]}" "$nccltune" check --verbose >"$work/check-tuner.out" 2>&1
expect_in "$work/check-tuner.out" "default_tuner     node                 libnccl-tuner.so ($work/lib/libnccl-tuner.so) exports ncclTunerPlugin_v5" \
  "check names the default tuner NCCL would load"
"$nccltune" check --verbose >"$work/check-none.out" 2>&1
expect_in "$work/check-none.out" "default_tuner     node                 none:" "check without a default tuner: none"
"${with_tuner[@]}" timeout 300 mpirun -np 4 "$nccltune" tune --space "$fixtures/spaces/nccl-rules.yaml" \
  --out "$work/store-tuner" --max-bytes 64K --init-timeout 5 --size-timeout 3 --progress log --comms world \
  >"$work/tune-tuner.log" 2>&1
status=$?
check "tune under the default tuner exits 0 (got $status)" [ "$status" -eq 0 ] || tail -5 "$work/tune-tuner.log"
expect_in "$work/tune-tuner.log" \
  "nccltune tune: NCCL's default tuner: libnccl-tuner.so ($work/lib/libnccl-tuner.so) exports ncclTunerPlugin_v5 (NCCL's log: fake_test): baselines run under it" \
  "tune's header names the default tuner"
expect_in "$work/tune.log" "nccltune tune: NCCL's default tuner: none" "tune's header without one: none"
profile=$(find "$work/store-tuner" -name 2n.yaml)
check "tune under the default tuner writes a profile" [ -n "$profile" ]
check "the defaults were measured under it (NCCL's account of them names it)" \
  grep -q "^ *tuner: \"\?fake_test\"\?$" "$profile"
expect_in "$profile" "measured under NCCL's default tuner (libnccl-tuner.so ($work/lib/libnccl-tuner.so)" \
  "the profile notes the default tuner"
check "no worker left" no_tagged_processes_left
finish
