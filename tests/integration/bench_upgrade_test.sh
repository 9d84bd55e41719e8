#!/usr/bin/env bash
# The upgrade check, `mpirun -np 4 nccltune bench --nccl-lib NEW --baseline-nccl-lib OLD`, on the
# fake GPU stack with 2 emulated nodes: two copies of libfakenccl.so (libfakenccl-OLD.so,
# libfakenccl-NEW.so) read their own models, NEW 12% slower than OLD where all_reduce runs Tree/LL
# (8K, 64K) and 6% faster where it runs Ring/Simple (32M). The regressed sizes, the improvement
# and exit 1; --max-regression 15 exits 0; the JSON holds both columns; --profile says whether the
# profile still helps on NEW; the same version twice is said; bad input is one line, exit 3 and no
# worker started or left.
# Kept small (2 rounds, 5 iterations): each round starts fresh workers for each library.
# usage: bench_upgrade_test.sh NCCLTUNE LIBFAKECUDA LIBFAKENCCL FIXTURES
nccltune=$1
fakecuda=$2
fakenccl=$3
fixtures=$4
models=$fixtures/models
source "$(dirname "$0")/lib.sh"

for name in $(compgen -e | grep '^NCCL_'); do unset "$name"; done
unset NCCLTUNE_CUDA_LIB NCCLTUNE_NCCL_LIB
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCLTUNE_TEST_TAG="bench-upgrade-test-$$-$RANDOM"
export NCCLTUNE_EMULATE_NODES=2
export NCCLTUNE_FAKE_MODEL=$models/upgrade-old.yaml  # libfakecuda's devices
export NCCLTUNE_FAKE_MODEL_OLD=$models/upgrade-old.yaml NCCLTUNE_FAKE_MODEL_NEW=$models/upgrade-new.yaml
cp "$fakenccl" "$work/libfakenccl-OLD.so"
cp "$fakenccl" "$work/libfakenccl-NEW.so"
old=$work/libfakenccl-OLD.so
new=$work/libfakenccl-NEW.so

# upgrade NAME ARGS...: mpirun -np 4 nccltune bench with the fake CUDA and NEW; stdout, stderr in
# $work/NAME.{out,err}, exit status in $rc.
upgrade() {
  local name=$1
  shift
  timeout -k 5 120 mpirun --oversubscribe -np 4 "$nccltune" bench --cuda-lib "$fakecuda" --nccl-lib "$new" \
    --init-timeout 20 --size-timeout 20 -n 5 -w 1 "$@" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
}
expect_rc() {  # expect_rc NAME CODE
  if [ "$rc" -eq "$2" ]; then pass; else fail "$1: exit $rc, expected $2"; head -5 "$work/$1.err"; fi
}
row() { awk -v size="$2" '$1 == size' "$work/$1.out"; }  # row NAME BYTES: that size's table row

sizes=(-b 8K -e 64M -f 8)  # the acceptance's sizes: 8K, 64K, 512K, 4M, 32M
upgrade regressed --baseline-nccl-lib "$old" "${sizes[@]}" --rounds 2 -J "$work/upgrade.json"
expect_rc regressed 1
expect_in "$work/regressed.out" "# OLD: NCCL 2.28.9 ($old)" "the header names OLD's version"
expect_in "$work/regressed.out" "# NEW: NCCL 2.29.3 ($new)" "the header names NEW's version"
expect_in "$work/regressed.out" "# NCCL_* from the environment: none, so NCCL's defaults on both" \
  "the header says both ran NCCL's defaults"
for size in 8192 65536; do
  check "$size: NEW 12% slower is a regression" \
    bash -c '[[ "$0" =~ ^\ *[0-9]+\ +[0-9.]+\ +[0-9.]+\ +0\.880\ +regression$ ]]' "$(row regressed $size)"
done
check "32M: NEW 6% faster is an improvement" \
  bash -c '[[ "$0" =~ ^\ *33554432\ +[0-9.]+\ +[0-9.]+\ +1\.060\ +improvement$ ]]' "$(row regressed 33554432)"
check "4M: the same pair on both is the same" \
  bash -c '[[ "$0" =~ \ 1\.000\ +same\ within\ noise$ ]]' "$(row regressed 4194304)"
expect_in "$work/regressed.out" "# Regressions beyond 3% and the noise: all_reduce 8K (-12.0%), all_reduce 64K (-12.0%)" \
  "the regressed sizes are named"
