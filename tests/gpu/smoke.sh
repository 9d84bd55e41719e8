#!/usr/bin/env bash
# One-GPU smoke test against the REAL CUDA driver, NVML and NCCL: `nccltune topo`, `check`, a
# one-rank `bench` of every collective (small sizes, data check on), `topo --format nccl-xml` fed
# back to NCCL as NCCL_TOPO_FILE, a `tune` of this node, `env` of its profile, the tuner plugin loaded
# by NCCL, and `nccltuned --once`.
# Exits 77 (ctest: skipped) where there is no GPU: no /dev/nvidia0, `nvidia-smi -L` fails, or
# libcuda.so.1 cannot be loaded. NCCL: $NCCLTUNE_NCCL_LIB if set, else libnccl.so.2 from the
# loader's path, else /usr/local/cuda/lib64 (and a few usual places).
# Everything it runs is printed, for the README's verification section.
# usage: tests/gpu/smoke.sh [NCCLTUNE]
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
nccltune=${1:-$here/build/nccltune}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passed=0

pass() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
skip() { echo "SKIPPED: $*"; exit 77; }
section() { echo; echo "== $*"; }

# --- is there a GPU? ---
[ -e /dev/nvidia0 ] || skip "no /dev/nvidia0 (no NVIDIA GPU on this machine)"
command -v nvidia-smi >/dev/null 2>&1 || skip "nvidia-smi not found"
nvidia-smi -L >"$work/smi" 2>&1 || { cat "$work/smi"; skip "nvidia-smi -L failed"; }
grep -q '^GPU ' "$work/smi" || { cat "$work/smi"; skip "nvidia-smi -L lists no GPU"; }

# can_load LIB: whether the dynamic loader can open LIB (a name or a path), as dlopen would.
can_load() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$1" >/dev/null 2>&1
    return
  fi
  case $1 in
    */*) [ -r "$1" ] ;;
    *) ldconfig -p 2>/dev/null | grep -q "[[:space:]]$1 " ||
       { for d in ${LD_LIBRARY_PATH//:/ }; do [ -e "$d/$1" ] && return 0; done; return 1; } ;;
  esac
}

cuda_lib=${NCCLTUNE_CUDA_LIB:-libcuda.so.1}
can_load "$cuda_lib" || skip "$cuda_lib cannot be loaded (no CUDA driver)"

nccl_lib=
if [ -n "${NCCLTUNE_NCCL_LIB:-}" ]; then
  nccl_lib=$NCCLTUNE_NCCL_LIB
elif can_load libnccl.so.2; then
  nccl_lib=libnccl.so.2
else
  for candidate in /usr/local/cuda/lib64/libnccl.so.2 /usr/local/cuda/lib/libnccl.so.2 \
                   /usr/local/cuda/targets/*/lib/libnccl.so.2 /usr/lib/*/libnccl.so.2 /usr/lib64/libnccl.so.2; do
    if [ -e "$candidate" ]; then nccl_lib=$candidate; break; fi
  done
fi

echo "nccltune:  $nccltune"
echo "GPUs:"; sed 's/^/  /' "$work/smi"
nvidia-smi --query-gpu=driver_version,name,pci.bus_id --format=csv,noheader 2>/dev/null | sed 's/^/  driver, name, pci: /'
echo "CUDA lib:  $cuda_lib"
echo "NCCL lib:  ${nccl_lib:-(none found)}"

# run_shown DESCRIPTION -- COMMAND...: runs COMMAND, shows its stdout and stderr, keeps them in
# $work/out and $work/err, and its exit status in $rc.
run_shown() {
  local what=$1
  shift 2
  section "$what: $*"
  timeout -k 10 300 "$@" >"$work/out" 2>"$work/err"
  rc=$?
  cat "$work/out"
  sed 's/^/stderr| /' "$work/err"
  echo "(exit status $rc)"
}
expect_in() {  # expect_in FILE TEXT DESCRIPTION
  if grep -qF -- "$2" "$1"; then pass; else fail "$3: '$2' not found"; fi
}

# --- topo ---
run_shown "topo" -- "$nccltune" topo
if [ "$rc" -eq 0 ]; then pass; else fail "topo: exit $rc"; fi
gpus=$(head -1 "$work/out" | sed -n 's/.*: \([0-9][0-9]*\) GPUs.*/\1/p')
if [ "${gpus:-0}" -ge 1 ]; then pass; else fail "topo: no GPU in the header: $(head -1 "$work/out")"; fi
expect_in "$work/out" "GPU0" "topo matrix"
if grep -q "NVML:.*not loaded" "$work/out" "$work/err"; then fail "topo: NVML did not load"; else pass; fi

