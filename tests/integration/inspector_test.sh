#!/usr/bin/env bash
# NVIDIA's own NCCL Inspector (the profiler plugin of NCCL's tree: plugins/profiler/inspector since
# 2.29; 2.28's ext-profiler/inspector is found and skipped, below) built from an NCCL source tree
# and run inside the fake NCCL:
# `mpirun -np 8 fake_train` on 2 emulated nodes under it, then `nccltune observe` on what it wrote.
# Inspector links libcudart and dlopens libcuda.so: it is built against the fake's stand-in
# libcudart.so (cudaGetDevice, cudaGetErrorString answered by libfakecuda.so) and finds
# libfakecuda.so as libcuda.so, so it runs with no GPU; it needs CUDA's headers (CUDA_HOME,
# default /usr/local/cuda).
#   JSON mode: records of the world, rail and node communicators, GPU-timed (kernel_gpu), with the
#   model's bus bandwidth (100 GB/s, less its 10 us latency at 16 MiB); observe reads every one.
#   A late rank (late_rank, rank 5, 400 us): in every world collective the others' exec times are
#   400 us longer than its own.
#   Prometheus mode (NCCL_INSPECTOR_PROM_DUMP=1): one textfile per GPU with the same bandwidth.
#   Inspector writes those at least 30 s apart and deletes them when the job ends, so this run
#   holds its communicators 34 s and copies the files while they exist (about a minute in all).
# No NCCL source comes with nccltune, and CI has none: without NCCLTUNE_NCCL_SRC, or without
# CUDA's headers, the test says so and exits 77 (skipped). To run it:
#   git -C NCCL_CLONE archive v2.30.7-1 plugins/profiler/inspector | tar -x -C /tmp/nccl-src
#   NCCLTUNE_NCCL_SRC=/tmp/nccl-src ctest -R inspector
# NCCLTUNE_INSPECTOR_KEEP=DIR keeps the outputs there (tests/fixtures/inspector/real-*/ came so).
#   The tuned profile: a default three-shape tune of 2 nodes x 4 (fixtures/models/comm-shapes.yaml,
#   whose world, rails and nodes want different choices), then fake_train in Prometheus mode with
#   the tuner plugin and the profile's env: observe --profile holds every world, rail and node row
#   "as tuned" (what ran is the profile's choice, busbw within the tolerance); without the plugin,
#   the rows whose choice is not NCCL's own are "not served".
# usage: inspector_test.sh FAKE_TRAIN FAKECUDA FAKENCCL FAKECUDART_DIR NCCLTUNE TUNER_PLUGIN FIXTURES
fake_train=$1 fakecuda=$2 fakenccl=$3 cudart_dir=$4 nccltune=$5 tuner_plugin=$6 fixtures=$7
source "$(dirname "$0")/lib.sh"
src=${NCCLTUNE_NCCL_SRC:-}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [ -z "$src" ]; then
  echo "SKIP: NCCLTUNE_NCCL_SRC is not set (an NCCL source tree with plugins/profiler/inspector," \
    "or ext-profiler/inspector before 2.29)"
  exit 77
fi
if [ ! -f "$cuda_home/include/cuda.h" ] || [ ! -f "$cuda_home/include/cuda_runtime.h" ]; then
  echo "SKIP: no CUDA headers in $cuda_home/include (set CUDA_HOME): Inspector's build needs cuda.h and cuda_runtime.h"
  exit 77
fi
skip_under_sanitizers "Inspector is built without the sanitizer runtimes"
inspector=""
for dir in "$src/plugins/profiler/inspector" "$src/ext-profiler/inspector"; do
  [ -f "$dir/Makefile" ] && inspector=$dir && break
done
if [ -z "$inspector" ]; then
  fail "NCCLTUNE_NCCL_SRC=$src has no plugins/profiler/inspector/Makefile nor ext-profiler/inspector/Makefile"
  finish
  exit 1
fi
# 2.28's Inspector writes no comm_name, and its stopThread sets a flag and sleeps 1 ms without
# joining its dump thread: NCCL closes the library after the last finalize, and a rank whose dump
# thread was asleep then crashes (SIGSEGV in unmapped code; 2.30.7 joins it).
if [ "$inspector" = "$src/ext-profiler/inspector" ]; then
  echo "SKIP: $inspector is NCCL 2.28's Inspector: no comm_name in its records, and its dump thread" \
    "outlives the library at teardown (ranks crash); this test needs plugins/profiler/inspector (2.29 and later)"
  exit 77
