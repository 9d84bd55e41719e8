#!/usr/bin/env bash
# nccltune's two entry points on a fresh Debian 12 machine:
#   ./run.sh        install missing Debian packages, build into build/, run the main job
#   ./run.sh test   the same set-up, then every test through ctest, the tests again in one
#                   instrumented build (sanitizers) and the fuzz targets from that build
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
# Only the tests need these: a one-node Slurm, systemd-analyze for the unit, a headless browser,
# clang-14 and its runtime (libFuzzer, sanitizers) for the fuzz targets, PyYAML for the manifest check,
# dpkg-dev and file for the Debian package (cpack reads Depends: with dpkg-shlibdeps).
test_packages=(slurm-wlm munge systemd chromium clang-14 libclang-rt-14-dev python3-yaml dpkg-dev file)
[ "$mode" = test ] && packages+=("${test_packages[@]}")

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

# Optimized, with line tables for backtraces (-g1: a third less compile time than full -g).
build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNCCLTUNE_WERROR=ON \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" >/dev/null
  cmake --build build -j "$(nproc)"
}

install_missing_packages
build

if [ "$mode" = test ]; then
  # Three suites, each run even when one before it failed; the exit status is 1 when any failed.
  # 1. every test in build/ but the unit tests; 2. the unit tests and some front-end tests in one
  # instrumented clang build (ASan + UBSan + libFuzzer coverage, build-check/): every unit test
  # runs once, where it checks the most; 3. every libFuzzer target 10 s from its seed corpus,
  # from that same build. Each stage's time is printed (README, "Tests").
  failed=()
  stage() {  # stage NAME COMMAND...: runs it, prints how long it took, records a failure
    local name=$1 start=$SECONDS
    shift
    "$@" || failed+=("$name")
    echo "run.sh test: $name took $((SECONDS - start)) s"
  }
  echo "run.sh test: setup and build took $SECONDS s"
  stage ctest ctest --test-dir build -LE '^unit$' --output-on-failure -j "$(nproc)"
  stage sanitizers tests/sanitizers/run_sanitized_tests.sh build-check . "$(nproc)"
  stage fuzz env NCCLTUNE_FUZZ_JOBS="$(nproc)" NCCLTUNE_FUZZ_BUILD_JOBS="$(nproc)" tests/fuzz/run.sh 10 build-check
  if [ ${#failed[@]} -gt 0 ]; then
    echo "run.sh test: FAILED: ${failed[*]} (after $SECONDS s)" >&2
    exit 1
  fi
  echo "run.sh test: all passed (ctest, sanitizers, fuzz) in $SECONDS s"
  exit 0
fi

mpirun_as() {  # mpirun, allowed to run as root (containers, CI)
  if [ "$(id -u)" -eq 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --allow-run-as-root "$@"
  else
    mpirun "$@"
  fi
}

echo "== nccltune topo (this machine)"
build/nccltune topo
echo
echo "== nccltune check (this machine)"
status=0
build/nccltune check || status=$?
echo "(check exit status $status: 0 pass, 1 warnings, 2 failures)"
echo

mkdir -p out
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -gt 0 ]; then
  echo "== nccltune tune on this node: $gpus GPUs, one rank each (profile and summary in out/)"
  mpirun_as -np "$gpus" build/nccltune tune --out out --journal out/journal.jsonl | tee out/summary.txt
else
  echo "== DEMO: this machine has no NVIDIA GPU, so nccltune tunes a simulated cluster instead:"
  echo "   the fake GPU stack (tests/fake-gpu) with an H100 model (configs/demo/dgx-h100-model.yaml),"
  echo "   2 emulated nodes of 2 GPUs on this machine, each read from a 2-GPU H100 snapshot"
  echo "   (configs/demo/vm-h100-2gpu-node: a VM with 2 NVSwitch-connected H100 SXM GPUs and their 2 400G NICs)."
  echo "   The numbers come from the model, not from hardware."
  echo
  echo "== nccltune fleet (DEMO): first, what holds a cluster back. 8 emulated nodes of 2 simulated GPUs,"
  echo "   each alone, then every pair (configs/demo/fleet-model.yaml: node 3's NIC is slow, and the"
  echo "   cable between nodes 1 and 5 is bad). Exit 2 below means: it named them."
  status=0
  NCCLTUNE_EMULATE_NODES=8 NCCLTUNE_FAKE_MODEL=configs/demo/fleet-model.yaml \
    mpirun_as --oversubscribe -np 16 build/nccltune fleet --rounds all --bytes 8M --out out/fleet.json \
      --cuda-lib build/tests/fake-gpu/libfakecuda.so --nccl-lib build/tests/fake-gpu/libfakenccl.so \
      2>out/fleet.err || status=$?
  [ "$status" -le 2 ] || cat out/fleet.err >&2  # (exit 1-2 only adds mpirun's box to what is above)
  echo "(fleet exit status $status: 0 clean, 1 warnings, 2 a suspect or a failed node)"
  build/nccltune report --fleet out/fleet.json -o out/fleet.html \
    --title "DEMO: a fleet survey on the fake GPU stack (8 emulated nodes; the slow node and link are in the model)" >/dev/null
  echo "fleet heat map: $(readlink -f out/fleet.html)"
  echo
  echo "== nccltune tune (DEMO): the tune itself, on 2 emulated nodes"
  rm -f out/journal.jsonl
  NCCLTUNE_EMULATE_NODES=2 NCCLTUNE_FAKE_MODEL=configs/demo/dgx-h100-model.yaml \
    mpirun_as --oversubscribe -np 4 build/nccltune tune --out out --journal out/journal.jsonl \
      --cuda-lib build/tests/fake-gpu/libfakecuda.so --nccl-lib build/tests/fake-gpu/libfakenccl.so \
      --from configs/demo/vm-h100-2gpu-node --max-bytes 8M --max-bytes-per-size 32M --budget 10m --comms world | tee out/summary.txt
fi

# The report of the profile tune just wrote (the newest under out/), with the other candidates
# from the journal and a diagram of the node.
profile=$(ls -t out/*/[0-9]*n.yaml 2>/dev/null | head -n 1 || true)
if [ -z "$profile" ]; then
  echo "run.sh: tune wrote no profile under out/, so there is no report" >&2
  exit 1
fi
if [ "${gpus:-0}" -gt 0 ]; then
  rm -rf out/node-snapshot
  report_args=()  # a report without the diagram rather than none
  build/nccltune topo --capture out/node-snapshot >/dev/null && report_args=(--topology out/node-snapshot)
else
  # This machine has no GPUs to draw: the diagram shows the generated 2-GPU snapshot the demo's
  # nodes were read from (the test fixture configs/demo/vm-h100-2gpu-node links to), and the
  # banner says so.
  report_args=(--topology configs/demo/vm-h100-2gpu-node
    --title "DEMO: measured on the fake GPU stack (2 emulated nodes, 2 simulated GPUs each, numbers from a model). The node diagram is the generated 2-GPU H100 snapshot each emulated node was read from (tests/fixtures/nodes/vm-h100-2gpu, host vm-h100x2-01), not this machine.")
fi
# The run ends with what it found (report --summary, at most 10 lines): the fleet's suspects (the
# demo's survey, also a section of the report), what ships, the gain with and without the tuner
# plugin per collective, and the HTML pages.
if [ -s out/fleet.json ] && [ "${gpus:-0}" -eq 0 ]; then
  report_args+=(--fleet out/fleet.json --fleet-page out/fleet.html)
fi

# What jobs get (DEMO): a training job's collectives under NVIDIA's NCCL Inspector, held against
# the profile. Inspector is NCCL's (its source tree), not nccltune's: built from NCCLTUNE_NCCL_SRC
# against the fake stack's stand-in libcudart, as tests/integration/inspector_test.sh does.
observed_args=()
if [ "${gpus:-0}" -eq 0 ]; then
  echo
  inspector_src=${NCCLTUNE_NCCL_SRC:+$NCCLTUNE_NCCL_SRC/plugins/profiler/inspector}
  if [ -z "$inspector_src" ] || [ ! -f "$inspector_src/Makefile" ] || [ ! -f /usr/local/cuda/include/cuda.h ]; then
    echo "== nccltune observe (DEMO): skipped; to see it, give an NCCL source tree (2.29 or later, with CUDA's headers in /usr/local/cuda): git clone https://github.com/NVIDIA/nccl && NCCLTUNE_NCCL_SRC=\$PWD/nccl ./run.sh"
  else
    echo "== nccltune observe (DEMO): fake_train (2 emulated nodes x 2, 12 steps of a 4 MiB all_reduce) with the"
    echo "   profile and the tuner plugin, under NVIDIA's Inspector built from $NCCLTUNE_NCCL_SRC; then observe"
    rm -rf out/inspector out/inspector-lib out/observed
    mkdir -p out/inspector-lib out/observed
    cp -r "$inspector_src" out/inspector
    ln -s "$PWD/build/tests/fake-gpu/libfakecuda.so" out/inspector-lib/libcuda.so.1
    if make -C out/inspector -j "$(nproc)" CUDA_HOME=/usr/local/cuda CUDA_LIB="$PWD/build/tests/fake-gpu/cudart" \
        >out/inspector-build.log 2>&1; then
      # The profile's env, as a prolog would give the job, with the tuner plugin.
      mapfile -t job_env < <(sed -n '/^env:/,/^[a-z]/s/^  \(NCCL_[A-Z0-9_]*\): "\?\([^"]*\)"\?$/\1=\2/p' "$profile")
      (for setting in "${job_env[@]}"; do export "${setting?}"; done
      LD_LIBRARY_PATH=$PWD/build/tests/fake-gpu/cudart:$PWD/out/inspector-lib NCCLTUNE_EMULATE_NODES=2 \
        NCCLTUNE_FAKE_MODEL=configs/demo/dgx-h100-model.yaml NCCL_TUNER_PLUGIN=$PWD/build/libnccl-tuner-nccltune.so \
        NCCLTUNE_PROFILE=$profile NCCL_PROFILER_PLUGIN=$PWD/out/inspector/libnccl-profiler-inspector.so \
        NCCL_INSPECTOR_ENABLE=1 NCCL_INSPECTOR_DUMP_DIR=$PWD/out/observed NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=100000 \
        mpirun_as --oversubscribe -x LD_LIBRARY_PATH -np 4 build/tests/fake-gpu/fake_train --comms world --steps 12 \
          --bytes 4M --compute-us 200 --hold-ms 500 --nccl-lib build/tests/fake-gpu/libfakenccl.so \
          --cuda-lib build/tests/fake-gpu/libfakecuda.so >out/fake_train.log 2>&1) || true
      status=0
      build/nccltune observe out/observed --profile "$profile" --out out/observed.json --format json || status=$?
      build/nccltune observe out/observed --profile "$profile" | sed -n '/^communicator/,$p' | head -n 8
      echo "(observe exit status $status: 0 as tuned, 1 below tuned, not served or unmeasured, 2 a straggler)"
      [ -s out/observed.json ] && observed_args=(--observed out/observed.json)
    else
      echo "run.sh: Inspector did not build (out/inspector-build.log); observe skipped" >&2
    fi
  fi
fi
echo
echo "== What it found (the report's overview, out/report.html)"
build/nccltune report "$profile" --journal out/journal.jsonl "${report_args[@]}" "${observed_args[@]}" -o out/report.html --summary
