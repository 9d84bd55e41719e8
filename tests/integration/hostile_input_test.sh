#!/usr/bin/env bash
# Every command that reads a file, handed what an attacker or a careless operator hands it: an
# empty file, binary garbage, a FIFO, a directory, /dev/zero, invalid UTF-8, a NUL byte, and a file
# one byte over the reader's cap. Each case must end within 20 s with the command's documented
# exit code and at most one line on stderr, and leave the inputs, and an output file it was asked
# to write, as they were.
# The NCCL env plugin meets the same inputs as its config, node state, store profile and named
# profile: NCCL's init goes on (init returns 0), nothing is served, at most two log lines.
# usage: hostile_input_test.sh NCCLTUNE NCCLTUNED NCCLTUNE_ENV FIXTURES ENV_PLUGIN ENV_PLUGIN_LOADER
nccltune=$1 nccltuned=$2 nccltune_env=$3 fixtures=$4 env_plugin=$5 env_loader=$6
source "$(dirname "$0")/lib.sh"
unset NCCLTUNE_CONFIG NCCLTUNE_PROFILE NCCLTUNE_PROFILES NCCLTUNE_NODE_STATE NCCLTUNE_DISABLE SLURM_JOB_NUM_NODES SLURM_GPUS_ON_NODE SLURM_NTASKS_PER_NODE SLURM_SCRIPT_CONTEXT

MiB=$((1 << 20))
kinds=(empty garbage fifo directory dev-zero bad-utf8 nul over-cap)

# make_input KIND VALID CAP: prints the path of a KIND input made from VALID (a good file of the
# reader's kind) for a reader that takes at most CAP bytes.
make_input() {
  local kind=$1 valid=$2 cap=$3 path
  path=$(mktemp -u "$work/inputs/$kind.XXXXXX")
  case $kind in
    empty) : >"$path" ;;
    garbage) { printf '\177ELF\2\1\1'; for i in $(seq 200); do printf '\0\377\023%d\200\303' "$i"; done; } >"$path" ;;
    fifo) mkfifo "$path" ;;
    directory) mkdir "$path" ;;
    dev-zero) path=/dev/zero ;;
    bad-utf8) { head -c 40 "$valid"; printf '\377\376\300'; tail -c +41 "$valid"; } >"$path" ;;
    nul) { head -c 40 "$valid"; printf '\0'; tail -c +41 "$valid"; } >"$path" ;;
    over-cap) cp "$valid" "$path" && truncate -s $((cap + 1)) "$path" ;;
  esac
  echo "$path"
}

# What is on disk under the given directories: names, types, sizes and contents' sums.
disk_state() {
  find "$@" -printf '%P %y %s\n' | sort
  find "$@" -type f -exec sha256sum {} + | sort
}

# case_row READER KIND WANT COMMAND...: COMMAND (with @ for the input's path) exits WANT within
# 20 s. A failure says one line on stderr and changes nothing on disk; input the command accepts
# (WANT 0) may write its output, and nothing else. WANT "0!" is a failure that exits 0 (env's
# fail-open).
case_row() {
  local reader=$1 kind=$2 want=$3 input failure=1
  shift 3
  case $want in
    0!) want=0 ;;
    0) failure=0 ;;
  esac
  input=$(make_input "$kind" "${valid[$reader]}" "${cap[$reader]}")
  local args=() arg watched=("$work/inputs")
  for arg in "$@"; do args+=("${arg//@/$input}"); done
  [ "$failure" -eq 1 ] && watched+=("$work/outputs")
  local before
  before=$(disk_state "${watched[@]}")
  timeout 20 "${args[@]}" >"$work/stdout" 2>"$work/stderr" </dev/null
  local got=$?
  local what="$reader, $kind input: ${args[*]#$work/}"
  if [ "$got" -eq 124 ]; then
    fail "$what: still running after 20 s"
  elif [ "$got" -ne "$want" ]; then
    fail "$what: exit $got, expected $want"
    sed 's/^/  | /' "$work/stderr" | head -3
  else
    pass
  fi
  [ "$failure" -eq 1 ] && expect_one_line "$work/stderr" "$what"
  if [ "$(disk_state "${watched[@]}")" == "$before" ]; then pass; else fail "$what: changed what is on disk"; fi
  if [ "$kind" = directory ]; then rmdir "$input"; elif [ "$kind" != dev-zero ]; then rm -f "$input"; fi
}

