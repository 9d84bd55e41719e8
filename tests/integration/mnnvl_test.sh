#!/usr/bin/env bash
# GB200 NVL72 as NCCL sees it: an NVLink domain is NCCL's node. On 4 emulated trays of 4 GPUs in
# one domain (fixtures/models/gb200-nvl72-tray-model.yaml, the GB200 tray snapshot) the fake NCCL
# says "nNodes 1 localRanks 16 ... MNNVL 1" and runs NVLS; NCCL_MNNVL_ENABLE=0 makes the trays 4
# nodes again. A default tune there writes a profile of 1 NVLink domain of 16 GPUs on 4 hosts
# (1n4h.yaml); the tuner plugin, finding it in the store by NCCL's own count (1 node of 16 ranks),
# runs its per-size choices; `env` for the Slurm job of 4 hosts serves it. Two domains of 2 trays
# are NCCL's 2 nodes, run NVLSTree, and their profile (2n4h.yaml) is stored apart.
# usage: mnnvl_test.sh NCCLTUNE FAKECUDA FAKENCCL TUNER_PLUGIN FIXTURES
nccltune=$1 fakecuda=$2 fakenccl=$3 plugin=$4 fixtures=$5
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCLTUNE_EMULATE_NODES=4 NCCLTUNE_CUDA_LIB=$fakecuda NCCLTUNE_NCCL_LIB=$fakenccl
export NCCLTUNE_FAKE_MODEL=$fixtures/models/gb200-nvl72-tray-model.yaml
for name in $(compgen -e | grep -e '^NCCL_' -e '^NCCLTUNE_PROFILE' -e '^SLURM_'); do unset "$name"; done
unset NCCLTUNE_CONFIG NCCLTUNE_NODE_STATE
export NCCLTUNE_TEST_TAG="mnnvl-test-$$-$RANDOM"
on_exit 'kill -9 $(tagged_processes) 2>/dev/null'
check_that() { if eval "$1"; then pass; else fail "$2"; return 1; fi; }
show_log() { sed 's/^/  | /' "$1" | tail -n 20; }
tray=$fixtures/nodes/gb200-nvl72-tray

# bench NAME SIZES [VAR=VALUE...]: all_reduce on 16 ranks, NCCL's INFO lines in $work/NAME.log,
# "BYTES ALGO PROTO" of its TUNING lines in $work/NAME.choices.
bench() {
  local name=$1 sizes=$2
  shift 2
  mkdir -p "$work/$name.logs"
  env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING NCCL_DEBUG_FILE="$work/$name.logs/nccl.%h.%p.log" "$@" \
    timeout -k 5 300 mpirun -np 16 "$nccltune" bench $sizes -n 2 -w 1 --init-timeout 60 --size-timeout 60 \
    >"$work/$name.out" 2>"$work/$name.err"
  check_that "[ $? -eq 0 ]" "$name: bench exits 0" || tail -5 "$work/$name.err"
  cat "$work/$name.logs"/* >"$work/$name.log" 2>/dev/null
  sed -n 's/.*NCCL INFO AllReduce: \([0-9]*\) Bytes -> Algo \([A-Z_]*\) proto \([A-Z0-9]*\) .*/\1 \2 \3/p' \
    "$work/$name.log" | sort -u -n >"$work/$name.choices"
}

# 1. NCCL's count on one domain, and with MNNVL off.
bench domain "-b 4M -e 4M"
check_that "grep -q 'nRanks 16 nNodes 1 localRanks 16 localRank [0-9]* MNNVL 1' '$work/domain.log'" \
  "one domain of 4 trays is NCCL's 1 node of 16 local ranks, MNNVL 1" || grep -m3 ' comm ' "$work/domain.log"
check_that "grep -q '^4194304 NVLS SIMPLE$' '$work/domain.choices'" "all_reduce at 4M runs NVLS on the domain" ||
  cat "$work/domain.choices"
bench hosts "-b 4M -e 4M" NCCL_MNNVL_ENABLE=0
check_that "grep -q 'nRanks 16 nNodes 4 localRanks 4 localRank [0-9]* MNNVL 0' '$work/hosts.log'" \
  "NCCL_MNNVL_ENABLE=0: 4 nodes of 4, MNNVL 0" || grep -m3 ' comm ' "$work/hosts.log"

# 2. A default tune of the domain (its communicators; the sizes, knobs and node counts kept small).
# tune NAME SIZES [VAR=VALUE...]
tune() {
  local name=$1 sizes=$2
  shift 2
  env "$@" timeout 900 mpirun -np 16 "$nccltune" tune --from "$tray" --space "$fixtures/spaces/mnnvl.yaml" \
    --out "$work/store" --ops all_reduce --guard none --node-counts 4 $sizes \
    --init-timeout 60 --size-timeout 60 --progress log >"$work/$name.tune" 2>&1
  check_that "[ $? -eq 0 ]" "$name: tune exits 0" || show_log "$work/$name.tune"
}
tune domain "--min-bytes 1M --max-bytes 4M"
check_that "grep -q '^nccltune tune: communicators: world (1 node x 16), node (1 node x 4)' '$work/domain.tune'" \
  "tune measures the world and a node's shape (a rail is that shape to NCCL)" || grep communicators "$work/domain.tune"
