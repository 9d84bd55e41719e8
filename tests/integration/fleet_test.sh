#!/usr/bin/env bash
# nccltune fleet on the fake GPU stack, 8 emulated nodes of 2 GPUs (16 ranks):
# 1. one node slow on the network and one slow link between two others: `--rounds all --format
#    json` names exactly that node in suspects and exactly that pair in links, exits 2; with no
#    NVLink domain every pair's path is "network" and no node has a domain;
# 2. 8 healthy nodes with 4% noise: no suspects, no links, exit 0;
# 3. one node that hangs in every communicator it joins: the survey ends within its budget,
#    names that node in `failed` and no partner, and still finds the slow node and link;
# 4. slurm-drain prints one scontrol line per suspect or failed node, and text says the evidence;
# 5. bad input: exit 3 and one line naming the flag, before any group runs; an nccltune that
#    lacks a subcommand says so (exit 2).
# usage: fleet_test.sh NCCLTUNE FAKECUDA FAKENCCL FIXTURES
nccltune=$1 fakecuda=$2 fakenccl=$3 fixtures=$4
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCLTUNE_CUDA_LIB=$fakecuda NCCLTUNE_NCCL_LIB=$fakenccl NCCLTUNE_EMULATE_NODES=8
for name in $(compgen -e | grep '^NCCL_'); do unset "$name"; done
export NCCLTUNE_TEST_TAG="fleet-test-$$-$RANDOM"
on_exit 'kill -9 $(tagged_processes) 2>/dev/null'
check_that() { if eval "$1"; then pass; else fail "$2"; return 1; fi; }
show_log() { sed 's/^/  | /' "$1" | tail -n 30; }

# fleet MODEL NAME [args...]: the survey's stdout in $work/NAME.out, stderr in $work/NAME.err,
# its exit status in $status and its wall time in $seconds.
fleet() {
  local model=$1 name=$2
  shift 2
  local started=$SECONDS
  NCCLTUNE_FAKE_MODEL=$fixtures/models/$model timeout 600 mpirun -np 16 "$nccltune" fleet --bytes 1M \
    --small-bytes 8K --iterations 5 --init-timeout "${init_timeout:-20}" --size-timeout "${size_timeout:-10}" "$@" \
    >"$work/$name.out" 2>"$work/$name.err"
  status=$?
  seconds=$((SECONDS - started))
}
# json_field FILE EXPRESSION: prints what the Python expression says of the survey `s`.
json_field() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
host=$(hostname | cut -d. -f1)

# 1. A slow node and a slow link, every pair measured.
fleet fleet-slow-node-link.yaml slow --rounds all --format json --out "$work/slow.json"
check_that "[ $status -eq 2 ]" "slow node and link: exit 2 (got $status)" || show_log "$work/slow.err"
check_that "cmp -s '$work/slow.out' '$work/slow.json'" "--out holds what --format json printed"
check_that "[ \"\$(json_field '$work/slow.json' '[x[\"node\"] for x in s[\"suspects\"]]')\" = \"['$host-node3']\" ]" \
  "suspects: exactly node 3" || show_log "$work/slow.out"
check_that "[ \"\$(json_field '$work/slow.json' '[sorted(x[\"nodes\"]) for x in s[\"links\"]]')\" = \"[['$host-node1', '$host-node5']]\" ]" \
  "links: exactly nodes 1 and 5" || show_log "$work/slow.out"
check_that "[ \"\$(json_field '$work/slow.json' 'len(s[\"pairs\"]), s[\"schema\"], s[\"failed\"]')\" = \"(28, 'nccltune/fleet/v1', [])\" ]" \
  "--rounds all: 28 pairs of 8 nodes, nothing failed"
check_that "[ \"\$(json_field '$work/slow.json' '[x[\"path\"] for x in s[\"suspects\"]]')\" = \"['network']\" ]" \
  "node 3 is slow on the network, not alone"
check_that "[ \"\$(json_field '$work/slow.json' 'sorted(set(p[\"path\"] for p in s[\"pairs\"])), [\"domain\" in l for l in s[\"local\"]].count(True)')\" = \"(['network'], 0)\" ]" \
  "no NVLink domain: every pair crossed the network, no node has a domain"