mkdir -p "$work/inputs" "$work/outputs"
dgx=$fixtures/nodes/dgx-h100
# A shape the store holds for 2 nodes: a config that reads serves it (exit 0, even --strict), one
# that does not is the error under test, not an empty store.
stored_shape=h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28
profile=$fixtures/profiles/h100-2n.yaml
echo "kept" >"$work/outputs/report.html"
printf 'env:\n  store: %s\n' "$fixtures/store" >"$work/config.yaml"
printf '# what every node of this cluster has\ngpus: 8\n' >"$work/expect.yaml"
# A whole `nvidia-smi -q` of a healthy node (the fixture's narrow and slow links at their maximum),
# so that check accepts what the reader repairs.
sed -e 's/: 8x$/: 16x/' -e 's/\(Current *\): 4$/\1: 5/' "$fixtures/nvidia-smi-q/dgx-h100-8gpu-full.txt" >"$work/nvidia-smi-q.txt"

declare -A valid cap
valid[profile]=$profile cap[profile]=$MiB
valid[journal]=$fixtures/report/store/journal.jsonl cap[journal]=$((256 * MiB))
valid[upgrade]=$fixtures/report/upgrade.json cap[upgrade]=$((16 * MiB))
valid[nccl-tests]=$fixtures/nccl-tests/all-reduce-2021-error-column.txt cap[nccl-tests]=$((64 * MiB))
valid[nvidia-smi]=$fixtures/nvidia-smi/dgx-h100-8gpu-10nic.txt cap[nvidia-smi]=$((16 * MiB))
valid[nvidia-smi-q]=$work/nvidia-smi-q.txt cap[nvidia-smi-q]=$((16 * MiB))
valid[hwloc]=$dgx/hwloc.xml cap[hwloc]=$((16 * MiB))
valid[expect]=$work/expect.yaml cap[expect]=$MiB
valid[config]=$work/config.yaml cap[config]=$MiB
valid[nccl-log]=$fixtures/nccl-info-logs/nccl-1405-roce-ipv6-completion-error-status12.txt cap[nccl-log]=$((64 * MiB))

# want READER KIND DEFAULT: the exit code the table below expects; most kinds fail with the
# command's code, a few are valid input (an empty config is every default; a reader that repairs
# invalid UTF-8 in tool output reads it).
declare -A exception=(
  [config/empty]=0 [expect/empty]=0 [journal/empty]=0
  [nvidia-smi/bad-utf8]=0 [nvidia-smi/nul]=0 [nccl-tests/bad-utf8]=0 [nccl-tests/nul]=0
  [nvidia-smi-q/bad-utf8]=0 [nvidia-smi-q/nul]=0
)
want() { echo "${exception[$1/$2]:-$3}"; }