check_that "grep -q '^nccltune tune: MNNVL: NCCL counts 1 NVLink domain of 16 GPUs on 4 hosts' '$work/domain.tune'" \
  "tune says how NCCL counts the trays" || show_log "$work/domain.tune"
profile=$(find "$work/store" -name 1n4h.yaml | head -1)
check_that "[ -n '$profile' ]" "tune writes <store>/<key>/1n4h.yaml" || find "$work/store"
key=$(basename "$(dirname "$profile")")
check_that "[[ '$key' == *.mnnvl.* ]]" "the node type key says mnnvl ($key)"
"$nccltune" show "$profile" >"$work/show" 2>&1
check_that "grep -q '1 NVLink domain of 16 GPUs on 4 hosts' '$work/show'" "show says 1 NVLink domain of 16 GPUs on 4 hosts" ||
  head -5 "$work/show"

# 3. The tuner plugin finds the profile in the store by NCCL's count (1 node, 16 ranks) and runs
# its per-size choices.
cat >"$work/node.yaml" <<YAML
schema: nccltune/node/v1
host: tray0
scanned_at: "2026-12-06T00:00:00Z"
scan_duration_s: 0.01
node_type: {key: "$key", gpu: "NVIDIA GB200", gpus: 4, nics: 4, nccl_version: "2.28.9", cuda_driver: "13.0"}
YAML
printf 'env:\n  store: %s\n' "$work/store" >"$work/nccltune.yaml"
chmod -R go-w "$work/store"
bench served "-b 1M -e 4M -f 2" NCCL_TUNER_PLUGIN="$plugin" NCCLTUNE_CONFIG="$work/nccltune.yaml" \
  NCCLTUNE_NODE_STATE="$work/node.yaml"
check_that "grep -q 'using .*1n4h.yaml' '$work/served.log'" "the plugin uses 1n4h.yaml for NCCL's 1 node of 16 ranks" ||
  grep -m3 -i 'nccltune' "$work/served.log"
# Each of the world's per_size ranges, at the sizes bench ran inside it.
mismatch=$(python3 - "$profile" "$work/served.choices" <<'PY'
import sys, yaml
profile = yaml.safe_load(open(sys.argv[1]))
world = next(c for c in profile["communicators"] if c["role"] == "world")
ran = dict((int(b), a + "/" + p) for b, a, p in (line.split() for line in open(sys.argv[2])))
checked = 0
for r in world["collectives"]["all_reduce"]["per_size"]:
    want = (r["algo"] + "/" + r["proto"]).upper()
    for size, pair in ran.items():
        if r["min_bytes"] <= size <= r["max_bytes"] and r["algo"]:
            checked += 1
            if pair != want: print(size, pair, "not", want)
if not checked: print("no size checked")
PY
)
check_that "[ -z '$mismatch' ]" "with the plugin every size runs the profile's per-size choice ($mismatch)" ||
  { grep -m4 -A4 'per_size:' "$profile"; cat "$work/served.choices"; }

# 4. env for the Slurm job of 4 trays serves the profile (its only layout for 4 hosts).
SLURM_JOB_NUM_NODES=4 SLURM_GPUS_ON_NODE=4 NCCLTUNE_CONFIG="$work/nccltune.yaml" \
  "$nccltune" env --node-state "$work/node.yaml" --strict >"$work/env.out" 2>"$work/env.err"
check_that "[ $? -eq 0 ] && grep -q '1n4h.yaml' '$work/env.out'" "env for 4 hosts serves 1n4h.yaml" ||
  { cat "$work/env.out" "$work/env.err"; }

# 5. Two domains of 2 trays: NCCL's 2 nodes of 8, NVLSTree, and a profile stored apart.
sed 's/hosts_per_domain: 4/hosts_per_domain: 2/' "$NCCLTUNE_FAKE_MODEL" >"$work/two-domains.yaml"
bench two "-b 4M -e 4M" NCCLTUNE_FAKE_MODEL="$work/two-domains.yaml" NCCL_ALGO=NVLSTree
check_that "grep -q 'nRanks 16 nNodes 2 localRanks 8 localRank [0-9]* MNNVL 1' '$work/two.log'" \
  "two domains of 2 trays are NCCL's 2 nodes of 8" || grep -m3 ' comm ' "$work/two.log"
check_that "grep -q '^4194304 NVLS_TREE SIMPLE$' '$work/two.choices'" "NVLSTree runs across the two domains" ||
  cat "$work/two.choices"
chmod -R u+w "$work/store"
tune two "--comms world --min-bytes 4M --max-bytes 4M" NCCLTUNE_FAKE_MODEL="$work/two-domains.yaml"
check_that "[ -f '$(dirname "$profile")/2n4h.yaml' ] && [ -f '$profile' ]" \
  "the two-domain profile is stored apart (2n4h.yaml beside 1n4h.yaml)" || find "$work/store"
finish
