#!/usr/bin/env bash
# Every subcommand's exit codes, as scripts and health checks rely on them (README "Exit codes"):
# 0 success; each command's documented codes for what it found (its verdicts); and a usage error
# (an unknown flag, a bad value, a missing or unreadable input file) that is never one of them:
# 3 where 1 and 2 are verdicts or findings (check, explain, topo, bench, fleet, import, worker),
# 2 where that is the documented code for bad input (tune, show, report, diff, nccltune itself;
# tune's 1 says it could not finish: NCCL's defaults fail, or a profile cannot be written),
# and env's fail-open 0 (2 with --strict). A usage error is always one line on stderr naming the
# subcommand and the flag, whatever CLI11's own code for it, and nothing on stdout.
# usage: exit_codes_test.sh NCCLTUNE NCCLTUNED NCCLTUNE_ENV FIXTURES
nccltune=$1 nccltuned=$2 nccltune_env=$3 fixtures=$4
source "$(dirname "$0")/lib.sh"
unset NCCLTUNE_CONFIG SLURM_JOB_NUM_NODES SLURM_GPUS_ON_NODE SLURM_NTASKS_PER_NODE SLURM_PROCID SLURM_STEP_ID
unset NCCLTUNE_CUDA_LIB NCCLTUNE_NCCL_LIB
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# row CODE DESCRIPTION -- COMMAND...: the command exits with CODE.
row() { expect_exit "$@"; }
# usage CODE SUBCOMMAND FLAG DESCRIPTION -- COMMAND...: a usage error: exit CODE, nothing on
# stdout, and exactly one line on stderr, "nccltune SUBCOMMAND: ...", that names FLAG.
usage() {
  local code=$1 sub=$2 flag=$3 what="${2:-nccltune}: $4"
  shift 4
  expect_exit "$code" "$what" "$@"
  expect_one_line "$work/err" "$what: a usage error is one line on stderr"
  expect_in "$work/err" "nccltune${sub:+ $sub}: " "$what: names the subcommand"
  expect_in "$work/err" "$flag" "$what: names $flag"
  expect_equal "$(wc -c <"$work/out")" 0 "$what: nothing on stdout"
}

mkdir -p "$work/no-gpu"
printf 'gpus: []\n' >"$work/no-gpu/nvml.yaml"
printf 'gpus: 0\n' >"$work/expect-none.yaml"
printf 'schema: nccltune/profile/v1\nshape: {key: k, nodes: 1}\nenv: {NCCL_ALGO: [\n' >"$work/bad.yaml"
profile=$fixtures/profiles/h100-2n.yaml
dgx=$fixtures/nodes/dgx-h100

row 0 "--help" -- "$nccltune" --help
row 0 "--version" -- "$nccltune" --version
for sub in topo check tune fleet bench import explain report show diff env; do
  row 0 "$sub --help" -- "$nccltune" "$sub" --help
done
usage 2 "" "nccltune --help" "no subcommand" -- "$nccltune"
usage 2 "" "frobnicate" "unknown subcommand" -- "$nccltune" frobnicate
usage 2 "" "-x" "unknown flag before the subcommand" -- "$nccltune" -x
usage 2 "" "nccltune: unknown subcommand 'reprot' (did you mean report?)" "a subcommand's typo" -- "$nccltune" reprot
usage 2 "" "nccltune: unknown subcommand 'frobnicate' (see nccltune --help)" "nothing near: no suggestion" -- "$nccltune" frobnicate
usage 2 "" "nccltune: unknown subcommand 'worke' (see nccltune --help)" "never suggests the internal worker" -- "$nccltune" worke

