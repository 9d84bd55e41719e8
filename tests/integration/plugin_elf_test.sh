#!/usr/bin/env bash
# Both NCCL plugins (tuner and env) as a framework container loads them: each needs only the C
# library (no yaml-cpp, libstdc++ or libgcc, which containers may not have or have older), asks
# for GLIBC_2.34 at most (Ubuntu 22.04 and RHEL 9, the bases of today's framework containers),
# exports its plugin tables only, and loads and works in a process that cannot reach yaml-cpp's
# library.
# usage: plugin_elf_test.sh TUNER_PLUGIN.so PLUGIN_LOADER FIXTURES ENV_PLUGIN.so ENV_PLUGIN_LOADER
plugin=$1 loader=$2 fixtures=$3 env_plugin=$4 env_loader=$5
source "$(dirname "$0")/lib.sh"
skip_under_sanitizers "the plugin needs the sanitizer runtimes there, so its NEEDED list and symbol versions are not the shipped ones"

# check_elf PLUGIN EXPORTS: the ELF facts above, EXPORTS the sorted exported names.
check_elf() {
  local so=$1 exports=$2 name
  name=$(basename "$so")
  local needed unexpected newest exported imported_freeres
  needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
  unexpected=$(tr ' ' '\n' <<<"$needed" | grep -vE '^$|^(libc|libm|libdl|libpthread|librt)\.so\.[0-9]+$|^ld-linux' || true)
  expect_equal "$unexpected" "" "$name: NEEDED holds only the C library family (all: $needed)"
  newest=$(objdump -T "$so" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
  if [ -n "$newest" ] && printf '%s\n%s\n' "$newest" GLIBC_2.34 | sort -CV; then
    pass
  else
    fail "$name: highest GLIBC version required is '$newest', more than GLIBC_2.34: $(objdump -T "$so" | grep -oE 'GLIBC_2\.3[5-9][^ ]* +[^ ]+$' | tr '\n' ' ')"
  fi
  exported=$(objdump -T "$so" | awk '$2 == "g" && $4 != "*UND*" {print $NF}' | sort | tr '\n' ' ')
  expect_equal "$exported" "$exports" "$name: only its plugin tables are exported"
  # The unload hook frees the plugin's own libstdc++ exception pool: bound to the copy linked in,
  # never to the host's libstdc++ (freeing the host's pool would leave the host a dangling pointer).
  imported_freeres=$(objdump -T "$so" | awk '$4 == "*UND*" && $NF ~ /__freeres/ {print $NF}')
  expect_equal "$imported_freeres" "" "$name: __gnu_cxx::__freeres is the plugin's own, not imported"
}
check_elf "$plugin" "ncclTunerPlugin_v4 ncclTunerPlugin_v5 ncclTunerPlugin_v6 ncclTunerPlugin_v7 nccltuneControl_v2 "
check_elf "$env_plugin" "ncclEnvPlugin_v1 ncclEnvPlugin_v2 "

# A process with no way to reach yaml-cpp: its library replaced by an empty file in a private
# mount namespace (root; where unshare is not allowed, LD_LIBRARY_PATH and the plugin's own
# NEEDED list are all there is to check). The loader links only the C library.
yaml_cpp=$(ldconfig -p | sed -n 's/.*libyaml-cpp.so.[0-9.]* .*=> //p' | head -n 1)
load() {  # load PROFILE [LOADER ARGS...]: the loader's output in $work/load.out, its status in $status
  local profile=$1
  shift
  [ $# -gt 0 ] || set -- "$loader" "$plugin"
  if [ -n "$yaml_cpp" ] && [ "$(id -u)" -eq 0 ] && unshare --mount true 2>/dev/null; then
    NCCLTUNE_PROFILE=$profile unshare --mount sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' _ \
      "$(readlink -f "$yaml_cpp")" "$@" >"$work/load.out" 2>&1
    status=$?
    hidden="with $yaml_cpp hidden"
  else
    NCCLTUNE_PROFILE=$profile LD_LIBRARY_PATH= "$@" >"$work/load.out" 2>&1
    status=$?
    hidden="(yaml-cpp not hidden: no mount namespace here)"
  fi
}
load "$fixtures/plugin/h100-2n.yaml"
expect_equal "$status" 0 "the plugin loads and answers $hidden"
expect_in "$work/load.out" "using $fixtures/plugin/h100-2n.yaml" "it read the profile (its YAML) $hidden"
expect_in "$work/load.out" "cell 0 0" "1 KiB all_reduce: the profile's Tree/LL cell marked"
# A profile yaml-cpp refuses: its exception is thrown and caught inside the plugin (the unwinder
# linked in, with its frame lookup of glibc_compat.c), one warning, NCCL's choices kept.
load "$fixtures/plugin/broken.yaml"
expect_equal "$status" 0 "a broken profile: the plugin still loads and answers $hidden"
expect_in "$work/load.out" "broken.yaml:" "a broken profile: one warning naming the file"
expect_not_in "$work/load.out" "cell " "a broken profile: no cell marked"

# The env plugin, the same way, for a job of the profile's shape (2 nodes x 8 GPUs).
: >"$work/empty-config.yaml"
export NCCLTUNE_NODES=2 NCCLTUNE_GPUS_PER_NODE=8 NCCLTUNE_CONFIG=$work/empty-config.yaml
load "$fixtures/plugin/h100-2n.yaml" "$env_loader" "$env_plugin" 2 28 NCCL_NVLS_ENABLE NCCL_ALGO
expect_equal "$status" 0 "the env plugin loads and answers $hidden"
expect_in "$work/load.out" "NCCL_NVLS_ENABLE=1" "the env plugin serves the profile's env $hidden"
expect_in "$work/load.out" "NCCL_ALGO unset" "the env plugin serves nothing else"
load "$fixtures/plugin/broken.yaml" "$env_loader" "$env_plugin" 2 28 NCCL_NVLS_ENABLE
expect_equal "$status" 0 "a broken profile: the env plugin's init still succeeds $hidden"
expect_in "$work/load.out" "WARN ENV/nccltune: $fixtures/plugin/broken.yaml:" "a broken profile: one warning naming the file"
expect_in "$work/load.out" "NCCL_NVLS_ENABLE unset" "a broken profile: nothing served"
finish