fi
for name in $(compgen -e | grep '^NCCL_'); do unset "$name"; done
unset NCCLTUNE_EMULATE_NODES NCCLTUNE_FAKE_MODEL SLURM_JOBID
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# Inspector's own Makefile, on a copy (it writes obj/ and version.cc where it stands), against
# the stand-in libcudart.so.
cp -r "$inspector" "$work/inspector"
if ! make -C "$work/inspector" -j2 CUDA_HOME="$cuda_home" CUDA_LIB="$cudart_dir" >"$work/build.log" 2>&1; then
  fail "Inspector does not build"
  sed 's/^/  | /' "$work/build.log" | tail -20
  finish
  exit 1
fi
plugin=$work/inspector/libnccl-profiler-inspector.so
mkdir -p "$work/lib"
ln -s "$fakecuda" "$work/lib/libcuda.so"
ln -s "$fakecuda" "$work/lib/libcuda.so.1"
export LD_LIBRARY_PATH=$cudart_dir:$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# One pair, no noise: Inspector's busbw is 16 MiB over (10 us + 16 MiB at 100 GB/s).
cat >"$work/model.yaml" <<'EOF'
schema: nccltune/fake-model/v1
devices: [{name: "NVIDIA H100 80GB HBM3", pci: "0000:18:00.0", sm: 90}]
algos:
  Ring: {Simple: {lat_us: 10, busbw_gbps: 100}}
EOF
cp "$work/model.yaml" "$work/late.yaml"
echo "faults: [{fault: late_rank, rank: 5, delay_us: 400}]" >>"$work/late.yaml"

# inspect NAME MODEL HOLD_MS [VAR=VALUE...]: 8 ranks on 2 emulated nodes, $steps steps (2 unless
# set) of 16 MiB, Inspector writing to $work/NAME.
inspect() {
  local name=$1 model=$2 hold=$3
  shift 3
  mkdir -p "$work/$name"
  env "$@" NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_FAKE_MODEL="$model" NCCLTUNE_FAKE_TIMEOUT_S=60 \
    NCCL_PROFILER_PLUGIN="$plugin" NCCL_INSPECTOR_ENABLE=1 NCCL_INSPECTOR_DUMP_DIR="$work/$name" \
    timeout -k 5 120 mpirun -x LD_LIBRARY_PATH --oversubscribe -np 8 "$fake_train" --steps "${steps:-2}" \
    --bytes "${bytes:-16M}" \
    --compute-us 200 --hold-ms "$hold" --nccl-lib "$fakenccl" --cuda-lib "$fakecuda" \
    >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
}

