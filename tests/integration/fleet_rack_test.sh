#!/usr/bin/env bash
# nccltune fleet on racks of multi-node NVLink, on the fake GPU stack: 4 emulated trays of 2 GPUs
# (8 ranks) in 2 NVLink domains of 2 (tests/fixtures/models/fleet-nvl-rack.yaml), tray 1 slow in
# every communicator NCCL counts as one node, tray 2 slow across the network:
# 1. `--rounds all --format json`: the pairs inside a domain are NVLink pairs, the others network
#    pairs; each tray has its domain; tray 1 is named "local" (slow alone), tray 2 "network" (slow
#    with both trays of the other domain, fine over NVLink), each with its domain; no link; exit 2;
# 2. the text table has the domain and each path's pairs, and tray 2's verdict names both.
# fleet_test.sh has the fleet without NVLink domains (HGX): every pair a network pair, no domain.
# usage: fleet_rack_test.sh NCCLTUNE FAKECUDA FAKENCCL FIXTURES
nccltune=$1 fakecuda=$2 fakenccl=$3 fixtures=$4
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCLTUNE_CUDA_LIB=$fakecuda NCCLTUNE_NCCL_LIB=$fakenccl NCCLTUNE_EMULATE_NODES=4
export NCCLTUNE_FAKE_MODEL=$fixtures/models/fleet-nvl-rack.yaml
for name in $(compgen -e | grep '^NCCL_'); do unset "$name"; done
export NCCLTUNE_TEST_TAG="fleet-rack-test-$$-$RANDOM"
on_exit 'kill -9 $(tagged_processes) 2>/dev/null'
show_log() { sed 's/^/  | /' "$1" | tail -n 30; }

# fleet NAME [args...]: every pair of the 4 trays; stdout in $work/NAME.out, stderr in
# $work/NAME.err, the exit status in $status.
fleet() {
  local name=$1
  shift
  timeout 300 mpirun -np 8 "$nccltune" fleet --bytes 1M --small-bytes 8K --iterations 5 --init-timeout 20 \
    --size-timeout 10 --rounds all "$@" >"$work/$name.out" 2>"$work/$name.err"
  status=$?
}
# survey FILE EXPRESSION: what the Python expression says of the survey `s`.
survey() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
host=$(hostname | cut -d. -f1)

# 1. The survey as NCCL sees the rack.
fleet rack --format json
expect_equal "$status" 2 "a slow tray: exit 2"
[ "$status" -eq 2 ] || show_log "$work/rack.err"
expect_equal "$(survey "$work/rack.out" 'sorted((tuple(p["nodes"]), p["path"]) for p in s["pairs"])')" \
  "[(('$host-node0', '$host-node1'), 'nvlink'), (('$host-node0', '$host-node2'), 'network'), \
(('$host-node0', '$host-node3'), 'network'), (('$host-node1', '$host-node2'), 'network'), \
(('$host-node1', '$host-node3'), 'network'), (('$host-node2', '$host-node3'), 'nvlink')]" \
  "pairs inside a domain run over NVLink, the others over the network"
expect_equal "$(survey "$work/rack.out" '[(l["node"], l["domain"]) for l in s["local"]]')" \
  "[('$host-node0', 'domain 0'), ('$host-node1', 'domain 0'), ('$host-node2', 'domain 1'), ('$host-node3', 'domain 1')]" \
  "each tray's NVLink domain"
expect_equal "$(survey "$work/rack.out" '[(x["node"], x["path"], x["domain"]) for x in s["suspects"]]')" \
  "[('$host-node1', 'local', 'domain 0'), ('$host-node2', 'network', 'domain 1')]" \
  "tray 1 slow alone, tray 2 slow across the network"
expect_equal "$(survey "$work/rack.out" 's["suspects"][1]["evidence"].split(" at ")[0], s["links"], s["failed"]')" \
  "('2 of 2 network pairs', [], [])" "tray 2: both its network pairs slow; no link, nothing failed"
expect_equal "$(survey "$work/rack.out" 'sorted(s["median_busbw_gbps"])')" "['local', 'nvlink', 'pairs']" \
  "a median per path"

# 2. The text table.
fleet text
check "text: the domain and each path's pairs" \
  grep -qE '^node +domain +local busbw +% of peak +nvlink busbw +network busbw +verdict +evidence$' "$work/text.out"
expect_in "$work/text.out" "$host-node2 (domain 1) slow with every partner across the network: 2 of 2 network pairs" \
  "text: tray 2's verdict names its domain and path"

check "no worker left behind" no_tagged_processes_left
finish
