#!/usr/bin/env bash
# nccltune's env plugin loaded by a real NCCL (2.28.7 or newer, found at /usr/local/cuda or
# NCCLTUNE_NCCL_LIB), without a GPU: ncclGetUniqueId runs NCCL's init of its environment and its
# bootstrap network, which reads NCCL_SOCKET_IFNAME and NCCL_SOCKET_FAMILY. With
# NCCL_ENV_PLUGIN naming the plugin and a profile setting NCCL_SOCKET_IFNAME=lo, NCCL loads the
# plugin's table, says the variable was set by the environment and bootstraps on lo; a variable
# the process sets wins; a profile of another NCCL version serves nothing, with one line on stderr.
# Exits 77 (skipped) when no NCCL 2.28.7+ is here.
# usage: real_nccl_env_plugin_test.sh ENV_PLUGIN NCCL_UNIQUE_ID
plugin=$1 unique_id=$2
source "$(dirname "$0")/lib.sh"
skip_under_sanitizers "a real libnccl does not load the sanitizer runtimes the instrumented plugin needs"
nccl=${NCCLTUNE_NCCL_LIB:-/usr/local/cuda/lib64/libnccl.so.2}
for name in $(compgen -e | grep -e '^NCCL_' -e '^NCCLTUNE_' -e '^SLURM_' -e '^OMPI_' -e '^PMI_' \
  -e '^WORLD_SIZE$' -e '^LOCAL_WORLD_SIZE$'); do unset "$name"; done
version=$("$unique_id" "$nccl" 2>/dev/null | sed -n 's/^version //p')
if [ -z "$version" ] || [ "$version" -lt 22807 ]; then
  echo "SKIP: no NCCL 2.28.7 or newer at $nccl (version '${version:-none}'); set NCCLTUNE_NCCL_LIB"
  exit 77
fi
major=$((version / 10000)) minor=$((version / 100 % 100))

profile() {  # profile NCCL_VERSION: the profile of a one-rank job
  cat >"$work/profile.yaml" <<YAML
schema: nccltune/profile/v1
shape: {key: k, nodes: 1, gpus_per_node: 1, ranks: 1, nccl_version: "$1"}
env: {NCCL_SOCKET_IFNAME: lo, NCCL_SOCKET_FAMILY: AF_INET}
per_size: []
YAML
}
: >"$work/config.yaml"
run() {  # run NAME [VAR=VALUE...]: ncclGetUniqueId under the plugin; NCCL's lines in NAME.out
  local name=$1
  shift
  env NCCL_DEBUG=INFO NCCL_ENV_PLUGIN="$plugin" NCCLTUNE_CONFIG="$work/config.yaml" \
    NCCLTUNE_PROFILE="$work/profile.yaml" NCCLTUNE_NODES=1 NCCLTUNE_GPUS_PER_NODE=1 "$@" \
    timeout 60 "$unique_id" "$nccl" >"$work/$name.out" 2>"$work/$name.err"
  expect_equal "$?" 0 "$name: ncclGetUniqueId succeeds"
}

profile "$major.$minor.0"
run served
expect_in "$work/served.out" "ENV/Plugin: Using nccltune (v" "NCCL $version loads the plugin's table"
expect_in "$work/served.out" "NCCL_SOCKET_IFNAME set by environment to lo" "the profile's NCCL_SOCKET_IFNAME reaches NCCL"
expect_in "$work/served.out" "Bootstrap: Using lo:" "NCCL bootstraps on the profile's interface"

run own NCCL_SOCKET_IFNAME==lo  # "=lo": exactly lo, NCCL's syntax
expect_in "$work/own.out" "NCCL_SOCKET_IFNAME set by environment to =lo" "the process's own value wins"
expect_in "$work/own.out" "NCCL_SOCKET_FAMILY set by environment to AF_INET" "the profile still sets the rest"

profile 2.21.5
run other_version
expect_not_in "$work/other_version.out" "NCCL_SOCKET_IFNAME set by environment" "another NCCL version: nothing served"
expect_equal "$(grep -c "tuned for 2.21, this job loads $major.$minor" "$work/other_version.err" "$work/other_version.out" |
  awk -F: '{ n += $2 } END { print n }')" 1 "another NCCL version: one line says why"
finish