# Every subcommand: an unknown flag (and a near one, which the line suggests), a missing file,
# a bad value.
usage 3 topo "--frobnicate" "unknown flag (CLI11 says 109)" -- "$nccltune" topo --frobnicate
usage 3 topo "unknown flag --form (did you mean --from?)" "near flag" -- "$nccltune" topo --form "$dgx"
usage 3 topo "--from" "option without its value (CLI11 says 106)" -- "$nccltune" topo --from
usage 3 topo "--from" "missing snapshot" -- "$nccltune" topo --from "$work/no-such-dir"
usage 3 topo "--from" "missing nvidia-smi file" -- "$nccltune" topo --from "nvidia-smi:$work/no-such.txt"
usage 3 topo "--format" "bad --format" -- "$nccltune" topo --from "$dgx" --format bogus
usage 3 topo "--capture" "--capture with --from" -- "$nccltune" topo --from "$dgx" --capture "$work/snap"
row 0 "topo of a snapshot" -- "$nccltune" topo --from "$dgx"
row 1 "topo: a damaged source (read, not a topology)" -- "$nccltune" topo --from "nvidia-smi:$work/bad.yaml"

usage 3 check "unknown flag --form (did you mean --from?)" "near flag" -- "$nccltune" check --form "$dgx"
usage 3 check "--frobnicate" "unknown flag" -- "$nccltune" check --frobnicate
usage 3 check "--format" "bad --format" -- "$nccltune" check --from "$dgx" --format yaml
usage 3 check "--from" "missing snapshot" -- "$nccltune" check --from "$work/no-such-dir"
usage 3 check "--expect" "missing --expect" -- "$nccltune" check --from "$dgx" --expect "$work/no-such.yaml"
usage 3 check "'foo'" "stray argument" -- "$nccltune" check foo
row 0 "check: healthy" -- "$nccltune" check --from "$dgx"
row 1 "check: warnings only (idle links)" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100-idle"
row 2 "check: failures" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100-degraded"
row 1 "check: no GPU found" -- "$nccltune" check --from "$work/no-gpu"
expect_in "$work/out" "no NVIDIA GPU found" "check: says no GPU was found"
row 0 "check: no GPU, as --expect gpus: 0 says" -- "$nccltune" check --from "$work/no-gpu" --expect "$work/expect-none.yaml"

log=$fixtures/nccl-info-logs/nccl-1412-a100x16-2node-ib-no-gdr.txt
usage 3 explain "--bogus" "unknown flag" -- "$nccltune" explain --bogus x
usage 3 explain "unknown flag --formt (did you mean --format?)" "near flag" -- "$nccltune" explain "$log" --formt json
usage 3 explain "no-such.log" "missing log" -- "$nccltune" explain "$work/no-such.log"
usage 3 explain "--from" "missing --from" -- "$nccltune" explain "$log" --from "$work/no-such-dir"
usage 3 explain "--format" "bad --format" -- "$nccltune" explain "$log" --format yaml
usage 3 explain "logs is required" "no log" -- "$nccltune" explain
row 1 "explain: warnings only" -- "$nccltune" explain "$log"

usage 3 import "unknown flag --jsn (did you mean --json?)" "near flag" -- "$nccltune" import --jsn x y
usage 3 import "no-such.log" "missing log" -- "$nccltune" import "$work/no-such.log"
usage 3 import "--from" "missing --from" -- "$nccltune" import "$fixtures/nccl-tests/all-reduce-2021-error-column.txt" --from "$work/no-such-dir"
usage 3 import "--nodes" "bad --nodes" -- "$nccltune" import "$fixtures/nccl-tests/all-reduce-2021-error-column.txt" --nodes 0
row 0 "import a log" -- "$nccltune" import "$fixtures/nccl-tests/all-reduce-2021-error-column.txt"
row 0 "import a -J file" -- "$nccltune" import "$fixtures/nccl-tests/all-gather-2.17.3-v1.json"
printf '{"version":3,"results":' >"$work/cut-short.json"
row 2 "import: a -J file cut short (read, holds no table)" -- "$nccltune" import "$work/cut-short.json"