for kind in "${kinds[@]}"; do
  case_row profile "$kind" "$(want profile "$kind" 2)" "$nccltune" show @
  case_row profile "$kind" "$(want profile "$kind" 2)" "$nccltune" diff "$profile" @
  case_row profile "$kind" "$(want profile "$kind" 2)" "$nccltune" report @ -o "$work/outputs/report.html"
  case_row journal "$kind" "$(want journal "$kind" 2)" "$nccltune" report "$profile" --journal @ -o "$work/outputs/report.html"
  case_row upgrade "$kind" "$(want upgrade "$kind" 2)" "$nccltune" report --upgrade @ -o "$work/outputs/report.html"
  case_row nccl-tests "$kind" "$(want nccl-tests "$kind" 2)" "$nccltune" import @
  # explain reads any text: what cannot be read exits 3 with one line; read content never does.
  case $kind in
    fifo | directory | dev-zero | over-cap) case_row nccl-log "$kind" 3 "$nccltune" explain @ ;;
    *)
      input=$(make_input "$kind" "${valid[nccl-log]}" "${cap[nccl-log]}")
      timeout 20 "$nccltune" explain "$input" --format json >"$work/stdout" 2>"$work/stderr" </dev/null
      got=$?
      if [ "$got" -eq 1 ] || [ "$got" -eq 2 ]; then pass; else fail "nccl-log, $kind input: explain exit $got, expected 1 or 2"; fi
      if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/stdout" 2>/dev/null; then pass; else fail "nccl-log, $kind input: explain JSON does not parse"; fi
      rm -f "$input"
      ;;
  esac
  case_row nvidia-smi "$kind" "$(want nvidia-smi "$kind" 1)" "$nccltune" topo --from nvidia-smi:@ --format json
  case_row nvidia-smi "$kind" "$(want nvidia-smi "$kind" 3)" "$nccltune" check --from nvidia-smi:@ --format json
  case_row nvidia-smi-q "$kind" "$(want nvidia-smi-q "$kind" 1)" "$nccltune" topo --from nvidia-smi-q:@ --format json
  case_row nvidia-smi-q "$kind" "$(want nvidia-smi-q "$kind" 3)" "$nccltune" check --from nvidia-smi-q:@ --format json
  case_row hwloc "$kind" "$(want hwloc "$kind" 1)" "$nccltune" topo --from hwloc:@
  case_row expect "$kind" "$(want expect "$kind" 3)" "$nccltune" check --from "$dgx" --expect @
  case_row config "$kind" "$(want config "$kind" 2)" "$nccltune" env --config @ --profiles "$fixtures/store" --nodes 2 --shape "$stored_shape" \
    --gpus-per-node 8 --strict
  case_row config "$kind" "$(want config "$kind" '0!')" "$nccltune_env" --config @ --profiles "$fixtures/store" --nodes 2 \
    --shape "$stored_shape" --gpus-per-node 8
  case_row config "$kind" "$(want config "$kind" 1)" "$nccltuned" --once --config @ --from "$dgx" \
    --runtime-dir "$work/outputs/run" --state-dir "$work/outputs/state" --metrics-dir "$work/outputs/metrics"
done

# env_plugin_case WHAT INPUT VAR=VALUE...: the env plugin, loaded as NCCL 2.28 loads it, for a job
# of 2 nodes x 8 GPUs, serves nothing and lets NCCL's init go on.
env_plugin_case() {
  local what=$1 input=$2
  shift 2
  local before
  before=$(disk_state "$work/inputs")
  timeout 20 env NCCLTUNE_NODES=2 NCCLTUNE_GPUS_PER_NODE=8 "$@" "$env_loader" "$env_plugin" 2 28 \
    NCCL_NVLS_ENABLE NCCL_ALGO >"$work/stdout" 2>"$work/stderr" </dev/null
  local got=$?
  if [ "$got" -eq 0 ]; then pass; else fail "env plugin, $what: exit $got (NCCL's init would fail), expected 0"; fi
  if grep -q '^NCCL_[A-Z_]*=' "$work/stdout"; then fail "env plugin, $what: served $(grep '^NCCL_' "$work/stdout" | head -1)"; else pass; fi
  local lines
  lines=$(grep -c -E '^(INFO|WARN) ' "$work/stdout")
  if [ "$lines" -ge 1 ] && [ "$lines" -le 2 ]; then pass; else fail "env plugin, $what: $lines log lines, expected 1 or 2"; fi
  if [ "$(disk_state "$work/inputs")" == "$before" ]; then pass; else fail "env plugin, $what: changed what is on disk"; fi
}
store=$work/env-store
key=h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28
mkdir -p "$store/$key" && chmod 755 "$store" "$store/$key"
printf 'env:\n  store: %s\n' "$store" >"$work/env-config.yaml"
for kind in "${kinds[@]}"; do
  input=$(make_input "$kind" "$fixtures/plugin/h100-2n.yaml" $((16 * MiB)))
  env_plugin_case "$kind profile (NCCLTUNE_PROFILE)" "$input" NCCLTUNE_PROFILE="$input"
  env_plugin_case "$kind config" "$input" NCCLTUNE_CONFIG="$input" NCCLTUNE_NODE_STATE="$fixtures/plugin/node.yaml"
  env_plugin_case "$kind node state" "$input" NCCLTUNE_CONFIG="$work/env-config.yaml" NCCLTUNE_NODE_STATE="$input"
  if [ "$kind" != dev-zero ]; then
    ln -sfn "$input" "$store/$key/2n.yaml"
    env_plugin_case "$kind store profile" "$input" NCCLTUNE_CONFIG="$work/env-config.yaml" \
      NCCLTUNE_NODE_STATE="$fixtures/plugin/node.yaml"
    rm -f "$store/$key/2n.yaml"
  fi
  if [ "$kind" = directory ]; then rmdir "$input"; elif [ "$kind" != dev-zero ]; then rm -f "$input"; fi