# 4. The same survey as drain lines and as text (one round is enough to show the shape).
fleet fleet-slow-node-link.yaml drain --format slurm-drain
check_that "[ $status -eq 2 ]" "slurm-drain: exit 2 (got $status)" || show_log "$work/drain.err"
check_that "grep -q '^scontrol update NodeName=$host-node3 State=DRAIN Reason=\"nccltune fleet: .*of median\"\$' '$work/drain.out'" \
  "slurm-drain: node 3's drain line with its evidence" || show_log "$work/drain.out"
check_that "[ \$(grep -c '^scontrol ' '$work/drain.out') -eq 1 ]" "slurm-drain: no other node drained" || show_log "$work/drain.out"
fleet fleet-slow-node-link.yaml text
check_that "grep -q 'of 3 pairs at' '$work/text.out'" "text: node 3's evidence (its 3 default rounds)" ||
  show_log "$work/text.out"
check_that "[ \"\$(grep -m1 -o '$host-node[0-9]' '$work/text.out')\" = '$host-node3' ]" "text: worst node first" ||
  show_log "$work/text.out"

# 2. Healthy with 4% noise.
fleet fleet-healthy.yaml healthy --rounds all --format json
check_that "[ $status -eq 0 ]" "healthy: exit 0 (got $status)" || show_log "$work/healthy.out"
check_that "[ \"\$(json_field '$work/healthy.out' 's[\"suspects\"], s[\"links\"], s[\"failed\"]')\" = '([], [], [])' ]" \
  "healthy: no suspects, links or failures" || show_log "$work/healthy.out"

# 3. A node that hangs wherever it is: bounded, named alone, and the rest still found.
init_timeout=10 size_timeout=5 fleet fleet-hang.yaml hang --rounds all --format json --budget 240s
check_that "[ $status -eq 2 ]" "hang: exit 2 (got $status)" || show_log "$work/hang.err"
check_that "[ $seconds -le 240 ]" "hang: the survey ended within its budget (${seconds}s)"
check_that "[ \"\$(json_field '$work/hang.out' '[(x[\"node\"], x[\"what\"]) for x in s[\"failed\"]]')\" = \"[('$host-node6', 'hang')]\" ]" \
  "hang: node 6 failed, no partner named" || show_log "$work/hang.out"
check_that "[ \"\$(json_field '$work/hang.out' '[x[\"node\"] for x in s[\"suspects\"]]')\" = \"['$host-node3']\" ]" \
  "hang: the slow node is still found" || show_log "$work/hang.out"
check_that "[ \"\$(json_field '$work/hang.out' '[sorted(x[\"nodes\"]) for x in s[\"links\"]]')\" = \"[['$host-node1', '$host-node5']]\" ]" \
  "hang: the slow link is still found" || show_log "$work/hang.out"
check_that "[ \"\$(json_field '$work/hang.out' 'sum(\"$host-node6\" in x[\"nodes\"] for x in s[\"pairs\"])')\" = 0 ]" \
  "hang: node 6 left out of the pairs" || show_log "$work/hang.out"
check_that "no_tagged_processes_left" "hang: no worker left behind"

# 5. Bad input, and a subcommand an nccltune does not have.
for bad in "--rounds 0" "--rounds 8" "--rounds some" "--bytes 0" "--small-bytes 2M" "--outlier 1.5" "--collective all_sum" \
  "--format yaml"; do
  # shellcheck disable=SC2086
  fleet fleet-healthy.yaml bad $bad
  check_that "[ $status -eq 3 ]" "fleet $bad: exit 3 (got $status)" || show_log "$work/bad.err"
  check_that "[ \$(grep -c '^nccltune fleet: ${bad%% *}' '$work/bad.err') -eq 1 ]" "fleet $bad: one line naming the flag" ||
    show_log "$work/bad.err"
done
printf 'min_peak_pct: 80\noutlier: two\n' >"$work/expect.yaml"
fleet fleet-healthy.yaml bad --expect "$work/expect.yaml"
check_that "[ $status -eq 3 ] && grep -q 'expect.yaml.*outlier' '$work/bad.err'" "a bad expectation file: exit 3 naming file and field" ||
  show_log "$work/bad.err"
expect_exit 2 "an unknown subcommand exits 2" -- "$nccltune" survey
expect_in "$work/err" "unknown subcommand 'survey'" "an unknown subcommand is named"
expect_exit 2 "an unknown subcommand's --help exits 2" -- "$nccltune" survey --help
expect_in "$work/err" "unknown subcommand 'survey'" "an unknown subcommand's --help names it"
finish
