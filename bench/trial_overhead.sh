#!/usr/bin/env bash
# The overhead of one trial (spawn the workers, bootstrap the unique id, init NCCL, one tiny
# size, teardown) with the fake GPU stack and 4 ranks. Target (issue 3, README): under 50 ms.
#
#   1. `mpirun -np 4 true`: the launcher alone.
#   2. `mpirun -np 4 nccltune bench -b 8 -e 8 -n 1 -w 0 -c 0`: a whole job with one trial
#      (launch + MPI_Init + one trial + MPI_Finalize).
#   3. `nccltune bench ... --repeat N`: N trials back to back inside one MPI job, each one's
#      wall time on rank 0 (from spawning the workers to the ranks' agreement): the overhead
#      proper, as the tuner pays it. Also at 1 and 2 ranks, to show how it scales.
#
# The fake does the work of NCCL on the CPU: with fewer cores than 2 x ranks (a rank and its
# worker each), the numbers are CPU-bound and say more about the machine than about nccltune.
# `--short` (CI) runs each measurement a few times only, to prove the script works.
# usage: bench/trial_overhead.sh [--short] [NCCLTUNE] [LIBFAKECUDA] [LIBFAKENCCL] [FIXTURES]
set -euo pipefail
runs=10 repeat=50
if [ "${1:-}" = --short ]; then runs=2 repeat=5; shift; fi
here=$(cd "$(dirname "$0")/.." && pwd)
nccltune=${1:-$here/build/nccltune}
fakecuda=${2:-$here/build/tests/fake-gpu/libfakecuda.so}
fakenccl=${3:-$here/build/tests/fake-gpu/libfakenccl.so}
fixtures=${4:-$here/tests/fixtures}
ranks=4
target_ms=50

for name in $(compgen -e | grep '^NCCL_' || true); do unset "$name"; done
unset NCCLTUNE_EMULATE_NODES
export NCCLTUNE_FAKE_MODEL=$fixtures/models/exact.yaml
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi() { timeout -k 5 120 mpirun --oversubscribe -np "$@"; }
trial_args=(bench -b 8 -e 8 -n 1 -w 0 -c 0 --cuda-lib "$fakecuda" --nccl-lib "$fakenccl" --init-timeout 20 --size-timeout 20)

# median_ms LABEL COMMAND...: runs COMMAND $runs times, prints the median and max in ms; the
# median in $median_us.
median_ms() {
  local label=$1
  shift
  local times=() start end
  for _ in $(seq "$runs"); do
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "$label: failed: $*" >&2; "$@" >&2 || true; exit 1; }
    end=$(date +%s%N)
    times+=($(((end - start) / 1000)))
  done
  median_us=$(printf '%s\n' "${times[@]}" | sort -n | awk -v n="$runs" '{ t[NR] = $1 } END { print t[int((n + 1) / 2)] }')
  printf '%s\n' "${times[@]}" | sort -n | awk -v label="$label" -v n="$runs" '
    { t[NR] = $1 } END { printf "%-58s median %7.1f ms  max %7.1f ms  (%d runs)\n", label, t[int((n + 1) / 2)] / 1000, t[n] / 1000, n }'
}

# repeated NP: N trials in one job at NP ranks; prints rank 0's summary, the median in $trial_ms.
repeated() {
  local np=$1 out
  out=$(mpi "$np" "$nccltune" "${trial_args[@]}" --repeat "$repeat" 2>&1) || { echo "$out" >&2; exit 1; }
  local summary
  summary=$(echo "$out" | grep '^# Trial wall time ' || true)
  [ -n "$summary" ] || { echo "$out" >&2; echo "no '# Trial wall time' line: does bench know --repeat?" >&2; exit 1; }
  trial_ms=$(echo "$summary" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
  printf '%-58s %s\n' "one trial, $np rank(s), inside one job:" "${summary#*: }"
}

echo "# trial overhead: fake GPU stack, $(nproc) CPU cores, $(mpirun --version 2>/dev/null | head -1)"
median_ms "mpirun -np $ranks true (launcher only)" mpi "$ranks" true
launch_us=$median_us
median_ms "mpirun -np $ranks nccltune bench (one trial, whole job)" mpi "$ranks" "$nccltune" "${trial_args[@]}"
job_us=$median_us
awk -v a="$job_us" -v b="$launch_us" 'BEGIN { printf "%-58s %7.1f ms\n", "  difference (MPI_Init + one trial + MPI_Finalize):", (a - b) / 1000 }'
for np in 1 2; do repeated "$np"; done
repeated "$ranks"
verdict=$(awk -v t="$trial_ms" -v target="$target_ms" 'BEGIN { print (t < target) ? "met" : "missed" }')
echo "per-trial overhead at $ranks ranks: median $trial_ms ms (target under $target_ms ms: $verdict)"
