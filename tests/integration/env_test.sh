#!/usr/bin/env bash
# `nccltune env` as a prolog runs it: the profile that fits the job in every format, sourced by
# real shells; then hostile stores, profiles and inputs, none of which may run anything when the
# output is sourced (a canary file must never appear), print anything on stdout, or fail the job.
# usage: env_test.sh FIXTURES COMMAND...  (COMMAND: `.../nccltune env` or the lean `.../nccltune-env`)
fixtures=$1
shift
command=("$@")
source "$(dirname "$0")/lib.sh"
umask 022
chmod 755 "$work"

unset SLURM_JOB_NUM_NODES SLURM_GPUS_ON_NODE SLURM_NTASKS_PER_NODE SLURM_SCRIPT_CONTEXT NCCLTUNE_CONFIG NCCLTUNE_DISABLE
unset SLURM_JOB_ID NCCLTUNE_INSPECTOR
# The job's own NCCL_* settings win over the profile's (below): none from the caller's environment.
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^NCCL_')
# The job's ranks per node, as Slurm gives a step, unless a case says otherwise: without it env
# says on stderr on what grounds it serves (below, "GPUs per node unknown").
export SLURM_NTASKS_PER_NODE=8
h100=h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28
a100=a100-sxm4-80gb.8gpu.nvswitch.4xib200.pix.nccl2.21
gb200=gb200.4gpu.nvswitch.mnnvl.4xib400.nccl2.28  # an MNNVL rack's: NCCL's node is an NVLink domain
canary=$work/canary
# A checkout's owner and modes are not the store's: copy it, as an admin would install it.
store=$work/store
cp -r "$fixtures/store" "$store"
chmod -R go-w "$store"
shell_formats="sh slurm systemd nccl-conf"
all_formats="$shell_formats json tuner-csv"

# run ARGS...: `nccltune env` with the config $config (by default empty) and the node state
# $node_state (by default none); stdout in $work/out, stderr in $work/err, exit status in $rc. A FIFO or a slow
# read must not hang it: 20 s at most.
config=$work/empty-config.yaml  # named, so it must exist; empty: every default
: >"$config"
node_state=$work/absent-node.yaml
run() {
  timeout 20 "${command[@]}" --config "$config" --node-state "$node_state" "$@" >"$work/out" 2>"$work/err"
  rc=$?
}
expect_output() {  # expect_output DESCRIPTION EXPECTED (stdout exactly, exit 0, stderr empty)
  if [ "$rc" -eq 0 ] && [ "$(cat "$work/out")" = "$2" ] && [ ! -s "$work/err" ]; then
    pass
  else
    fail "$1: exit $rc"
    echo "  expected: $2" | head -5
    sed 's/^/  stdout | /' "$work/out" | head -5
    sed 's/^/  stderr | /' "$work/err" | head -5
  fi
}
# expect_nothing_served DESCRIPTION PATTERN: nothing on stdout, exit 0, and one line on stderr
# that says so and matches PATTERN (grep -E: what env tried and the flag that fixes it).
expect_nothing_served() {
  if [ "$rc" -eq 0 ] && [ ! -s "$work/out" ] && [ "$(wc -l <"$work/err")" -eq 1 ] &&
    grep -q '^nccltune env: served nothing: ' "$work/err" && grep -Eq -- "$2" "$work/err"; then
    pass
  else
    fail "$1: exit $rc, expected one line matching: $2"
    sed 's/^/  stdout | /' "$work/out" | head -5
    sed 's/^/  stderr | /' "$work/err" | head -5
  fi
}
# sourced_value FILE SHELL NAME: the value NAME has after SHELL sources FILE.
sourced_value() {
  "$2" -c '. "$1" >/dev/null 2>&1; eval "printf %s \"\${$2-unset}\""' _ "$1" "$3"
}

# ---- the profile that fits --------------------------------------------------------------------

run --profiles "$store" --shape "$h100" --nodes 2 --gpus-per-node 8
expect_output "sh, exact node count, NCCL 2.28 (scoped)" "# nccltune profile: $store/$h100/2n.yaml
export NCCL_ALGO='allreduce:NVLS,Tree'
export NCCL_MIN_NCHANNELS='16'
export NCCL_NVLS_ENABLE='1'"
run --profiles "$store" --shape "$h100" --nodes 2 --format slurm
expect_output "slurm (TaskProlog protocol: no quotes)" "# nccltune profile: $store/$h100/2n.yaml
export NCCL_ALGO=allreduce:NVLS,Tree
export NCCL_MIN_NCHANNELS=16
export NCCL_NVLS_ENABLE=1"
for format in systemd nccl-conf; do
  run --profiles "$store" --shape "$h100" --nodes 2 --format "$format"
  expect_output "$format" "NCCL_ALGO=allreduce:NVLS,Tree