done
# A store others may write to: refused, whatever it holds.
cp "$fixtures/plugin/h100-2n.yaml" "$store/$key/2n.yaml" && chmod 644 "$store/$key/2n.yaml" && chmod 777 "$store"
env_plugin_case "a store writable by all" "$store" NCCLTUNE_CONFIG="$work/env-config.yaml" \
  NCCLTUNE_NODE_STATE="$fixtures/plugin/node.yaml"
chmod 755 "$store"

# Profiles `show` refuses are served by no reader: one cut short (the first 3,000 bytes of a
# profile tune wrote, torn inside a section the lean reader skips), one with a misspelled
# algorithm (NCCL_ALGO: "Rign"), one with a variable NCCL does not read (NCCL_MIN_NCHANELS). show
# exits 2 naming the file; env and nccltune-env export nothing and say one line why (env --strict:
# exit 2); the env plugin serves nothing, from the store or named.
: >"$work/empty-config.yaml"
for bad in torn misspelled-algo unknown-variable; do
  refused=$work/refused-$bad
  mkdir -p "$refused/$stored_shape"
  cp "$fixtures/profiles/refused/$bad-2n.yaml" "$refused/$stored_shape/2n.yaml"
  chmod 755 "$refused" "$refused/$stored_shape" && chmod 644 "$refused/$stored_shape/2n.yaml"
  timeout 20 "$nccltune" show "$refused/$stored_shape/2n.yaml" >"$work/stdout" 2>"$work/stderr" </dev/null
  got=$?
  if [ "$got" -eq 2 ] && grep -q "2n.yaml:[0-9]*: " "$work/stderr"; then pass; else fail "show, $bad profile: exit $got, $(head -1 "$work/stderr")"; fi
  expect_one_line "$work/stderr" "show, $bad profile"
  for strict in "" --strict; do
    for reader in "$nccltune env" "$nccltune_env"; do
      [ -n "$strict" ] && [ "$reader" = "$nccltune_env" ] && continue
      # shellcheck disable=SC2086 # $reader is the command and its subcommand
      timeout 20 $reader --config "$work/empty-config.yaml" --profiles "$refused" --shape "$stored_shape" \
        --nodes 2 --gpus-per-node 8 $strict >"$work/stdout" 2>"$work/stderr" </dev/null
      got=$?
      want=0
      [ -n "$strict" ] && want=2
      what="${reader##*/} $strict, $bad profile"
      if [ "$got" -eq "$want" ]; then pass; else fail "$what: exit $got, expected $want"; fi
      if grep -q 'NCCL_' "$work/stdout"; then fail "$what: served $(grep NCCL_ "$work/stdout" | head -1)"; else pass; fi
      expect_one_line "$work/stderr" "$what"
      if grep -q "2n.yaml:[0-9]*: " "$work/stderr"; then pass; else fail "$what: the line names no file and line: $(head -1 "$work/stderr")"; fi
    done
  done
  printf 'env:\n  store: %s\n' "$refused" >"$work/refused-config.yaml"
  env_plugin_case "$bad store profile" "$refused" NCCLTUNE_CONFIG="$work/refused-config.yaml" \
    NCCLTUNE_NODE_STATE="$fixtures/plugin/node.yaml"
  env_plugin_case "$bad named profile" "$refused" NCCLTUNE_PROFILE="$refused/$stored_shape/2n.yaml"