expect_in "$work/regressed.out" "# Faster on NEW: all_reduce 32M (+6.0%)" "the improvement is named"
expect_in "$work/regressed.out" "# all_reduce: geometric mean" "each op's geometric mean and worst size"
check "the JSON holds both columns and the verdicts" python3 - "$work/upgrade.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["bytes"]: r for r in d["rows"]}
assert d["schema"] == "nccltune/bench-upgrade/v1" and d["regressed"] is True, d
assert d["old"]["nccl_version"] == "2.28.9" and d["new"]["nccl_version"] == "2.29.3", d
assert sorted(rows) == [8192, 65536, 524288, 4194304, 33554432], sorted(rows)
for size, verdict in ((8192, "regression"), (65536, "regression"), (33554432, "improvement")):
    r = rows[size]
    assert r["verdict"] == verdict and r["old_busbw"] > 0 and r["new_busbw"] > 0, r
    assert abs(r["new_busbw"] / r["old_busbw"] - r["ratio"]) < 1e-9, r
EOF
check "no worker left behind" no_tagged_processes_left

upgrade profile --baseline-nccl-lib "$old" "${sizes[@]}" --rounds 1 --max-regression 15 \
  --profile "$fixtures/profiles/upgrade-2n.yaml"
expect_rc profile 0
expect_in "$work/profile.out" "# No size regresses beyond 15% and the noise" "--max-regression 15 passes 12%"
expect_in "$work/profile.out" \
  "# The profile still helps on NEW. Recommendation: extend env.nccl_compatible to 2.29: the 2.28 profile gains +" \
  "--profile: whether the profile helps on NEW, and the recommendation"

# Two files of one version are compared (two builds), and the header says so in one line. The
# job's NCCL_* settings (a TaskProlog's profile) apply to both, and the header names them.
NCCL_BUFFSIZE=4194304 upgrade same --baseline-nccl-lib "$new" --rounds 1 -b 8K -e 8K
expect_rc same 0
expect_in "$work/same.out" "# Both libraries report NCCL 2.29.3: this compares two builds of one version, not an upgrade" \
  "the same version twice is said"
expect_in "$work/same.out" \
  "# NCCL_* from the environment, on both: NCCL_BUFFSIZE=4194304 (unset them to compare NCCL's defaults)" \
  "the job's NCCL_* settings are named"

# Bad input: one line naming the problem, exit 3, nothing on stdout, no worker.
bad_input() {  # bad_input NAME TEXT ARGS...
  local name=$1 text=$2
  shift 2
  upgrade "$name" "$@"
  expect_rc "$name" 3
  expect_in "$work/$name.err" "$text" "$name: says why"
  check "$name: one line of nccltune" [ "$(grep -c '^nccltune bench: ' "$work/$name.err")" -eq 1 ]
  check "$name: no table" [ ! -s "$work/$name.out" ]
}
bad_input missing "--baseline-nccl-lib: cannot load NCCL '$work/missing.so'" --baseline-nccl-lib "$work/missing.so"
bad_input not_nccl "--baseline-nccl-lib: $fakecuda: not an NCCL library (it has no ncclGetVersion)" \
  --baseline-nccl-lib "$fakecuda"
bad_input max_regression "--max-regression 150: out of range" --baseline-nccl-lib "$old" --max-regression 150
# Ranks 2 and 3 load another version from the same path, as a node with another install would.
timeout -k 5 60 mpirun --oversubscribe -np 2 "$nccltune" bench --cuda-lib "$fakecuda" --nccl-lib "$new" \
  --baseline-nccl-lib "$old" : -np 2 env NCCLTUNE_FAKE_MODEL_OLD="$models/upgrade-new.yaml" "$nccltune" bench \
  --cuda-lib "$fakecuda" --nccl-lib "$new" --baseline-nccl-lib "$old" >"$work/mixed.out" 2>"$work/mixed.err"
rc=$?
expect_rc mixed 3
expect_in "$work/mixed.err" \
  "nccltune bench: --baseline-nccl-lib: different NCCL libraries on different ranks: rank 0 loads 2.28.9, rank 2 loads 2.29.3" \
  "different libraries on different ranks, found from each rank's version"
check "no worker left behind" no_tagged_processes_left
finish