NCCL_MIN_NCHANNELS=16
NCCL_NVLS_ENABLE=1"
done
run --profiles "$store" --shape "$h100" --nodes 2 --format json
expect_output "json" "{\"env\":{\"NCCL_ALGO\":\"allreduce:NVLS,Tree\",\"NCCL_MIN_NCHANNELS\":\"16\",\"NCCL_NVLS_ENABLE\":\"1\"},\"profiles\":[\"$store/$h100/2n.yaml\"],\"withheld\":[],\"kept\":[]}"
run --profiles "$store" --shape "$h100" --nodes 2 --format tuner-csv
if [ "$rc" -eq 0 ] && [ "$(grep -v '^#' "$work/out")" = "allreduce,0,65536,tree,ll,-1,-1,-1
allreduce,65537,17179869184,nvls,simple,24,-1,-1" ]; then pass; else fail "tuner-csv rows"; cat "$work/out"; fi

# The lean binary also takes `env` first, so scripts written for `nccltune env` can switch to it.
if [ "${#command[@]}" -eq 1 ]; then
  "${command[0]}" env --config "$config" --node-state "$node_state" --profiles "$store" --shape "$h100" --nodes 2 \
    --format slurm >"$work/out" 2>"$work/err"
  rc=$?
  expect_output "nccltune-env env ..." "# nccltune profile: $store/$h100/2n.yaml
export NCCL_ALGO=allreduce:NVLS,Tree
export NCCL_MIN_NCHANNELS=16
export NCCL_NVLS_ENABLE=1"
fi

# Every shell-like format, sourced by bash and by sh, sets what the profile says.
for format in $shell_formats; do
  run --profiles "$store" --shape "$h100" --nodes 2 --format "$format"
  for shell in bash sh; do
    got=$(sourced_value "$work/out" "$shell" NCCL_ALGO)
    if [ "$got" = "allreduce:NVLS,Tree" ]; then pass; else fail "$format sourced by $shell: NCCL_ALGO='$got'"; fi
  done
done

# The job's own settings win, in every format: a variable the environment already sets is left
# out, and one line on stderr names it and both values. `eval "$(nccltune env)"` leaves it.
for format in $shell_formats json; do
  NCCL_MIN_NCHANNELS=8 run --profiles "$store" --shape "$h100" --nodes 2 --format "$format"
  if [ "$rc" -eq 0 ] && grep -q 'NCCL_ALGO' "$work/out" && ! grep -q 'NCCL_MIN_NCHANNELS.\{0,2\}[=:]' "$work/out" &&
    [ "$(cat "$work/err")" = "nccltune env: NCCL_MIN_NCHANNELS='8' is set by the job: left as it is, not the profile's '16'" ]; then
    pass
  else
    fail "$format with NCCL_MIN_NCHANNELS=8 set: the profile's 16 is left out, one line on stderr says so"
    sed 's/^/  stdout | /' "$work/out" | head -5
    sed 's/^/  stderr | /' "$work/err" | head -5
  fi
done
NCCL_MIN_NCHANNELS=8 run --profiles "$store" --shape "$h100" --nodes 2 --format json
expect_in "$work/out" '"kept":[{"name":"NCCL_MIN_NCHANNELS","own":"8","profile":"16"}]' "json lists the job's own setting under kept"
NCCL_MIN_NCHANNELS= run --profiles "$store" --shape "$h100" --nodes 2 --format slurm
if ! grep -q NCCL_MIN_NCHANNELS "$work/out" && grep -q "NCCL_MIN_NCHANNELS='' is set by the job" "$work/err"; then
  pass
else
  fail "a variable the job sets to '' is the job's own too"
fi
for shell in bash sh; do
  got=$(NCCL_MIN_NCHANNELS=8 "$shell" -c 'eval "$("$@" 2>/dev/null)"; printf %s "$NCCL_MIN_NCHANNELS $NCCL_ALGO"' _ \
    "${command[@]}" --config "$config" --node-state "$node_state" --profiles "$store" --shape "$h100" --nodes 2)
  expect_equal "$got" "8 allreduce:NVLS,Tree" "$shell: NCCL_MIN_NCHANNELS=8 eval \"\$(nccltune env)\" leaves 8 and sets the rest"
done
# A job value with shell syntax in it is only ever shown on stderr, quoted and on one line.
NCCL_ALGO="\$(touch $canary)"$'\n'"export X=1" run --profiles "$store" --shape "$h100" --nodes 2
if [ "$rc" -eq 0 ] && ! grep -q 'NCCL_ALGO\|touch' "$work/out" && [ "$(wc -l <"$work/err")" -eq 1 ]; then
  pass
else
  fail "a hostile job value: left out of stdout, one line on stderr"
fi

# NCCLTUNE_DISABLE=1 turns the profile off, as the TaskProlog and the env plugin do: nothing on
# stdout in any format, exit 0, and a shell that evals it gets nothing.
for format in $all_formats; do
  NCCLTUNE_DISABLE=1 run --profiles "$store" --shape "$h100" --nodes 2 --format "$format"
  expect_output "NCCLTUNE_DISABLE=1, $format: nothing" ""
done
NCCLTUNE_DISABLE=1 run --profiles "$store" --shape "$h100" --nodes 2 --strict
expect_output "NCCLTUNE_DISABLE=1 with --strict: nothing, exit 0" ""
got=$(NCCLTUNE_DISABLE=1 bash -c 'eval "$("$@")"; printf %s "${NCCL_ALGO-unset} ${NCCL_MIN_NCHANNELS-unset}"' _ \
  "${command[@]}" --config "$config" --node-state "$node_state" --profiles "$store" --shape "$h100" --nodes 2)
expect_equal "$got" "unset unset" "NCCLTUNE_DISABLE=1 eval \"\$(nccltune env)\" exports nothing"
# Any other value leaves the profile on, and says how to turn it off.
NCCLTUNE_DISABLE=yes run --profiles "$store" --shape "$h100" --nodes 2 --format slurm
if [ "$rc" -eq 0 ] && grep -q 'NCCL_ALGO' "$work/out" &&
  grep -q "NCCLTUNE_DISABLE='yes' is not 1, so the profile stays on (NCCLTUNE_DISABLE=1 turns it off)" "$work/err"; then
  pass
else
  fail "NCCLTUNE_DISABLE=yes: served, with one line saying only 1 turns it off"
fi
NCCLTUNE_DISABLE=0 run --profiles "$store" --shape "$h100" --nodes 2 --format slurm
expect_output "NCCLTUNE_DISABLE=0: served, nothing said" "# nccltune profile: $store/$h100/2n.yaml
export NCCL_ALGO=allreduce:NVLS,Tree
export NCCL_MIN_NCHANNELS=16
export NCCL_NVLS_ENABLE=1"

# Older NCCL: the global value. Job shape from Slurm's variables.
SLURM_JOB_NUM_NODES=4 SLURM_GPUS_ON_NODE=8 run --profiles "$store" --shape "$a100" --format slurm
expect_output "NCCL 2.21 profile from SLURM_* (global values)" "# nccltune profile: $store/$a100/4n.yaml
export NCCL_ALGO=Ring
export NCCL_PROTO=Simple"
SLURM_JOB_NUM_NODES=4 SLURM_NTASKS_PER_NODE=8 run --profiles "$store" --shape "$a100" --format systemd
expect_output "ranks per node from SLURM_NTASKS_PER_NODE" "NCCL_ALGO=Ring
NCCL_PROTO=Simple"

# An MNNVL rack (GB200 NVL72): Slurm counts hosts, NCCL and the store NVLink domains. 8 hosts: the
# one layout tuned for 8 hosts (2 domains of 4), said in a comment and in JSON; 4 hosts: one domain
# and two are both tuned, so env asks which (nothing served, one line, exit 0); --domains says.
SLURM_JOB_NUM_NODES=8 SLURM_GPUS_ON_NODE=4 run --profiles "$store" --shape "$gb200" --format slurm
expect_output "MNNVL: 8 hosts taken as the one layout tuned for them" "# nccltune profile: $store/$gb200/2n8h.yaml
# nccltune domains: 8 hosts taken as 2 NVLink domains (the only layout tuned for 8 hosts), --domains N says otherwise
export NCCL_MIN_NCHANNELS=32"
SLURM_JOB_NUM_NODES=8 SLURM_GPUS_ON_NODE=4 run --profiles "$store" --shape "$gb200" --format json
expect_output "MNNVL: the domains in JSON" "{\"env\":{\"NCCL_MIN_NCHANNELS\":\"32\"},\"profiles\":[\"$store/$gb200/2n8h.yaml\"],\"withheld\":[],\"kept\":[],\"domains\":{\"hosts\":8,\"nvlink_domains\":2,\"why\":\"8 hosts taken as 2 NVLink domains (the only layout tuned for 8 hosts), --domains N says otherwise\"}}"
SLURM_JOB_NUM_NODES=4 SLURM_GPUS_ON_NODE=4 run --profiles "$store" --shape "$gb200" --format slurm
if [ "$rc" -eq 0 ] && [ ! -s "$work/out" ] && [ "$(wc -l <"$work/err")" -eq 1 ] &&
  grep -q "the store holds profiles of 1 and 2 NVLink domains for 4 hosts; say which with --domains N" "$work/err"; then
  pass
else
  fail "MNNVL: 4 hosts, two layouts tuned: ask for --domains (exit $rc)"
  sed 's/^/  stderr | /' "$work/err" | head -3
fi
for domains in 1 2; do
  SLURM_JOB_NUM_NODES=4 SLURM_GPUS_ON_NODE=4 run --profiles "$store" --shape "$gb200" --domains "$domains" --format slurm
  channels=$([ "$domains" = 1 ] && echo 16 || echo 24)
  expect_output "MNNVL: --domains $domains" "# nccltune profile: $store/$gb200/${domains}n4h.yaml
# nccltune domains: 4 hosts in $domains NVLink domain$([ "$domains" = 1 ] || echo s) (--domains)
export NCCL_MIN_NCHANNELS=$channels"
done
for bad in 3 8 x; do
  SLURM_JOB_NUM_NODES=4 SLURM_GPUS_ON_NODE=4 run --profiles "$store" --shape "$gb200" --domains "$bad" --strict
  if [ "$rc" -eq 2 ] && [ ! -s "$work/out" ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q -- "--domains: " "$work/err"; then
    pass
  else
    fail "MNNVL: --domains $bad refused in one line (exit $rc)"
  fi
done

# A node count between two measured ones (2n.yaml and 8n.yaml, which agree on nothing): the
# transport settings of the nearest count (below by default, above on request or from the
# config), and nothing the two sides disagree on; sh and slurm say which profiles and what was
# withheld.
run --profiles "$store" --shape "$h100" --nodes 6 --format systemd
expect_output "6 nodes: the 2-node profile's transport settings (none)" ""
run --profiles "$store" --shape "$h100" --nodes 6 --format sh
expect_output "6 nodes: the profiles and the withheld settings named" "# nccltune profile: $store/$h100/2n.yaml
# nccltune profile: $store/$h100/8n.yaml
# nccltune withheld: NCCL_ALGO=NVLS,Tree: 8 nodes leave it to NCCL
# nccltune withheld: NCCL_MIN_NCHANNELS=16: 8 nodes leave it to NCCL
# nccltune withheld: NCCL_NVLS_ENABLE=1: 8 nodes leave it to NCCL
# nccltune withheld: NCCL_PROTO=^LL128: 2 nodes leave it to NCCL"
run --profiles "$store" --shape "$h100" --nodes 6 --format systemd --prefer above
expect_output "6 nodes, --prefer above: the 8-node profile's transport settings" "NCCL_NET_GDR_LEVEL=SYS"
# Above the largest measured count: its transport settings, the rest left to NCCL.
run --profiles "$store" --shape "$h100" --nodes 16 --format json
expect_output "16 nodes as JSON: what was used and withheld" "{\"env\":{\"NCCL_NET_GDR_LEVEL\":\"SYS\"},\"profiles\":[\"$store/$h100/8n.yaml\"],\"withheld\":[\"NCCL_PROTO=^LL128: above the largest measured node count (8): left to NCCL\",\"all_reduce per-size choices: above the largest measured node count (8): left to NCCL\"],\"kept\":[]}"
# One node and several never stand in for each other (NCCL's algorithms differ within a node).
run --profiles "$store" --shape "$h100" --nodes 1 --format systemd
expect_nothing_served "1 node: only a 1-node profile fits, and there is none" \
  "\\(from --shape\\), job of 1 node x 8 GPUs: .* for 2, 8 nodes, none of which serves 1 node .*pass --nodes N"
run --profiles "$store" --shape "$a100" --nodes 1 --format systemd --prefer above
expect_nothing_served "1 node, --prefer above: still not the 4-node profile" "for 4 nodes, none of which serves 1 node"
mkdir -p "$work/one-node/$h100"
sed 's/nodes: 2, gpus_per_node: 8, ranks: 16/nodes: 1, gpus_per_node: 8, ranks: 8/' "$store/$h100/2n.yaml" \
  >"$work/one-node/$h100/1n.yaml"
chmod -R go-w "$work/one-node"
run --profiles "$work/one-node" --shape "$h100" --nodes 3 --format systemd
expect_nothing_served "3 nodes: never the 1-node profile" "for 1 node, none of which serves 3 nodes"
run --profiles "$work/one-node" --shape "$h100" --nodes 1 --format systemd
expect_output "1 node: the 1-node profile" "NCCL_ALGO=allreduce:NVLS,Tree
NCCL_MIN_NCHANNELS=16
NCCL_NVLS_ENABLE=1"
printf 'env:\n  store: %s\n  prefer: above\ndaemon:\n  interval: 5m\n' "$store" >"$work/nccltune.yaml"
NCCLTUNE_CONFIG=$work/nccltune.yaml timeout 20 "${command[@]}" --node-state "$work/absent-node.yaml" \
  --shape "$h100" --nodes 6 --format systemd >"$work/out" 2>"$work/err"
rc=$?
expect_output "store and prefer from \$NCCLTUNE_CONFIG" "NCCL_NET_GDR_LEVEL=SYS"

# Node type from the daemon's node.yaml.
printf 'schema: nccltune/node/v1\nhost: n1\nnode_type: {key: "%s", gpus: 8}\n' "$a100" >"$work/node.yaml"
node_state=$work/node.yaml run --profiles "$store" --nodes 4 --format slurm
expect_output "node type from node.yaml" "# nccltune profile: $store/$a100/4n.yaml
export NCCL_ALGO=Ring
export NCCL_PROTO=Simple"

# Neither --shape nor node.yaml: the node type is read from the machine (here a snapshot, and no
# NCCL), by nccltune itself or, from nccltune-env, by handing the command over to nccltune.
local_read=(--profiles "$store" --nodes 2 --from "$fixtures/nodes/dgx-h100" --nccl-lib /nonexistent --cuda-lib /nonexistent)
run "${local_read[@]}"
expect_nothing_served "local read: a node type the store does not hold" \
  "\\(no --shape, no node state at $node_state, then a read of --from $fixtures/nodes/dgx-h100\\).* holds no profile for this node type \\(it holds $a100, $gb200, $h100\\): pass --shape KEY"
local_key=$(sed -n 's/^nccltune env: served nothing: node type \([A-Za-z0-9._-]*\) .*/\1/p' "$work/err")
case "$local_key" in
  h100-80gb-hbm3.8gpu.nvswitch.8xib400.*) pass ;;
  *) fail "local read: key '$local_key'"; cat "$work/err" ;;