# bench's 1 is "below the health threshold": a broken install or a typo is 3, before any table line.
usage 3 bench "--frobnicate" "unknown flag" -- "$nccltune" bench --frobnicate
usage 3 bench "unknown flag --min-peak-prc (did you mean --min-peak-pct?)" "near flag" -- "$nccltune" bench --min-peak-prc 80
usage 3 bench "--cuda-lib" "a CUDA driver it cannot load" -- "$nccltune" bench --cuda-lib "$work/nonexistent.so" --min-peak-pct 80
usage 3 bench "--nccl-lib" "an NCCL it cannot load" -- "$nccltune" bench --nccl-lib "$work/nonexistent.so" --min-peak-pct 80
usage 3 bench "NCCLTUNE_NCCL_LIB" "an NCCL it cannot load, from the environment" -- env NCCLTUNE_NCCL_LIB="$work/nonexistent.so" "$nccltune" bench
usage 3 bench "--from" "missing --from" -- "$nccltune" bench --from "$work/no-such-dir" --min-peak-pct 80
usage 3 bench "--iters" "negative -n" -- "$nccltune" bench -n -1
expect_not_in "$work/err" "179769" "bench: an open range is not printed as 309 digits"
usage 3 bench "--average" "-a 4" -- "$nccltune" bench -a 4
usage 3 bench "-g 2" "-g 2 (one rank per GPU)" -- "$nccltune" bench -g 2 --cuda-lib /nonexistent --nccl-lib /nonexistent
usage 3 bench "--op" "unknown --op" -- "$nccltune" bench --op all_to_nobody
usage 3 bench "-G 1" "an nccl-tests flag it does not take" -- "$nccltune" bench -G 1
usage 3 bench "--max-regression 150" "--max-regression out of range" -- "$nccltune" bench --baseline-nccl-lib "$work/old.so" --max-regression 150
usage 3 bench "--rounds" "--rounds without --baseline-nccl-lib" -- "$nccltune" bench --rounds 2

# Under mpirun every rank loads its libraries and all stop together (exit 3, no table line, one
# line of ours naming the first rank that cannot; mpirun adds its own), with no worker started.
fake=$(dirname "$nccltune")/tests/fake-gpu
if command -v mpirun >/dev/null && [ -e "$fake/libfakecuda.so" ] && [ -e "$fake/libfakenccl.so" ]; then
  row 3 "bench under mpirun: no rank can load NCCL" -- timeout -k 5 60 mpirun --oversubscribe -np 2 \
    "$nccltune" bench --cuda-lib "$fake/libfakecuda.so" --nccl-lib "$work/nonexistent.so"
  expect_equal "$(grep -c 'nccltune bench:' "$work/err")" 1 "bench under mpirun, no rank: one line of ours"
  expect_in "$work/err" "nccltune bench: rank 0: --nccl-lib" "bench under mpirun, no rank: names rank 0 and the flag"
  expect_equal "$(wc -c <"$work/out")" 0 "bench under mpirun, no rank: no table line"
  row 3 "bench under mpirun: rank 1 cannot load NCCL" -- timeout -k 5 60 mpirun --oversubscribe \
    -np 1 -x NCCLTUNE_NCCL_LIB="$fake/libfakenccl.so" "$nccltune" bench --cuda-lib "$fake/libfakecuda.so" : \
    -np 1 -x NCCLTUNE_NCCL_LIB="$work/nonexistent.so" "$nccltune" bench --cuda-lib "$fake/libfakecuda.so"
  expect_equal "$(grep -c 'nccltune bench:' "$work/err")" 1 "bench under mpirun, rank 1: one line of ours"
  expect_in "$work/err" "nccltune bench: rank 1: \$NCCLTUNE_NCCL_LIB" "bench under mpirun, rank 1: names the rank and the variable"
  expect_equal "$(wc -c <"$work/out")" 0 "bench under mpirun, rank 1: no table line (rank 0 stops too)"
  usage 3 bench "--baseline-nccl-lib: cannot load NCCL" "an OLD NCCL it cannot load" -- "$nccltune" bench \
    --cuda-lib "$fake/libfakecuda.so" --nccl-lib "$fake/libfakenccl.so" --baseline-nccl-lib "$work/nonexistent.so"
  usage 3 bench "not an NCCL library (it has no ncclGetVersion)" "an OLD that is not NCCL" -- "$nccltune" bench \
    --cuda-lib "$fake/libfakecuda.so" --nccl-lib "$fake/libfakenccl.so" --baseline-nccl-lib "$fake/libfakecuda.so"
  # tune's 1: it could not finish, here because NCCL's own defaults fail to start (every init fails).
  sed '/^faults:/,$d' "$fixtures/models/fault-init-error.yaml" >"$work/init-fails.yaml"
  printf 'faults:\n  - {fault: init_error}\n' >>"$work/init-fails.yaml"
  row 1 "tune: NCCL's defaults cannot run" -- env NCCLTUNE_FAKE_MODEL="$work/init-fails.yaml" timeout -k 5 120 \
    mpirun --oversubscribe -np 2 "$nccltune" tune --cuda-lib "$fake/libfakecuda.so" --nccl-lib "$fake/libfakenccl.so" \
    --out "$work/tune-out" --init-timeout 5 --size-timeout 3 --progress log
  cat "$work/out" "$work/err" >"$work/tune-said"
  expect_in "$work/tune-said" "nccltune tune: NCCL's defaults cannot run here" "tune exit 1: says NCCL's defaults cannot run"
  expect_equal "$(find "$work/tune-out" -name '*n.yaml' 2>/dev/null)" "" "tune exit 1: no profile written"
