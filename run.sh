#!/usr/bin/env bash
# nccltune's two entry points on a fresh Debian 12 machine:
#   ./run.sh        install missing Debian packages, build into build/, run the main job
#   ./run.sh test   the same set-up, then every test through ctest
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"

mode=${1:-main}
case "$mode" in
  main|test) ;;
  *) echo "usage: ./run.sh [test]" >&2; exit 2 ;;
esac

packages=(
  cmake g++ make pkg-config
  libhwloc-dev hwloc libibverbs-dev ibverbs-providers
  libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libopenmpi-dev openmpi-bin libsystemd-dev
)

install_missing_packages() {
  local missing=()
  for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "run.sh: missing Debian packages: ${missing[*]}" >&2
    echo "run.sh: install them as root (sudo apt-get install ${missing[*]}) or run ./run.sh as root" >&2
    exit 1
  fi
  echo "run.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNCCLTUNE_WERROR=ON >/dev/null
  cmake --build build -j "$(nproc)"
}

install_missing_packages
build

if [ "$mode" = test ]; then
  exec ctest --test-dir build --output-on-failure -j "$(nproc)"
fi

echo "== nccltune topo (this machine)"
build/nccltune topo
echo
echo "== nccltune check (this machine)"
status=0
build/nccltune check || status=$?
echo "(check exit status $status: 0 pass, 1 warnings, 2 failures)"