esac
mkdir -p "$store/$local_key"
sed "s/key: \"$h100\"/key: \"$local_key\"/" "$store/$h100/2n.yaml" >"$store/$local_key/2n.yaml"
run "${local_read[@]}" --format systemd
expect_output "node type read from the machine" "NCCL_ALGO=allreduce:NVLS,Tree
NCCL_MIN_NCHANNELS=16
NCCL_NVLS_ENABLE=1"

# A command line env cannot parse fails open too: one line on stderr, exit 0 (2 with --strict).
# --help still prints the options.
for bad in "--no-such-option" "--nodes" "--nodes 2 3 --no-such-option"; do
  # shellcheck disable=SC2086  # split on purpose
  run --profiles "$store" --shape "$h100" $bad
  if [ "$rc" -eq 0 ] && [ ! -s "$work/out" ] && [ "$(wc -l <"$work/err")" -eq 1 ]; then
    pass
  else
    fail "unparsable command line '$bad': exit $rc, $(wc -l <"$work/err") lines on stderr"
    sed 's/^/  stderr | /' "$work/err" | head -3
  fi
  # shellcheck disable=SC2086
  run --strict --profiles "$store" --shape "$h100" $bad
  if [ "$rc" -eq 2 ] && [ ! -s "$work/out" ]; then pass; else fail "unparsable command line '$bad' --strict: exit $rc"; fi
