#!/usr/bin/env bash
# Measures `nccltune env` and the lean `nccltune-env` as a prolog runs them, against a store of
# 500 profiles (50 node types x 10 node counts), next to `cat` of one profile and
# `nccltune --version` (the full binary's start-up alone). Target (README): median under 5 ms.
# `--short` runs 5 rounds (CI proves it works).
# usage: bench/env_bench.sh [--short] [NCCLTUNE] [FIXTURES]   (nccltune-env is taken from beside NCCLTUNE)
set -euo pipefail
if [ -n "${NCCLTUNE_SANITIZE:-}" ]; then  # ctest sets it in a sanitizer build; 77 is its skip
  echo "env_bench: skipped in a sanitizer build ($NCCLTUNE_SANITIZE): start-up times there are the sanitizers', not nccltune env's"
  exit 77
fi
runs=300
if [ "${1:-}" = --short ]; then runs=5; shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
nccltune=${1:-$here/build/nccltune}
fixtures=${2:-$here/tests/fixtures}
lean=$(dirname "$nccltune")/nccltune-env
work=$(mktemp -d)
: >"$work/empty.yaml"  # a named config must exist; empty: every default
trap 'rm -rf "$work"' EXIT
umask 022
chmod 755 "$work"

# The store: every profile a copy of a profile tune wrote (12 KB: four collectives' results and
# NCCL's account of the trials) under its own key and count.
template=$fixtures/report/collectives/2n.yaml
store=$work/store
for type in $(seq 1 50); do
  key="gpu$type-80gb.8gpu.nvswitch.8xib400.pix.nccl2.28"
  mkdir -p "$store/$key"
  for nodes in 1 2 4 8 16 32 64 128 256 512; do
    sed -e "s/key: \"[^\"]*\"/key: \"$key\"/" -e "s/^  nodes: 2\$/  nodes: $nodes/" -e "s/^  ranks: 16\$/  ranks: $((nodes * 8))/" \
      "$template" >"$store/$key/${nodes}n.yaml"
  done
done
key=gpu25-80gb.8gpu.nvswitch.8xib400.pix.nccl2.28
count=$(find "$store" -name '*n.yaml' | wc -l)
printf 'schema: nccltune/node/v1\nhost: bench\nnode_type: {key: "%s", gpus: 8}\n' "$key" >"$work/node.yaml"
# The commands must work before they are timed.
for binary in "$nccltune env" "$lean"; do
  check=$($binary --config "$work/empty.yaml" --profiles "$store" --shape "$key" --nodes 16 --format slurm)
  [ -n "$check" ] || { echo "env_bench: $binary printed nothing" >&2; exit 1; }
done

# The commands, timed round-robin (one run of each in turn, after a warm-up run of each) so that
# load from elsewhere on the machine falls on all of them alike; medians in us from bash's clock
# ($EPOCHREALTIME), so no extra process is measured.
args=(--config "$work/empty.yaml" --profiles "$store" --format slurm)
labels=(
  "/bin/true (this machine's cost of starting a process)"
  "cat of one profile"
  "nccltune --version (full binary: start-up only)"
  "nccltune env --shape, exact node count"
  "nccltune-env --shape, exact node count"
  "nccltune-env --shape, nearest node count (directory scan)"
  "nccltune-env, key from node.yaml"
)
run_command() {
  case $1 in
    0) /bin/true ;;
    1) cat "$store/$key/16n.yaml" ;;
    2) "$nccltune" --version ;;
    3) "$nccltune" env "${args[@]}" --shape "$key" --nodes 16 ;;
    4) "$lean" "${args[@]}" --shape "$key" --nodes 16 ;;
    5) "$lean" "${args[@]}" --shape "$key" --nodes 24 ;;
    6) "$lean" "${args[@]}" --node-state "$work/node.yaml" --nodes 16 ;;
  esac >/dev/null 2>&1
}
for i in "${!labels[@]}"; do run_command "$i"; : >"$work/times.$i"; done
for _ in $(seq "$runs"); do
  for i in "${!labels[@]}"; do
    start=${EPOCHREALTIME/./}
    run_command "$i"
    end=${EPOCHREALTIME/./}
    echo $((end - start)) >>"$work/times.$i"
  done
done
median_us() { sort -n "$work/times.$1" | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }'; }

echo "store: $count profiles; every env run prints the slurm format; $runs rounds"
for i in "${!labels[@]}"; do
  awk -v label="${labels[$i]}" -v us="$(median_us "$i")" 'BEGIN { printf "%-58s median %7.2f ms\n", label, us / 1000 }'
done
awk -v cat="$(median_us 1)" -v full="$(median_us 3)" -v lean="$(median_us 4)" 'BEGIN {
  printf "ratio to cat: nccltune-env %.1fx, nccltune env %.1fx\n", lean / cat, full / cat }'