run_shown "topo as JSON" -- "$nccltune" topo --format json
if [ "$rc" -eq 0 ]; then pass; else fail "topo --format json: exit $rc"; fi
expect_in "$work/out" '"schema": "nccltune/topology/v1"' "topology JSON schema"
expect_in "$work/out" '"index": 0' "a GPU in the JSON"

# --- check ---
run_shown "check" -- "$nccltune" check
# 0 pass, 1 warnings, 2 failures: all are verdicts about this machine; anything else is an error.
if [ "$rc" -le 2 ]; then pass; else fail "check: exit $rc (not a verdict)"; fi
expect_in "$work/out" " checks, " "check summary"

# --- bench, one rank ---
if [ -z "$nccl_lib" ]; then
  echo
  echo "No libnccl.so.2 found (set NCCLTUNE_NCCL_LIB): bench not run."
  echo "$passed passed, $failures failed"
  [ "$failures" -eq 0 ] && skip "topo and check passed; no NCCL for bench"
  exit 1
fi
if ! command -v mpirun >/dev/null 2>&1; then
  fail "mpirun not found: bench not run"
else
  mpi=(mpirun -np 1 --oversubscribe)
  [ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  lib_flags=(--nccl-lib "$nccl_lib")
  [ -n "${NCCLTUNE_CUDA_LIB:-}" ] && lib_flags+=(--cuda-lib "$NCCLTUNE_CUDA_LIB")
  for op in all_reduce all_gather reduce_scatter broadcast reduce alltoall; do
    sizes=(-b 8 -e 1M -f 4)
    [ "$op" = all_reduce ] && sizes=(-b 8 -e 64M -f 4)
    run_shown "bench $op, one rank" -- "${mpi[@]}" "$nccltune" bench --op "$op" "${sizes[@]}" -n 5 -w 2 -c 1 \
      "${lib_flags[@]}" --init-timeout 120 --size-timeout 60 --json "$work/$op.json"
    if [ "$rc" -eq 0 ]; then pass; else fail "bench $op: exit $rc"; fi
    expect_in "$work/out" "# Avg bus bandwidth" "bench $op footer"
    expect_in "$work/out" "NCCL version" "bench $op NCCL version"
    expect_in "$work/out" "#  Rank  0 Group  0 Pid" "bench $op device line"
    # Every row: #wrong is 0 (out of place column 9, in place column 13 where present).
    rows=$(awk '$1 ~ /^[0-9]+$/ { n++ } END { print n + 0 }' "$work/out")
    bad=$(awk '$1 ~ /^[0-9]+$/ && ($9 != "0" || (NF >= 13 && $13 != "0")) { n++ } END { print n + 0 }' "$work/out")
    if [ "$rows" -ge 1 ] && [ "$bad" -eq 0 ]; then pass; else fail "bench $op: $rows rows, $bad with wrong data"; fi
    expect_in "$work/$op.json" '"schema": "nccltune/bench/v1"' "bench $op JSON"
  done
  # No worker left behind.
  sleep 0.2
  if pgrep -f "nccltune[ -]worker" >/dev/null; then fail "a worker process remains"; pgrep -af "nccltune[ -]worker"; else pass; fi

  # --- this node as an NCCL topology file, loaded by the real NCCL ---
  run_shown "topo as an NCCL topology file" -- "$nccltune" topo --format nccl-xml
  cp "$work/out" "$work/node.xml"
  if [ "$rc" -eq 0 ] && grep -q '<gpu' "$work/node.xml"; then pass; else fail "topo --format nccl-xml: exit $rc or no <gpu>"; fi
  run_shown "bench all_reduce with NCCL_TOPO_FILE" -- env NCCL_TOPO_FILE="$work/node.xml" NCCL_DEBUG=INFO \
    NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH "${mpi[@]}" "$nccltune" bench -b 8 -e 1M -f 4 -n 5 -w 2 -c 1 \
    "${lib_flags[@]}" --init-timeout 120 --size-timeout 60
  if [ "$rc" -eq 0 ]; then pass; else fail "bench with NCCL_TOPO_FILE: exit $rc"; fi
  # src/graph/xml.cc logs this under NCCL_GRAPH once it has read the file.
  expect_in "$work/err" "Loading topology file $work/node.xml" "NCCL read the topology file"
  grep -i "topo" "$work/err" | head -5 | sed 's/^/topology lines| /'

  # --- tune this node, then env, the tuner plugin and nccltuned with its profile ---
  # One rank per GPU, as tune requires.
  ngpus=$(grep -c '^GPU ' "$work/smi")
  run_shown "tune, one rank per GPU, 8 trials" -- mpirun -np "$ngpus" --oversubscribe "$nccltune" tune --out "$work/store" --max-trials 8 \
    --max-bytes 16M --progress log "${lib_flags[@]}" --init-timeout 120 --size-timeout 60
  if [ "$rc" -eq 0 ]; then pass; else fail "tune: exit $rc"; fi
  profile=$(find "$work/store" -name 1n.yaml | head -1)
  if [ -n "$profile" ]; then
    pass
    key=$(basename "$(dirname "$profile")")
    chmod -R go-w "$work"  # env refuses a store others can write to
    run_shown "env for this node's shape" -- "$nccltune" env --strict --config "$work/absent.yaml" --profiles "$work/store" \
      --shape "$key" --nodes 1 --format sh
    if [ "$rc" -eq 0 ]; then pass; else fail "env --strict: exit $rc"; fi
    plugin=$(dirname "$nccltune")/libnccl-tuner-nccltune.so
    if [ -e "$plugin" ]; then
      run_shown "bench all_reduce with the nccltune tuner plugin" -- env NCCL_TUNER_PLUGIN="$plugin" \
        NCCLTUNE_PROFILE="$profile" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING "${mpi[@]}" "$nccltune" bench \
        -b 8 -e 16M -f 4 -n 5 -w 2 -c 1 "${lib_flags[@]}" --init-timeout 120 --size-timeout 60
      if [ "$rc" -eq 0 ]; then pass; else fail "bench with the tuner plugin: exit $rc"; fi
      # The plugin's own lines (NCCL's load errors name the library too, but not this prefix).
      expect_in "$work/err" "TUNER/nccltune:" "the nccltune tuner plugin logged through NCCL"
      grep -i "tuner\|nccltune" "$work/err" | head -8 | sed 's/^/plugin lines| /'
    else
      fail "no tuner plugin at $plugin"
    fi
  else
    fail "tune wrote no 1n.yaml under $work/store"
  fi
  nccltuned=$(dirname "$nccltune")/nccltuned
  if [ -x "$nccltuned" ]; then
    printf 'env:\n  store: %s\ndaemon:\n  nccl_lib: %s\n' "$work/store" "$nccl_lib" >"$work/node-config.yaml"
    run_shown "nccltuned --once (live NVML, verbs, hwloc)" -- "$nccltuned" --once --config "$work/node-config.yaml" \
      --runtime-dir "$work/run" --state-dir "$work/state" --metrics-dir "$work/metrics"
    if [ "$rc" -eq 0 ] && [ -s "$work/run/node.yaml" ]; then pass; else fail "nccltuned --once: exit $rc or no node.yaml"; fi
    [ -s "$work/run/node.yaml" ] && sed 's/^/node.yaml| /' "$work/run/node.yaml" | head -40
    [ -s "$work/run/nccl.env" ] && sed 's/^/nccl.env| /' "$work/run/nccl.env"
  fi
fi

echo
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
