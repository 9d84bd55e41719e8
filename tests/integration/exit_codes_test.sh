#!/usr/bin/env bash
# Every subcommand's exit codes, as scripts and health checks rely on them: 0 success, 2 a usage
# error (always one line on stderr, whatever CLI11's own code for it), and each command's
# documented codes for what it found. One row per case: CODE DESCRIPTION -- COMMAND...
# usage: exit_codes_test.sh NCCLTUNE NCCLTUNED NCCLTUNE_ENV FIXTURES
nccltune=$1 nccltuned=$2 nccltune_env=$3 fixtures=$4
source "$(dirname "$0")/lib.sh"
unset NCCLTUNE_CONFIG SLURM_JOB_NUM_NODES SLURM_GPUS_ON_NODE SLURM_NTASKS_PER_NODE SLURM_PROCID SLURM_STEP_ID
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# row CODE DESCRIPTION -- COMMAND...: the command exits with CODE.
row() { expect_exit "$@"; }
# usage DESCRIPTION -- COMMAND...: a usage error: exit 2 and exactly one line on stderr.
usage() {
  local what=$1
  shift
  expect_exit 2 "$what" "$@"
  expect_one_line "$work/err" "$what: a usage error is one line on stderr"
}

mkdir -p "$work/no-gpu"
printf 'gpus: []\n' >"$work/no-gpu/nvml.yaml"
printf 'gpus: 0\n' >"$work/expect-none.yaml"
printf 'schema: nccltune/profile/v1\nshape: {key: k, nodes: 1}\nenv: {NCCL_ALGO: [\n' >"$work/bad.yaml"
profile=$fixtures/profiles/h100-2n.yaml
dgx=$fixtures/nodes/dgx-h100

row 0 "--help" -- "$nccltune" --help
row 0 "--version" -- "$nccltune" --version
usage "no subcommand" -- "$nccltune"
usage "unknown subcommand" -- "$nccltune" frobnicate
usage "unknown option (CLI11 says 109)" -- "$nccltune" topo --frobnicate
usage "option without its value (CLI11 says 106)" -- "$nccltune" topo --from

row 0 "topo of a snapshot" -- "$nccltune" topo --from "$dgx"
usage "topo: bad --format" -- "$nccltune" topo --from "$dgx" --format bogus
row 1 "topo: unreadable source" -- "$nccltune" topo --from "$work/no-such-dir"

row 0 "check: healthy" -- "$nccltune" check --from "$dgx"
row 1 "check: warnings only (idle links)" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100-idle"
row 2 "check: failures" -- "$nccltune" check --from "$fixtures/nodes/dgx-h100-degraded"
row 3 "check: unreadable source" -- "$nccltune" check --from "$work/no-such-dir"
row 3 "check: unreadable --expect" -- "$nccltune" check --from "$dgx" --expect "$work/no-such.yaml"
row 1 "check: no GPU found" -- "$nccltune" check --from "$work/no-gpu"
expect_in "$work/out" "no NVIDIA GPU found" "check: says no GPU was found"
row 0 "check: no GPU, as --expect gpus: 0 says" -- "$nccltune" check --from "$work/no-gpu" --expect "$work/expect-none.yaml"

row 0 "import a log" -- "$nccltune" import "$fixtures/nccl-tests/all-reduce-2021-error-column.txt"
row 2 "import: no such log" -- "$nccltune" import "$work/no-such.log"
row 0 "import a -J file" -- "$nccltune" import "$fixtures/nccl-tests/all-gather-2.17.3-v1.json"
printf '{"version":3,"results":' >"$work/cut-short.json"
row 2 "import: a -J file cut short" -- "$nccltune" import "$work/cut-short.json"

row 0 "show" -- "$nccltune" show "$profile"
row 2 "show: broken profile" -- "$nccltune" show "$work/bad.yaml"
usage "show: no argument" -- "$nccltune" show
row 0 "diff: same" -- "$nccltune" diff "$profile" "$profile"
row 1 "diff: different" -- "$nccltune" diff "$profile" "$fixtures/report/upgraded-2n.yaml"
row 2 "diff: broken profile" -- "$nccltune" diff "$profile" "$work/bad.yaml"
row 0 "report" -- "$nccltune" report "$profile" -o "$work/report.html"
row 2 "report: broken profile" -- "$nccltune" report "$work/bad.yaml" -o "$work/report2.html"

usage "bench: negative -n" -- "$nccltune" bench -n -1
usage "bench: -a 4" -- "$nccltune" bench -a 4
usage "bench: -g 2 (one rank per GPU)" -- "$nccltune" bench -g 2 --cuda-lib /nonexistent --nccl-lib /nonexistent
usage "bench: unknown --op" -- "$nccltune" bench --op all_to_nobody
usage "tune: negative --max-trials" -- "$nccltune" tune --max-trials -1
usage "tune: negative --budget" -- "$nccltune" tune --budget -5m
usage "tune: bare number as --budget" -- "$nccltune" tune --budget 300
usage "tune: one rank" -- "$nccltune" tune --from "$dgx" --cuda-lib /nonexistent --nccl-lib /nonexistent
expect_in "$work/err" "tune needs at least 2 ranks: one per GPU" "tune: one rank says it needs one per GPU"

row 0 "env: fail-open on a bad flag" -- "$nccltune" env --frobnicate
row 2 "env: --strict on a bad flag" -- "$nccltune" env --frobnicate --strict
row 0 "env: a named config that does not exist (fail-open)" -- "$nccltune" env --config "$work/none.yaml" --nodes 1 --shape k
row 2 "env: a named config that does not exist, --strict" -- "$nccltune" env --config "$work/none.yaml" --nodes 1 --shape k --strict
expect_in "$work/err" "none.yaml: no such file" "env: names the missing config"
row 0 "nccltune-env: fail-open on a bad flag" -- "$nccltune_env" --frobnicate
row 2 "nccltune-env: --strict on a bad flag" -- "$nccltune_env" --frobnicate --strict

row 0 "nccltuned --help" -- "$nccltuned" --help
row 1 "nccltuned: a named config that does not exist" -- "$nccltuned" --once --config "$work/none.yaml" --from "$dgx" \
  --runtime-dir "$work/run" --state-dir "$work/state" --metrics-dir "$work/metrics"
expect_in "$work/err" "none.yaml: no such file" "nccltuned: names the missing config"
finish