done
timeout 20 "${command[@]}" --help >"$work/out" 2>"$work/err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q -- "--profiles" "$work/out"; then pass; else fail "--help: exit $rc"; fi

# nccltune-env hands a local read to the nccltune beside it as a child: its stdout is passed on
# only when it exits 0, so a full binary that cannot load (127) or crashes still fails open.
if [ "${#command[@]}" -eq 1 ]; then
  lean=$work/lean
  mkdir -p "$lean"
  cp "${command[0]}" "$lean/nccltune-env"
  fake_nccltune() {  # fake_nccltune SCRIPT: $lean/nccltune is a shell script doing SCRIPT
    printf '#!/bin/sh\n%s\n' "$1" >"$lean/nccltune"
    chmod 0755 "$lean/nccltune"
  }
  hand_over() {  # a local read (no --shape, no node.yaml) through the copy beside the fake
    timeout 20 "$lean/nccltune-env" --config "$config" --node-state "$node_state" --profiles "$store" --nodes 2 \
      --from "$fixtures/nodes/dgx-h100" "$@" >"$work/out" 2>"$work/err"
    rc=$?
  }
  expect_failed_over() {  # expect_failed_over DESCRIPTION STDERR_TEXT [ARGS...]
    local what=$1 text=$2
    shift 2
    hand_over "$@"
    if [ "$rc" -eq 0 ] && [ ! -s "$work/out" ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q -- "$text" "$work/err"; then
      pass
    else
      fail "hand-over, $what: exit $rc, $(wc -c <"$work/out") bytes on stdout"
      sed 's/^/  stdout | /' "$work/out" | head -3
      sed 's/^/  stderr | /' "$work/err" | head -3
    fi
    hand_over "$@" --strict
    if [ "$rc" -eq 2 ] && [ ! -s "$work/out" ]; then pass; else fail "hand-over, $what, --strict: exit $rc"; fi
  }
  fake_nccltune 'echo "export NCCL_FROM_FAKE=1"; exit 127'
  expect_failed_over "full binary cannot load" "exited with status 127"
  fake_nccltune "echo \"export NCCL_FROM_FAKE=1\"; kill -SEGV \$\$"
  expect_failed_over "full binary crashes" "killed by signal 11"
  fake_nccltune 'echo "export NCCL_FROM_FAKE=1"; exit 2'
  expect_failed_over "full binary fails" "exited with status 2"
  rm -f "$lean/nccltune"
  expect_failed_over "no full binary" "No such file or directory"
  fake_nccltune 'echo "export NCCL_FROM_FAKE=1"; echo "args: $*"'
  hand_over --format slurm
  expect_output "hand-over: the child's stdout when it exits 0" "export NCCL_FROM_FAKE=1
args: env --config $config --node-state $node_state --profiles $store --nodes 2 --from $fixtures/nodes/dgx-h100 --format slurm"
fi

# No profile fits: nothing on stdout, one line on stderr saying what env tried and the flag that
# fixes it, exit 0 (fail-open); --strict exits 2.
run --profiles "$store" --shape "b200.8gpu.nvswitch.8xib400.pix.nccl2.28" --nodes 2
expect_nothing_served "unknown node type" "holds no profile for this node type .*: pass --shape KEY"
run --profiles "$store" --shape "$h100" --nodes 2 --gpus-per-node 4
expect_nothing_served "4 GPUs per node against profiles tuned with 8" \
  "2n.yaml is tuned for 8 GPUs per node, not 4: pass --gpus-per-node 8"
SLURM_JOB_NUM_NODES=2 SLURM_GPUS_ON_NODE=0 run --profiles "$store" --shape "$h100"
expect_nothing_served "a job without GPUs" "a job without GPUs gets no profile"
run --profiles "$store" --shape "$h100" --nodes 2 --format tuner-csv --gpus-per-node 2
expect_nothing_served "tuner-csv when nothing fits" "not 2: pass --gpus-per-node 8"
run --profiles "$store" --shape "$h100" --nodes 1 --strict
if [ "$rc" -eq 2 ] && [ ! -s "$work/out" ] && [ "$(wc -l <"$work/err")" -eq 1 ]; then
  pass
else
  fail "nothing served with --strict: exit $rc (expected 2), $(wc -l <"$work/err") lines on stderr"
fi
# GPUs per node unknown: the profile of the node type and count is served as tuned, and one line
# on stderr says so (stdout is the env alone, as a prolog needs).
unset SLURM_NTASKS_PER_NODE
run --profiles "$store" --shape "$h100" --nodes 2 --format systemd
export SLURM_NTASKS_PER_NODE=8
if [ "$rc" -eq 0 ] && grep -q '^NCCL_NVLS_ENABLE=1$' "$work/out" && [ "$(wc -l <"$work/err")" -eq 1 ] &&
  grep -q "GPUs per node is unknown .*: serving $store/$h100/2n.yaml as tuned, for 8 GPUs per node; pass --gpus-per-node G" "$work/err"; then
  pass
else
  fail "GPUs per node unknown: exit $rc"
  sed 's/^/  stdout | /' "$work/out" | head -5
  sed 's/^/  stderr | /' "$work/err" | head -3
fi

# Values with the special characters a value may hold (^ = , : + - .) are accepted, and every
# shell-like format, sourced with `set -u` by bash and by sh, sets exactly those values.
special=$work/special
special_key="special-values.8gpu.nccl2.28"
mkdir -p "$special/$special_key"
cat >"$special/$special_key/2n.yaml" <<EOF
schema: nccltune/profile/v1
shape: {key: "$special_key", nodes: 2, gpus_per_node: 8, nccl_version: "2.28.9"}
env: {NCCL_ALGO: "^Ring,Tree", NCCL_PROTO: "allreduce:LL128,Simple", NCCL_IB_HCA: "=mlx5_0:1,mlx5_1:1",
      NCCL_SOCKET_IFNAME: "^lo,docker", NCCL_DEBUG_SUBSYS: "a+b-c.d_e=f"}
EOF
chmod -R go-w "$special"
declare -A special_values=([NCCL_ALGO]="allreduce:^Ring,Tree" [NCCL_PROTO]="allreduce:LL128,Simple"
  [NCCL_IB_HCA]="=mlx5_0:1,mlx5_1:1" [NCCL_SOCKET_IFNAME]="^lo,docker" [NCCL_DEBUG_SUBSYS]="a+b-c.d_e=f")
for format in sh slurm systemd; do
  run --profiles "$special" --shape "$special_key" --nodes 2 --format "$format"
  if [ "$rc" -eq 0 ] && [ "$(grep -vc '^# nccltune profile: ' "$work/out")" -eq 5 ] && [ ! -s "$work/err" ]; then
    pass
  else
    fail "special values ($format): exit $rc, $(wc -l <"$work/out") lines"
    sed 's/^/  stdout | /' "$work/out" | head -6
    sed 's/^/  stderr | /' "$work/err" | head -3
  fi
  for shell in bash sh; do
    for name in "${!special_values[@]}"; do
      # shellcheck disable=SC2016  # expanded by $shell
      if got=$(cd "$work" && "$shell" -c 'set -u; . "$1" || exit 9; eval "printf %s \"\$$2\""' _ "$work/out" "$name" 2>&1) &&
        [ "$got" = "${special_values[$name]}" ]; then
        pass
      else
        fail "special values ($format) sourced by $shell with set -u: $name='$got', expected '${special_values[$name]}'"
      fi
    done
  done
  if [ -e "$canary" ]; then fail "special values ($format): the canary exists"; rm -f "$canary"; else pass; fi
done

# ---- hostile input ----------------------------------------------------------------------------

# expect_refused DESCRIPTION ARGS...: every format prints nothing and exits 0 with one line on
# stderr; --strict exits 2; the (empty) output sourced in bash and sh runs nothing.
expect_refused() {
  local what=$1 format shell lines
  shift
  for format in $all_formats; do
    run "$@" --format "$format"
    lines=$(wc -l <"$work/err")
    if [ "$rc" -eq 0 ] && [ ! -s "$work/out" ] && [ "$lines" -eq 1 ]; then
      pass
    else
      fail "$what ($format): exit $rc, $(wc -c <"$work/out") bytes on stdout, $lines lines on stderr"
      sed 's/^/  stdout | /' "$work/out" | head -3
      sed 's/^/  stderr | /' "$work/err" | head -3
    fi
    case " $shell_formats " in *" $format "*)
      for shell in bash sh; do "$shell" -c '. "$1"' _ "$work/out" >/dev/null 2>&1; done ;;
    esac
  done
  run "$@" --strict
  if [ "$rc" -eq 2 ] && [ ! -s "$work/out" ]; then pass; else fail "$what with --strict: exit $rc"; fi
  if [ -e "$canary" ]; then fail "$what: the canary exists"; rm -f "$canary"; else pass; fi
  echo "refused as expected: $what: $(head -c 300 "$work/err")"
}