fi

usage 3 fleet "unknown flag --frm (did you mean --from?)" "near flag" -- "$nccltune" fleet --frm x
usage 3 fleet "--expect" "missing --expect" -- "$nccltune" fleet --expect "$work/no-such.yaml"
usage 3 fleet "--format" "bad --format" -- "$nccltune" fleet --format bogus
usage 3 fleet "--bytes" "bad --bytes" -- "$nccltune" fleet --bytes 0
usage 3 fleet "--collective: unknown collective 'allreduce' (did you mean all_reduce?)" "NCCL's spelling of a collective" -- "$nccltune" fleet --collective allreduce
usage 3 fleet "--collective: unknown collective 'AllGather' (did you mean all_gather?)" "NCCL's log spelling" -- "$nccltune" fleet --collective AllGather
usage 3 fleet "--collective: unknown collective 'bogus' (one of all_reduce" "nothing near: the list" -- "$nccltune" fleet --collective bogus
usage 3 fleet "--outlier: 85 is a percentage; --outlier takes a fraction of the median, 0.01 to 0.99 (85% is 0.85)" "a percentage as --outlier" -- "$nccltune" fleet --outlier 85
usage 3 fleet "--outlier: 1.5 is outside 0.01 to 0.99" "--outlier above 1" -- "$nccltune" fleet --outlier 1.5

# tune has no verdicts: 2 is its documented usage error.
usage 2 tune "unknown flag --max-trails (did you mean --max-trials?)" "near flag" -- "$nccltune" tune --max-trails 3
usage 2 tune "--space" "missing --space" -- "$nccltune" tune --space "$work/no-such.yaml"
usage 2 tune "--max-trials" "negative --max-trials" -- "$nccltune" tune --max-trials -1
usage 2 tune "--budget" "negative --budget" -- "$nccltune" tune --budget -5m
usage 2 tune "--budget" "bare number as --budget" -- "$nccltune" tune --budget 300
usage 2 tune "--progress" "bad --progress" -- "$nccltune" tune --progress bogus
usage 2 tune "--comms" "bad --comms" -- "$nccltune" tune --comms world,rails
usage 2 tune "one per GPU" "one rank" -- "$nccltune" tune --from "$dgx" --cuda-lib /nonexistent --nccl-lib /nonexistent
expect_in "$work/err" "tune needs at least 2 ranks: one per GPU" "tune: one rank says it needs one per GPU"