# records DIR: "comm|rank|n_ranks|nnodes|coll|sn|exec_us|timing|busbw" per JSON record.
records() {
  cat "$1"/*.log 2>/dev/null | awk '
    function field(key,   at, rest) {
      at = index($0, "\"" key "\":")
      if (at == 0) return ""
      rest = substr($0, at + length(key) + 3)
      if (substr(rest, 1, 1) == "\"") { rest = substr(rest, 2); return substr(rest, 1, index(rest, "\"") - 1) }
      match(rest, /^[-0-9.]+/)
      return substr(rest, 1, RLENGTH)
    }
    { print field("comm_name") "|" field("rank") "|" field("n_ranks") "|" field("nnodes") "|" field("coll") "|" \
            field("coll_sn") "|" field("coll_exec_time_us") "|" field("coll_timing_source") "|" field("coll_busbw_gbs") }'
}

# --- JSON ---------------------------------------------------------------------------------
inspect json "$work/model.yaml" 500 NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=100000
expect_equal "$rc" 0 "json run: exit status"
records "$work/json" >"$work/json.records"
# Per rank: 2 world all_reduce, 2 rail all_reduce, 2 node all_gather and 2 reduce_scatter.
expect_equal "$(wc -l <"$work/json.records")" 64 "json: 64 records"
expect_equal "$(cut -d'|' -f1,3,4 "$work/json.records" | sort | uniq -c | awk '{$1=$1; print}' | tr '\n' ';')" \
  "16 node 0|4|1;16 node 1|4|1;4 rail 0|2|2;4 rail 1|2|2;4 rail 2|2|2;4 rail 3|2|2;16 world|8|2;" \
  "json: the world, rail and node communicators by name, ranks and nodes"
expect_equal "$(cut -d'|' -f8 "$work/json.records" | sort -u)" "kernel_gpu" "json: timed on the GPU timer"
# 16 MiB in 10 us + the bandwidth term: 93 to 97 GB/s of busbw (Inspector's whole microseconds).
expect_equal "$(awk -F'|' '$9 < 92.5 || $9 > 97.5' "$work/json.records")" "" "json: the model's busbw"
expect_exit 1 "observe json" -- "$nccltune" observe "$work/json"
expect_in "$work/out" "64 records of 8 ranks" "observe: reads every record"
for comm in world "rail 0" "rail 3" "node 0" "node 1"; do
  expect_in "$work/out" " $comm: " "observe: lists $comm"
done
expect_in "$work/out" "no straggler" "observe: no straggler without a fault"

# --- a late rank -------------------------------------------------------------------------
# 12 steps: observe names a process last in at least 10 of its collectives.
steps=12 inspect late "$work/late.yaml" 500 NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=100000
expect_equal "$rc" 0 "late run: exit status"
records "$work/late" >"$work/late.records"
# World: rank 5 runs the op alone (about 303 us); every other rank waits its 400 us more.
late_world=$(awk -F'|' '$1 == "world" { if ($2 == 5) own[$6] = $7; else other[$6, $2] = $7 }
  END { for (k in other) { split(k, sn, SUBSEP); if (other[k] - own[sn[1]] < 390) bad++; n++ } print n + 0, bad + 0 }' \
  "$work/late.records")
expect_equal "$late_world" "84 0" "late: in the world every other rank waits 400 us for rank 5"
expect_equal "$(awk -F'|' '$1 == "world" && $2 == 5 && $7 > 320' "$work/late.records")" "" \
  "late: rank 5 itself does not wait"
"$nccltune" observe "$work/late" >"$work/late.observe" 2>&1
expect_equal "$?" 2 "observe: a straggler is exit 2"
expect_in "$work/late.observe" "384 records of 8 ranks" "observe: reads the late run"
# Rank 5 alone: the ranks that waited for it in node 1 reach their rails late, but over all their
# collectives they are last in few.
expect_equal "$(sed -n '/^stragglers:/,$p' "$work/late.observe" | grep -c '^  rank ')" 1 "observe: one straggler"
expect_in "$work/late.observe" "  rank 5 on $(hostname) (local rank 1, " "observe: names world rank 5, its host and local rank"

# --- Prometheus ---------------------------------------------------------------------------
# inspect_prom NAME MODEL [VAR=VALUE...]: inspect in Prometheus mode, holding the communicators
# 34 s; the textfiles, copied while they exist, in $work/NAME.copy.
inspect_prom() {
  local name=$1 model=$2 job
  shift 2
  mkdir -p "$work/$name.copy"
  inspect "$name" "$model" 34000 "$@" NCCL_INSPECTOR_PROM_DUMP=1 NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=0 &
  job=$!
  for _ in $(seq 1 45); do
    sleep 1
    if [ "$(cat "$work/$name"/*.prom 2>/dev/null | grep -c '^nccl_bus_bandwidth_gbs')" -ge 32 ]; then
      sleep 1
      cp "$work/$name"/*.prom "$work/$name.copy/"
      break
    fi
  done
  wait "$job"
}
inspect_prom prom "$work/model.yaml"
expect_equal "$(find "$work/prom.copy" -name 'nccl_inspector_metrics_*.prom' | wc -l)" 8 "prom: one textfile per GPU"
expect_equal "$(find "$work/prom" -name '*.prom' | wc -l)" 0 "prom: Inspector deletes its textfiles at the end"
expect_in "$(ls "$work"/prom.copy/*.prom | head -1)" 'comm_name="world",n_nodes="2",nranks="8",collective="AllReduce",message_size="16-17MB",algo_proto="RING_SIMPLE"' \
  "prom: the world's labels"
expect_equal "$(cat "$work"/prom.copy/*.prom | awk '/^nccl_bus_bandwidth_gbs/ && ($NF < 92.5 || $NF > 97.5)')" "" \
  "prom: the model's busbw"
expect_equal "$(cat "$work"/prom.copy/*.prom | grep -o 'comm_name="[a-z0-9 ]*"' | sort -u | tr '\n' ';')" \
  'comm_name="node 0";comm_name="node 1";comm_name="rail 0";comm_name="rail 1";comm_name="rail 2";comm_name="rail 3";comm_name="world";' \
  "prom: every communicator"

# --- the tuned profile, with and without the tuner plugin --------------------------------
NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_CUDA_LIB=$fakecuda NCCLTUNE_NCCL_LIB=$fakenccl \
  NCCLTUNE_FAKE_MODEL=$fixtures/models/comm-shapes.yaml timeout 600 mpirun --oversubscribe -np 8 "$nccltune" tune \
  --space "$fixtures/spaces/comm-shapes.yaml" --out "$work/store" --ops all_reduce,all_gather,reduce_scatter \
  --guard none --min-bytes 256K --max-bytes 1M --init-timeout 10 --size-timeout 5 --progress log >"$work/tune.log" 2>&1
expect_equal "$?" 0 "tune: exit status"
profile=$(find "$work/store" -name 2n.yaml | head -1)
expect_equal "$([ -f "$profile" ] && echo yes)" yes "tune: writes 2n.yaml"
# The job's env as a prolog would give it, and the same job without the plugin: both at 1 MiB
# (all_gather's and reduce_scatter's parts are a quarter of that, their whole buffer 1 MiB).
mapfile -t job_env < <(sed -n '/^env:/,/^[a-z]/s/^  \(NCCL_[A-Z0-9_]*\): "\?\([^"]*\)"\?$/\1=\2/p' "$profile")
bytes=1M inspect_prom served "$fixtures/models/comm-shapes.yaml" "${job_env[@]}" \
  NCCL_TUNER_PLUGIN="$tuner_plugin" NCCLTUNE_PROFILE="$profile" &
bytes=1M inspect_prom own "$fixtures/models/comm-shapes.yaml" "${job_env[@]}" &
wait
"$nccltune" observe "$work/served.copy" --profile "$profile" >"$work/served.observe" 2>&1
expect_equal "$?" 0 "observe with the plugin: exit 0, as tuned"
for comm in "world world" "node 0 node" "node 1 node" "rail 0 rail" "rail 3 rail"; do
  expect_in "$work/served.observe" "${comm% *}: " "observe with the plugin: lists ${comm% *}"
  expect_in "$work/served.observe" ", ${comm##* }; profile section: ${comm##* } (" \
    "observe with the plugin: ${comm% *} held against the profile's ${comm##* } section"
done
expect_equal "$(grep -cE '^  (all_reduce|all_gather|reduce_scatter) .* as_tuned$' "$work/served.observe")" 9 \
  "observe with the plugin: every row (world, 4 rails, 2 nodes x 2) as tuned"
"$nccltune" observe "$work/own.copy" --profile "$profile" >"$work/own.observe" 2>&1
expect_equal "$?" 1 "observe without the plugin: exit 1"
expect_equal "$(grep -cE '^  all_reduce .* not_served$' "$work/own.observe")" 5 \
  "observe without the plugin: the world's and the rails' choices (not NCCL's own) are not served"
grep -E '^  [a-z_]+ ' "$work/served.observe" "$work/own.observe" | sed 's/^/  | /'

if [ -n "${NCCLTUNE_INSPECTOR_KEEP:-}" ]; then
  mkdir -p "$NCCLTUNE_INSPECTOR_KEEP"
  cp -r "$work/json" "$NCCLTUNE_INSPECTOR_KEEP/json"
  cp -r "$work/late" "$NCCLTUNE_INSPECTOR_KEEP/json-late-rank5"
  cp -r "$work/prom.copy" "$NCCLTUNE_INSPECTOR_KEEP/prom"
  cp "$work/model.yaml" "$work/late.yaml" "$NCCLTUNE_INSPECTOR_KEEP/"
fi
finish