hostile=$work/hostile
key=hostile-node.8gpu.nccl2.28
# hostile_profile NAME: a store whose one profile ($hostile/NAME/$key/2n.yaml) is stdin.
hostile_profile() {
  mkdir -p "$hostile/$1/$key"
  cat >"$hostile/$1/$key/2n.yaml"
}
head_yaml="schema: nccltune/profile/v1
shape: {key: \"$key\", nodes: 2, gpus_per_node: 8, nccl_version: \"2.28.9\"}"

printf '%s\nenv: {NCCL_ALGO: "$(touch %s)"}\n' "$head_yaml" "$canary" | hostile_profile dollar
printf '%s\nenv: {NCCL_ALGO: "`touch %s`"}\n' "$head_yaml" "$canary" | hostile_profile backtick
printf '%s\nenv: {NCCL_ALGO: "Ring; touch %s"}\n' "$head_yaml" "$canary" | hostile_profile semicolon
printf "%s\nenv: {NCCL_ALGO: \"Ring'; touch %s; echo '\"}\n" "$head_yaml" "$canary" | hostile_profile single-quote
printf '%s\nenv: {NCCL_ALGO: "Ring\\"; touch %s; echo \\""}\n' "$head_yaml" "$canary" | hostile_profile double-quote
printf '%s\nenv: {NCCL_ALGO: "Ring\\ntouch %s"}\n' "$head_yaml" "$canary" | hostile_profile newline-escape
printf '%s\nenv:\n  NCCL_ALGO: |\n    Ring\n    touch %s\n' "$head_yaml" "$canary" | hostile_profile newline-block
printf '%s\nenv: {"NCCL_X=1; touch %s; Y": "1"}\n' "$head_yaml" "$canary" | hostile_profile name-injection
printf '%s\nenv: {"NCCL_X\\ntouch %s": "1"}\n' "$head_yaml" "$canary" | hostile_profile name-newline
printf '%s\nenv: {NCCL_ALGO: "Ring\0; touch %s"}\n' "$head_yaml" "$canary" | hostile_profile nul
printf '%s\nenv: {NCCL_ALGO: "Ring\xff\xfe"}\n' "$head_yaml" | hostile_profile non-utf8
{ printf '%s\nenv: {NCCL_ALGO: "' "$head_yaml"; head -c 1048576 /dev/zero | tr '\0' a; printf '"}\n'; } |
  hostile_profile 1mb-value
{ printf '%s\nenv: {NCCL_ALGO: "' "$head_yaml"; head -c 2000 /dev/zero | tr '\0' a; printf '"}\n'; } |
  hostile_profile 2kb-value
{
  printf '%s\nenv: {NCCL_ALGO: Ring}\nfailed:\n' "$head_yaml"
  printf '  - {env: {NCCL_A: &a0 "x"}, outcome: crash, reason: "r"}\n'
  for i in 1 2 3 4 5 6 7 8 9; do
    printf '  - {env: {NCCL_A: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]}, outcome: crash, reason: "r"}\n' \
      "$i" $((i - 1)) $((i - 1)) $((i - 1)) $((i - 1)) $((i - 1)) $((i - 1)) $((i - 1)) $((i - 1)) $((i - 1))
  done
} | hostile_profile anchor-bomb
printf '%s\nenv: {NCCL_ALGO: Ring}\n---\n%s\nenv: {NCCL_ALGO: "$(touch %s)"}\n' "$head_yaml" "$head_yaml" "$canary" |
  hostile_profile two-documents
printf '%s\nenv: {NCCL_ALGO: !!binary "JCh0b3VjaCAvdG1wL3gp"}\n' "$head_yaml" | hostile_profile tag
printf 'schema: nccltune/profile/v1\nshape: {key: "$(touch %s)", nodes: 2}\nenv: {NCCL_ALGO: Ring}\n' "$canary" |
  hostile_profile key-injection
printf 'schema: nccltune/profile/v1\nshape: {key: "another-node.8gpu", nodes: 2, gpus_per_node: 8}\nenv: {NCCL_ALGO: Ring}\n' |
  hostile_profile key-of-another-node
printf '%s\nenv: {NCCL_ALGO: Ring}\n' "$(printf '%s' "$head_yaml" | sed 's/nodes: 2/nodes: 4/')" |
  hostile_profile nodes-of-another-file
printf '\xef\xbb\xbf\xff\xff\n' | hostile_profile garbage
for name in "$hostile"/*; do
  chmod -R go-w "$name"
  expect_refused "profile: $(basename "$name")" --profiles "$name" --shape "$key" --nodes 2
done

# A valid profile in the wrong place, or reachable by others: refused as sshd's StrictModes does.
good() {  # good STORE: a store with one valid profile, writable by its owner only
  mkdir -p "$1/$key"
  printf '%s\nenv: {NCCL_ALGO: Ring}\n' "$head_yaml" >"$1/$key/2n.yaml"
  chmod -R go-w "$1"
}
good "$work/outside"
mkdir -p "$work/link-out/$key"
ln -s "$work/outside/$key/2n.yaml" "$work/link-out/$key/2n.yaml"
expect_refused "profile symlinked out of the store" --profiles "$work/link-out" --shape "$key" --nodes 2
mkdir -p "$work/dir-link-out"
ln -s "$work/outside/$key" "$work/dir-link-out/$key"
expect_refused "key directory symlinked out of the store" --profiles "$work/dir-link-out" --shape "$key" --nodes 2
mkdir -p "$work/dev-zero/$key"
ln -s /dev/zero "$work/dev-zero/$key/2n.yaml"
expect_refused "profile symlinked to /dev/zero" --profiles "$work/dev-zero" --shape "$key" --nodes 2
mkdir -p "$work/fifo/$key"
mkfifo "$work/fifo/$key/2n.yaml"
expect_refused "a FIFO in place of a profile (must not block)" --profiles "$work/fifo" --shape "$key" --nodes 2
good "$work/group-writable"
chmod g+w "$work/group-writable/$key/2n.yaml"
expect_refused "group-writable profile" --profiles "$work/group-writable" --shape "$key" --nodes 2
good "$work/other-writable-dir"
chmod o+w "$work/other-writable-dir/$key"
expect_refused "other-writable key directory" --profiles "$work/other-writable-dir" --shape "$key" --nodes 2
good "$work/writable-root"
chmod 777 "$work/writable-root"
expect_refused "world-writable store root" --profiles "$work/writable-root" --shape "$key" --nodes 2
if [ "$(id -u)" -eq 0 ]; then
  good "$work/foreign-owner"
  chown 4242 "$work/foreign-owner/$key/2n.yaml"
  expect_refused "profile owned by another user (as root)" --profiles "$work/foreign-owner" --shape "$key" --nodes 2
  good "$work/foreign-dir"
  chown 4242 "$work/foreign-dir/$key"
  expect_refused "key directory owned by another user (as root)" --profiles "$work/foreign-dir" --shape "$key" --nodes 2
else
  echo "note: not root, the foreign-owner cases need chown (unit tests cover them with a caller uid)"
fi
good "$work/trusted"
run --profiles "$work/trusted" --shape "$key" --nodes 2 --format slurm
expect_output "the same profile, stored safely" "# nccltune profile: $work/trusted/$key/2n.yaml
export NCCL_ALGO=allreduce:Ring"

# Hostile input from the job, the command line and the config.
SLURM_JOB_NUM_NODES="2; touch $canary" expect_refused "SLURM_JOB_NUM_NODES" --profiles "$work/trusted" --shape "$key"
SLURM_GPUS_ON_NODE='$(touch '"$canary"')' expect_refused "SLURM_GPUS_ON_NODE" --profiles "$work/trusted" --shape "$key" --nodes 2
expect_refused "no node count at all" --profiles "$work/trusted" --shape "$key"
expect_refused "--shape with a path" --profiles "$work/trusted" --shape "../trusted/$key" --nodes 2
expect_refused "--shape with a command" --profiles "$work/trusted" --shape "\$(touch $canary)" --nodes 2
expect_refused "--nodes not a number" --profiles "$work/trusted" --shape "$key" --nodes "2;touch $canary"
expect_refused "--prefer sideways" --profiles "$work/trusted" --shape "$key" --nodes 2 --prefer sideways
expect_refused "store that does not exist" --profiles "$work/no-such-store" --shape "$key" --nodes 2
printf 'schema: nccltune/node/v1\nnode_type: {key: "$(touch %s)"}\n' "$canary" >"$work/bad-node.yaml"
node_state=$work/bad-node.yaml expect_refused "node.yaml with a hostile key" --profiles "$work/trusted" --nodes 2
printf 'env:\n  allow_names: ["X; touch %s"]\n' "$canary" >"$work/bad.yaml"
config=$work/bad.yaml expect_refused "config with a hostile allowed name" --profiles "$work/trusted" --shape "$key" --nodes 2
printf 'env:\n  stor: /tmp\n' >"$work/typo.yaml"
config=$work/typo.yaml expect_refused "config with an unknown key" --profiles "$work/trusted" --shape "$key" --nodes 2
grep -q "typo.yaml:2" "$work/err" && pass || fail "config error names file:line ($(cat "$work/err"))"
run --profiles "$work/trusted" --shape "$key" --nodes 2 --format bash
if [ "$rc" -eq 0 ] && [ ! -s "$work/out" ] && grep -q -- "--format" "$work/err"; then pass; else fail "--format bash"; fi

# ---- NCCL Inspector, for the jobs that ask -------------------------------------------------------
# Off unless the config names the plugin, and then only for a job that asks (NCCLTUNE_INSPECTOR=1
# or --inspector) or for every job (jobs: all); after the profile's lines, in the env formats only.
printf 'env:\n  inspector:\n    plugin: /opt/nccl/libnccl-profiler-inspector.so\n    dump_dir: /shared/inspector\n' >"$work/inspector.yaml"
config=$work/inspector.yaml SLURM_JOB_ID=4242 run --profiles "$work/trusted" --shape "$key" --nodes 2 --format slurm
expect_output "Inspector configured, the job does not ask: off" "# nccltune profile: $work/trusted/$key/2n.yaml
export NCCL_ALGO=allreduce:Ring"
config=$work/inspector.yaml SLURM_JOB_ID=4242 NCCLTUNE_INSPECTOR=1 run --profiles "$work/trusted" --shape "$key" --nodes 2 --format slurm
expect_output "NCCLTUNE_INSPECTOR=1: Inspector's lines after the profile's" "# nccltune profile: $work/trusted/$key/2n.yaml
export NCCL_ALGO=allreduce:Ring
# nccltune inspector: NCCL Inspector on for this job (profiling costs it time)
export NCCL_PROFILER_PLUGIN=/opt/nccl/libnccl-profiler-inspector.so
export NCCL_INSPECTOR_ENABLE=1
export NCCL_INSPECTOR_DUMP_DIR=/shared/inspector/4242
export NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=1000000"
config=$work/inspector.yaml SLURM_JOB_ID=4242 run --profiles "$work/trusted" --shape "$key" --nodes 2 --format sh --inspector
for shell in bash sh; do
  got=$(sourced_value "$work/out" "$shell" NCCL_INSPECTOR_DUMP_DIR)
  if [ "$got" = /shared/inspector/4242 ]; then pass; else fail "--inspector sourced by $shell: '$got'"; fi
done
config=$work/inspector.yaml NCCLTUNE_INSPECTOR=1 run --profiles "$work/trusted" --shape "$key" --nodes 2 --format systemd --job-id train-7
expect_output "--job-id, systemd" "NCCL_ALGO=allreduce:Ring
NCCL_PROFILER_PLUGIN=/opt/nccl/libnccl-profiler-inspector.so
NCCL_INSPECTOR_ENABLE=1
NCCL_INSPECTOR_DUMP_DIR=/shared/inspector/train-7
NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=1000000"
config=$work/inspector.yaml SLURM_JOB_ID=4242 NCCLTUNE_INSPECTOR=yes run --profiles "$work/trusted" --shape "$key" --nodes 2 --format slurm
if [ "$rc" -eq 0 ] && ! grep -q INSPECTOR= "$work/out" && grep -q "NCCLTUNE_INSPECTOR='yes' is not 1" "$work/err"; then pass; else fail "NCCLTUNE_INSPECTOR=yes"; fi
# jobs: all: every job, without asking.
printf 'env:\n  inspector:\n    plugin: /opt/nccl/libnccl-profiler-inspector.so\n    dump_dir: /shared/inspector\n    jobs: all\n' >"$work/inspector-all.yaml"
config=$work/inspector-all.yaml SLURM_JOB_ID=4243 run --profiles "$work/trusted" --shape "$key" --nodes 2 --format slurm
if [ "$rc" -eq 0 ] && grep -qx 'export NCCL_INSPECTOR_DUMP_DIR=/shared/inspector/4243' "$work/out"; then pass; else fail "jobs: all"; fi
# NCCLTUNE_DISABLE=1 turns Inspector off with the profile.
config=$work/inspector-all.yaml SLURM_JOB_ID=4243 NCCLTUNE_DISABLE=1 run --profiles "$work/trusted" --shape "$key" --nodes 2 --format slurm
expect_output "NCCLTUNE_DISABLE=1: no Inspector either" ""
# Asked for where no profile fits: Inspector's lines alone (what nobody tuned is worth observing).
config=$work/inspector.yaml SLURM_JOB_ID=4242 NCCLTUNE_INSPECTOR=1 run --profiles "$work/trusted" --shape untuned-node.8gpu --nodes 2 --format slurm
if [ "$rc" -eq 0 ] && grep -qx 'export NCCL_INSPECTOR_DUMP_DIR=/shared/inspector/4242' "$work/out" &&
  ! grep -q NCCL_ALGO "$work/out" && grep -q 'served nothing' "$work/err"; then pass; else fail "Inspector without a profile"; fi
# A hostile job id is refused with one line; the profile is still served, and sourcing runs nothing.
for id in "1; touch $canary" '$(touch '"$canary"')' ../../etc .hidden; do
  config=$work/inspector.yaml SLURM_JOB_ID=$id NCCLTUNE_INSPECTOR=1 run --profiles "$work/trusted" --shape "$key" --nodes 2 --format sh
  if [ "$rc" -eq 0 ] && ! grep -q INSPECTOR "$work/out" && grep -q NCCL_ALGO "$work/out" && [ "$(wc -l <"$work/err")" -eq 1 ] &&
    grep -q "Inspector stays off: SLURM_JOB_ID: " "$work/err"; then pass; else fail "hostile SLURM_JOB_ID '$id'"; fi
  bash -c '. "$1"' _ "$work/out" >/dev/null 2>&1
done
# Formats whose reader is not the process's environment: Inspector stays off, said once.
config=$work/inspector.yaml SLURM_JOB_ID=4242 run --profiles "$work/trusted" --shape "$key" --nodes 2 --format nccl-conf --inspector
if [ "$rc" -eq 0 ] && ! grep -q INSPECTOR "$work/out" && grep -q 'only sh, slurm and systemd' "$work/err"; then pass; else fail "nccl-conf --inspector"; fi
# The job's own profiler plugin wins: no Inspector.
config=$work/inspector.yaml SLURM_JOB_ID=4242 NCCL_PROFILER_PLUGIN=/home/me/mine.so run --profiles "$work/trusted" --shape "$key" --nodes 2 --format slurm --inspector
if [ "$rc" -eq 0 ] && ! grep -q INSPECTOR "$work/out" && grep -q "set by the job: no Inspector" "$work/err"; then pass; else fail "the job's own profiler"; fi
# Without env.inspector the ask is said and nothing else changes.
SLURM_JOB_ID=4242 run --profiles "$work/trusted" --shape "$key" --nodes 2 --format slurm --inspector
if [ "$rc" -eq 0 ] && ! grep -q INSPECTOR "$work/out" && grep -q "sets no env.inspector.plugin" "$work/err"; then pass; else fail "--inspector without a config"; fi
# A hostile path in the config is refused like any bad config: nothing printed, one line naming it.
printf 'env:\n  inspector:\n    plugin: "/opt/x.so; touch %s"\n    dump_dir: /d\n' "$canary" >"$work/bad-inspector.yaml"
config=$work/bad-inspector.yaml expect_refused "config with a hostile Inspector plugin path" --profiles "$work/trusted" --shape "$key" --nodes 2
grep -q "bad-inspector.yaml:3: env.inspector.plugin" "$work/err" && pass || fail "hostile plugin path named ($(cat "$work/err"))"

# In a Slurm script context the error also goes to syslog; it must still fail open.
SLURM_SCRIPT_CONTEXT=prolog_task run --profiles "$work/no-such-store" --shape "$key" --nodes 2 --format slurm
if [ "$rc" -eq 0 ] && [ ! -s "$work/out" ]; then pass; else fail "SLURM_SCRIPT_CONTEXT error: exit $rc"; fi

if [ -e "$canary" ]; then fail "the canary exists at the end"; else pass; fi
finish