# show, report and diff: 2 is their documented bad input (diff's 1 is "different", as diff(1)).
usage 2 show "--frobnicate" "unknown flag" -- "$nccltune" show --frobnicate
usage 2 show "no-such.yaml" "missing profile" -- "$nccltune" show "$work/no-such.yaml"
usage 2 show "PROFILE is required" "no argument" -- "$nccltune" show
row 0 "show" -- "$nccltune" show "$profile"
row 2 "show: broken profile" -- "$nccltune" show "$work/bad.yaml"
usage 2 diff "--frobnicate" "unknown flag" -- "$nccltune" diff "$profile" "$profile" --frobnicate
usage 2 diff "no-such.yaml" "missing profile" -- "$nccltune" diff "$profile" "$work/no-such.yaml"
usage 2 diff "'extra'" "a third profile" -- "$nccltune" diff "$profile" "$profile" extra
row 0 "diff: same" -- "$nccltune" diff "$profile" "$profile"
row 1 "diff: different" -- "$nccltune" diff "$profile" "$fixtures/report/upgraded-2n.yaml"
row 2 "diff: broken profile" -- "$nccltune" diff "$profile" "$work/bad.yaml"
usage 2 report "unknown flag --jornal (did you mean --journal?)" "near flag, before the missing -o" -- "$nccltune" report "$profile" --jornal x
usage 2 report "no-such.yaml" "missing profile" -- "$nccltune" report "$work/no-such.yaml" -o "$work/report0.html"
usage 2 report "--journal" "missing --journal" -- "$nccltune" report "$profile" --journal "$work/no-such.jsonl" -o "$work/report1.html"
usage 2 report "--candidates" "bad --candidates" -- "$nccltune" report "$profile" --candidates 9 -o "$work/report1.html"
row 0 "report" -- "$nccltune" report "$profile" -o "$work/report.html"
row 2 "report: broken profile" -- "$nccltune" report "$work/bad.yaml" -o "$work/report2.html"

# worker (internal, spawned by bench and tune) takes no flag and no argument.
usage 3 worker "--frobnicate" "unknown flag" -- "$nccltune" worker --frobnicate
usage 3 worker "'extra'" "stray argument" -- "$nccltune" worker extra

# env fails open (a prolog must not fail a job for a typo): the same one line, exit 0; --strict 2.
usage 0 env "--frobnicate" "fail-open on a bad flag" -- "$nccltune" env --frobnicate
usage 2 env "--frobnicate" "--strict on a bad flag" -- "$nccltune" env --frobnicate --strict
usage 2 env "unknown flag --frmo (did you mean --from?)" "near flag, --strict" -- "$nccltune" env --frmo x --strict
usage 0 env "none.yaml: no such file" "a named config that does not exist (fail-open)" -- "$nccltune" env --config "$work/none.yaml" --nodes 1 --shape k
usage 2 env "none.yaml: no such file" "a named config that does not exist, --strict" -- "$nccltune" env --config "$work/none.yaml" --nodes 1 --shape k --strict
usage 0 env "--format" "bad --format (fail-open)" -- "$nccltune" env --format bogus --nodes 1 --shape k
usage 2 env "--format" "bad --format, --strict" -- "$nccltune" env --format bogus --nodes 1 --shape k --strict
row 0 "nccltune-env: fail-open on a bad flag" -- "$nccltune_env" --frobnicate
row 2 "nccltune-env: --strict on a bad flag" -- "$nccltune_env" --frobnicate --strict

row 0 "nccltuned --help" -- "$nccltuned" --help
row 1 "nccltuned: a named config that does not exist" -- "$nccltuned" --once --config "$work/none.yaml" --from "$dgx" \
  --runtime-dir "$work/run" --state-dir "$work/state" --metrics-dir "$work/metrics"
expect_in "$work/err" "none.yaml: no such file" "nccltuned: names the missing config"
finish