done

# Node facts read from a snapshot's sysfs and proc copies (a RoCE port's GID entry, a netdev's MTU,
# the kernel release), each replaced by every hostile kind: the attribute reads as absent or as
# unknown with a note, and check still answers with the warnings these nodes have anyway (exit 1),
# nothing on stderr, nothing changed on disk.
cp -r "$fixtures/nodes/pcie-4gpu" "$work/roce-snap"
cp -r "$fixtures/nodes/dgx-h100-no-peermem" "$work/gdr-snap"
for attribute in roce-snap/sysfs/class/infiniband/mlx5_0/ports/1/gids/3 roce-snap/sysfs/class/net/ens1f0np0/mtu \
  gdr-snap/proc/sys/kernel/osrelease; do
  snapshot=$work/${attribute%%/*}
  good=$work/inputs/good-attribute
  cp "$work/$attribute" "$good"
  for kind in "${kinds[@]}"; do
    input=$(make_input "$kind" "$good" $((64 << 10)))
    ln -sfn "$input" "$work/$attribute"
    before=$(disk_state "$work/inputs" "$snapshot")
    timeout 20 "$nccltune" check --from "$snapshot" >"$work/stdout" 2>"$work/stderr" </dev/null
    got=$?
    what="$attribute, $kind input: check --from ${snapshot#"$work"/}"
    if [ "$got" -eq 1 ]; then pass; else fail "$what: exit $got, expected 1"; sed 's/^/  | /' "$work/stderr" | head -3; fi
    if [ -s "$work/stderr" ]; then fail "$what: said something on stderr"; else pass; fi
    if [ "$(disk_state "$work/inputs" "$snapshot")" == "$before" ]; then pass; else fail "$what: changed what is on disk"; fi
    if [ "$kind" = directory ]; then rmdir "$input"; elif [ "$kind" != dev-zero ]; then rm -f "$input"; fi
  done
  rm -f "$work/$attribute" && mv "$good" "$work/$attribute"
done

# Output onto what is not a regular file (a FIFO, a symlink, a device node): refused with one line,
# and the target, and what a symlink points to, left as they were. As root this once replaced
# /dev/full; here the device is a copy of /dev/null made in the scratch directory.
echo "kept" >"$work/outputs/report.html"
mkfifo "$work/outputs/fifo.html"
ln -s "$work/outputs/report.html" "$work/outputs/link.html"
targets=(fifo.html link.html)
if [ "$(id -u)" -eq 0 ] && mknod "$work/outputs/null.html" c 1 3; then targets+=(null.html); fi
for target in "${targets[@]}"; do
  before=$(disk_state "$work/outputs")
  expect_exit 2 "report -o $target" -- timeout 20 "$nccltune" report "$profile" -o "$work/outputs/$target"
  expect_one_line "$work/err" "report -o $target"
  expect_in "$work/err" "not a regular file: refusing to replace it" "report -o $target says why"
  expect_exit 2 "import --json $target" -- timeout 20 "$nccltune" import "${valid[nccl-tests]}" --json "$work/outputs/$target"
  expect_in "$work/err" "$target: is a" "import --json $target says what stands there"  # after the log's notes
  if [ "$(disk_state "$work/outputs")" == "$before" ]; then pass; else fail "-o $target: changed what is on disk"; fi
done
[ -p "$work/outputs/fifo.html" ] && [ -L "$work/outputs/link.html" ] && [ "$(cat "$work/outputs/report.html")" = kept ] && pass ||
  fail "the FIFO, the symlink or what it points to was replaced"
finish
