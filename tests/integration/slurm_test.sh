#!/usr/bin/env bash
# configs/slurm/ against a real one-node Slurm: munged, slurmctld and slurmd started here on free
# ports with all their state in a temporary directory, our TaskProlog, Prolog and Epilog in
# slurm.conf, and two fake GPUs (GRES) so jobs have a GPU count. Jobs are launched with srun and
# their environment checked: a job whose shape has a profile gets its variables, any other job
# starts with no NCCL_* added, and a broken store never stops a job nor drains the node.
# The scripts' guards (job ids, the jobs directory, the TaskProlog protocol) are checked first
# by running them directly. Slurm and munge must be installed (./run.sh test installs slurm-wlm
# and munge): a missing program is a failure, never a skip. The jobs run through the lean
# nccltune-env (the scripts' default when installed), the direct checks through nccltune.
# Last, `nccltune tune` runs as a cluster operator starts it: `srun --mpi=pmix` (on the fake GPU
# stack, two emulated nodes), plain srun (one line saying to use --mpi=pmix) and the batch
# template configs/slurm/tune.sbatch under sbatch; then a job under `srun --mpi=pmix` whose NCCL
# loads the env plugin (NCCL_ENV_PLUGIN) and gets its profile from it.
# usage: slurm_test.sh NCCLTUNE CONFIGS_SLURM_DIR FIXTURES FAKECUDA FAKENCCL ENV_PLUGIN
#        (nccltune-env and nccltune-worker must lie beside NCCLTUNE)
set -u
nccltune=$(readlink -f "$1")
nccltune_env=$(dirname "$nccltune")/nccltune-env
if [ ! -x "$nccltune" ] || [ ! -x "$nccltune_env" ]; then
  echo "FAIL: slurm_test.sh needs $1 and nccltune-env beside it (build both targets)"
  exit 1
fi
scripts=$(readlink -f "$2")
fixtures=$(readlink -f "$3")/slurm
all_fixtures=$(readlink -f "$3")
fakecuda=$(readlink -f "$4")
fakenccl=$(readlink -f "$5")
env_plugin=$(readlink -f "$6")

source "$(dirname "$0")/lib.sh"
chmod 0755 "$work"  # munged and slurmd insist that every user can reach their sockets and spool
daemon_pids=()  # started here, stopped in this order's reverse
expect_line() {  # expect_line TEXT LINE DESCRIPTION
  if grep -qxF -- "$2" <<<"$1"; then pass; else fail "$3: no line '$2'"; fi
}

# Nothing from the environment the test runs in may reach a job or our scripts: not the caller's
# NCCL settings, nor a surrounding Slurm job (CI may itself run under Slurm).
while read -r name; do unset "$name"; done < <(compgen -e | grep -E '^(NCCL_|NCCLTUNE_|SLURM_)')

stop_daemons() {
  if [ ${#daemon_pids[@]} -gt 0 ] && [ -n "${SLURM_CONF:-}" ]; then
    timeout 20 scancel --quiet --full "--user=$(id -un)" 2>/dev/null
  fi
  local i pid
  for ((i = ${#daemon_pids[@]} - 1; i >= 0; i--)); do
    pid=${daemon_pids[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  daemon_pids=()
}
show_logs() {
  local log
  for log in "$work"/log/*; do
    [ -s "$log" ] || continue
    [[ $log == *.out && -s ${log%.out}.log ]] && continue  # the daemon's stderr repeats its log file
    echo "---- $(basename "$log") (last 40 lines)"
    tail -n 40 "$log"
  done
}
stop_test_cluster() {
  local status=$?
  stop_daemons
  if [ "$failures" -gt 0 ] || [ "$status" -ne 0 ]; then show_logs; fi
}
on_exit stop_test_cluster
trap 'exit 1' INT TERM

# Files a root-run `nccltune env` trusts: owned by us, written by nobody else (whatever umask
# the checkout was made with).
install_store() {  # install_store DIR: the fixture store and node state under DIR
  mkdir -p "$1"
  cp -R "$fixtures/store" "$1/store"
  chmod -R u=rwX,go=rX "$1/store"
  install -m 0644 "$fixtures/node.yaml" "$1/node.yaml"
  printf 'env:\n  store: %s\n' "$1/store" >"$1/nccltune.yaml"
}
key=test-gpu.2gpu.nccl2.28
profile_dir=$work/site/store/$key
install_store "$work/site"
mkdir -m 0755 "$work/jobs" "$work/log" "$work/job-cwd"

# ---- The scripts run directly: their guards, without Slurm.
stub=$work/stub-nccltune  # prints what a broken or hostile nccltune might print
cat >"$stub" <<'EOF'
#!/bin/bash
[ -n "${STUB_SLEEP:-}" ] && sleep "$STUB_SLEEP"
printf 'print hello\nunset PATH\nexport NCCL_FROM_STUB=1\nexport NCCL_SET_BY_USER=profile\nexport lower=1\nNCCL_BARE=1\n'
EOF
chmod 0755 "$stub"

out=$(NCCLTUNE_BIN=$stub NCCL_SET_BY_USER=user "$scripts/task_prolog.sh" 2>"$work/err")
expect_equal "$?" 0 "task_prolog exit status"
expect_equal "$out" "export NCCL_FROM_STUB=1" \
  "task_prolog passes only 'export NAME=value' lines, and not for a name the job has set"
mkdir -m 0755 "$work/prolog.d"
ln -s "$scripts/task_prolog.sh" "$work/prolog.d/nccltune"
out=$(NCCLTUNE_BIN=$stub "$work/prolog.d/nccltune" 2>/dev/null)
expect_equal "$out" $'export NCCL_FROM_STUB=1\nexport NCCL_SET_BY_USER=profile' \
  "a script run through a symlink (a prolog.d glob) finds common.sh next to its real file"
out=$(NCCLTUNE_BIN=$stub NCCLTUNE_DISABLE=1 "$scripts/task_prolog.sh" 2>/dev/null)
expect_equal "$out" "" "NCCLTUNE_DISABLE=1 turns the profile off"
out=$(NCCLTUNE_BIN=$work/missing "$scripts/task_prolog.sh" 2>"$work/err")
expect_equal "$?:$out" "0:" "task_prolog with no nccltune binary: exit 0, nothing on stdout"
check "task_prolog names the failure on stderr" grep -q "failed (exit status 127)" "$work/err"

# Which binary the scripts run by default: nccltune-env when `command -v` finds it on their PATH
# (an exported function stands in for an installed one here), else nccltune.
default_bin() { env -u NCCLTUNE_BIN bash -c '. "$1/common.sh" && printf %s "$nccltune_bin"' default_bin "$scripts"; }
if ! env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c 'command -v nccltune-env' >/dev/null; then
  expect_equal "$(default_bin)" nccltune "without nccltune-env installed, the scripts run nccltune"
fi
nccltune-env() { :; }
export -f nccltune-env
expect_equal "$(default_bin)" nccltune-env "with nccltune-env installed, the scripts run it"
expect_equal "$(NCCLTUNE_BIN=/opt/x/nccltune bash -c '. "$1/common.sh" && printf %s "$nccltune_bin"' _ "$scripts")" \
  /opt/x/nccltune "NCCLTUNE_BIN overrides the default"
unset -f nccltune-env

run_prolog() {  # run_prolog SCRIPT JOB_ID [VAR=VALUE...]: a Prolog/Epilog as slurmd would run it
  local script=$1 id=$2
  shift 2
  env -i "SLURM_JOB_ID=$id" SLURM_JOB_NUM_NODES=1 SLURM_JOB_GPUS=0,1 "NCCLTUNE_JOBS_DIR=$work/direct-jobs" \
    "NCCLTUNE_BIN=$nccltune" "NCCLTUNE_CONFIG=$work/site/nccltune.yaml" "NCCLTUNE_NODE_STATE=$work/site/node.yaml" \
    "$@" "$scripts/$script" 2>"$work/err"
}
run_prolog prolog.sh 41
expect_equal "$?" 0 "prolog exit status"
expected_sh=$("$nccltune" env --config "$work/site/nccltune.yaml" --shape "$key" --nodes 1 --gpus-per-node 2 --format sh)
if [ -n "$expected_sh" ]; then pass; else fail "nccltune env prints the fixture profile for 1 node x 2 GPUs"; fi
expect_equal "$(cat "$work/direct-jobs/41.env" 2>&1)" "$expected_sh" "prolog writes the profile in sh format to <jobid>.env"
expect_equal "$(stat -c %a "$work/direct-jobs" "$work/direct-jobs/41.env" 2>&1)" $'755\n644' \
  "prolog's directory and file are readable by the job, writable by root only"
run_prolog epilog.sh 41
expect_equal "$?:$(ls -A "$work/direct-jobs")" "0:" "epilog removes the job's env file"

for bad_id in '../escaped' '41/../42' '' '-1' '0x10' "41"$'\n'"42" '12345678901'; do
  run_prolog prolog.sh "$bad_id"
  expect_equal "$?" 0 "prolog with job id '${bad_id//$'\n'/\\n}': exit status"
  expect_equal "$(ls -A "$work/direct-jobs"; find "$work" -name 'escaped*')" "" "prolog with job id '${bad_id//$'\n'/\\n}' writes nothing"
  check "prolog names the bad job id '${bad_id//$'\n'/\\n}'" grep -q "is not a job number" "$work/err"
done
touch "$work/direct-jobs/43.env"
run_prolog epilog.sh '43/../43'
expect_equal "$?:$(ls -A "$work/direct-jobs")" "0:43.env" "epilog with a bad job id removes nothing"
rm "$work/direct-jobs/43.env"

chmod 0777 "$work/direct-jobs"
run_prolog prolog.sh 44
expect_equal "$?:$(ls -A "$work/direct-jobs")" "0:" "prolog refuses a jobs directory others can write"
check "prolog says why it refused the jobs directory" grep -q "writable by nobody else" "$work/err"
mkdir -m 0755 "$work/elsewhere"
ln -s "$work/elsewhere" "$work/linked-jobs"
run_prolog prolog.sh 45 "NCCLTUNE_JOBS_DIR=$work/linked-jobs"
expect_equal "$?:$(ls -A "$work/elsewhere")" "0:" "prolog refuses a jobs directory that is a symlink"

run_prolog prolog.sh 46 "NCCLTUNE_JOBS_DIR=$work/slow-jobs" "NCCLTUNE_BIN=$stub" STUB_SLEEP=60 NCCLTUNE_TIMEOUT=1
expect_equal "$?:$(cat "$work/slow-jobs/46.env" 2>&1)" "0:" "a hung nccltune is stopped: exit 0, an empty env file"
expect_equal "$(ls -A "$work/slow-jobs")" "46.env" "prolog leaves no temporary file behind"

# ---- A real Slurm.
for program in munged slurmctld slurmd srun sinfo scontrol scancel; do
  if ! command -v "$program" >/dev/null; then
    echo "FAIL: $program is not installed, so the scripts were not tried on a real Slurm (Debian: apt-get install" \
      "slurm-wlm munge; ./run.sh test installs them); $passed direct checks passed, $failures failed"
    exit 1
  fi
done

free_port() {  # a TCP port nothing listens on, not in $1
  local port
  for port in $(shuf -i 20000-45000 -n 100); do
    [ "$port" = "${1:-}" ] && continue
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return 0; }
  done
  return 1
}
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND every 0.2 s
  local seconds=$1 what=$2
  shift 2
  for _ in $(seq $((seconds * 5))); do "$@" && return 0; sleep 0.2; done
  fail "$what: not within ${seconds}s"
  return 1
}

mkdir -m 0755 "$work/munge"
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 0400 "$work/munge/munge.key"
munge_socket=$work/munge/munge.socket
munged --foreground --socket="$munge_socket" --key-file="$work/munge/munge.key" --pid-file="$work/munge/munged.pid" \
  --seed-file="$work/munge/munged.seed" --log-file="$work/log/munged.log" >"$work/log/munged.out" 2>&1 &
daemon_pids+=($!)
wait_for 20 "munged creates its socket" test -S "$munge_socket" || exit 1

# This host as the only node, with its real CPUs and memory (as slurmd itself reports them).
node=$(hostname -s)
hardware=$(slurmd -C 2>/dev/null | sed -n 's/^NodeName=[^ ]* //p' | head -n 1)
[ -n "$hardware" ] || hardware="CPUs=$(nproc)"
ctld_port=$(free_port) || { fail "no free TCP port"; exit 1; }
slurmd_port=$(free_port "$ctld_port") || { fail "no second free TCP port"; exit 1; }
mkdir -m 0755 "$work/state" "$work/spool"

# Slurm runs the scripts as installed; these wrappers only point them at the test's files, as a
# site with other paths would (see common.sh). site.env is read at every run, so the checks
# below can break the store between jobs.
cat >"$work/site.env" <<EOF
export NCCLTUNE_BIN=$(printf %q "$nccltune_env")
export NCCLTUNE_CONFIG=$(printf %q "$work/site/nccltune.yaml")
export NCCLTUNE_NODE_STATE=$(printf %q "$work/site/node.yaml")
export NCCLTUNE_JOBS_DIR=$(printf %q "$work/jobs")
EOF
for script in task_prolog prolog epilog; do
  printf '#!/bin/bash\n. %q\nexec %q\n' "$work/site.env" "$scripts/$script.sh" >"$work/$script"
  chmod 0755 "$work/$script"
done

# Two GPUs for GRES: slurmd wants a device file per GPU; with task/none nothing opens them.
cat >"$work/gres.conf" <<EOF
NodeName=$node Name=gpu File=/dev/null
NodeName=$node Name=gpu File=/dev/zero
EOF
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=nccltune-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
GresTypes=gpu
TaskProlog=$work/task_prolog
Prolog=$work/prolog
Epilog=$work/epilog
NodeName=$node NodeAddr=127.0.0.1 $hardware Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=10 State=UP
EOF

slurmctld -D -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
daemon_pids+=($!)
slurmd -D -N "$node" -f "$SLURM_CONF" >"$work/log/slurmd.out" 2>&1 &
daemon_pids+=($!)
node_state() { sinfo --noheader --nodes="$node" --format=%T 2>/dev/null; }
node_is_idle() { [ "$(node_state)" = idle ]; }
wait_for 60 "the node becomes idle in sinfo (state '$(node_state)')" node_is_idle || exit 1

# run_job SRUN_OPTIONS...: one task that prints its environment, then the env file the Prolog
# wrote for it. Sets job_id, job_environment (all of it), job_nccl (its sorted NCCL_* variables)
# and job_env_file (the file's text, or "(no file)").
# shellcheck disable=SC2016  # $SLURM_JOB_ID is the job's, expanded inside it
job_script='echo "job $SLURM_JOB_ID"; env; echo "--- env file"; cat "$0/$SLURM_JOB_ID.env" 2>/dev/null || echo "(no file)"'
run_job() {
  (cd "$work/job-cwd" && timeout 120 srun --nodes=1 --ntasks=1 --time=2 "$@" bash -c "$job_script" "$work/jobs") \
    >"$work/job" 2>"$work/job.err"
  local status=$?
  [ "$status" -eq 0 ] || { fail "srun $* exited $status"; sed 's/^/  | /' "$work/job.err" | tail -n 5; }
  job_id=$(sed -n '1s/^job \([0-9]*\)$/\1/p' "$work/job")
  job_environment=$(sed -n '2,/^--- env file$/p' "$work/job" | sed '$d')
  job_nccl=$(grep -E '^NCCL_' <<<"$job_environment" | sort)
  job_env_file=$(sed '1,/^--- env file$/d' "$work/job")
}
job_file_gone() { [ -n "$job_id" ] && [ ! -e "$work/jobs/$job_id.env" ]; }
as_variables() { sed -n 's/^export //p' | sort; }  # `export NAME=value` lines as env prints them
expected=$("$nccltune" env --config "$work/site/nccltune.yaml" --shape "$key" --nodes 1 --gpus-per-node 2 --format slurm | as_variables)

run_job --gpus-per-node=2
expect_line "$job_environment" "SLURM_GPUS_ON_NODE=2" "the job sees its two GPUs"
expect_equal "$job_nccl" "$expected" "a 1 node x 2 GPU job gets exactly the profile's variables"
expect_line "$job_nccl" "NCCL_MIN_NCHANNELS=16" "the profile's NCCL_MIN_NCHANNELS reaches the job"
expect_line "$job_nccl" "NCCL_NVLS_ENABLE=0" "the profile's NCCL_NVLS_ENABLE reaches the job"
# A list per collective, as NCCL 2.24 reads it, reaches the job whole through the TaskProlog;
# a plain list is scoped to the collectives the profile tuned.
expect_line "$job_nccl" "NCCL_PROTO=allgather:LL128,Simple;allreduce:LL,LL128,Simple" \
  "a per-collective NCCL_PROTO reaches the job with its ';'"
expect_line "$job_nccl" "NCCL_ALGO=allgather:Tree;allreduce:Tree" "NCCL_ALGO scoped to the tuned collectives"
expect_equal "$job_env_file" "$expected_sh" "during the job, the Prolog's <jobid>.env holds the profile"
sourced=$(env -i bash -c '. /dev/stdin && env' <<<"$job_env_file" | grep -E '^NCCL_' | sort)
expect_equal "$sourced" "$expected" "the env file, sourced in a shell, sets the profile's variables"
wait_for 30 "the Epilog removes jobs/$job_id.env after the job" job_file_gone && pass

run_job --gpus-per-node=1
expect_line "$job_environment" "SLURM_GPUS_ON_NODE=1" "the job sees its one GPU"
expect_equal "$job_nccl" "" "a 1 GPU job (no profile for that shape) starts with no NCCL_* added"
expect_equal "$job_env_file" "" "a 1 GPU job's env file is empty"

NCCL_MIN_NCHANNELS=4 run_job --gpus-per-node=2
expect_line "$job_nccl" "NCCL_MIN_NCHANNELS=4" "a variable the user set wins over the profile"
expect_line "$job_nccl" "NCCL_NVLS_ENABLE=0" "the profile's other variables still apply"

# Fail-open: a broken store or a missing binary never stops a job nor drains the node.
broken_store() {  # broken_store DESCRIPTION: a job still starts, with no NCCL_*, on an idle node
  run_job --gpus-per-node=2
  expect_equal "$job_nccl" "" "$1: the job starts with no NCCL_* added"
  expect_equal "$job_env_file" "" "$1: the job's env file is empty"
  wait_for 30 "$1: the node is idle again (not drained)" node_is_idle && pass
}
cp "$fixtures/hostile/1n.yaml" "$profile_dir/1n.yaml"
broken_store "hostile profile (\$(...), backticks, ;)"
check "hostile profile: the canary file is never created" test ! -e "$work/job-cwd/canary"

install -m 0644 "$fixtures/store/$key/1n.yaml" "$profile_dir/1n.yaml"
chmod g+w "$profile_dir"
broken_store "group-writable profile directory"
chmod g-w "$profile_dir"

echo "export NCCLTUNE_BIN=$(printf %q "$work/no-such-nccltune")" >>"$work/site.env"
broken_store "nccltune binary missing"
sed -i '$d' "$work/site.env"
run_job --gpus-per-node=2
expect_equal "$job_nccl" "$expected" "the repaired site gives jobs the profile again"
wait_for 30 "every job's env file is removed after it" test -z "$(ls -A "$work/jobs")" && pass

# ---- tune under Slurm: srun --mpi=pmix, plain srun, the batch template.
# Four ranks on the test's two-CPU node (--overcommit), two emulated nodes of the fake GPU stack,
# each node's topology from a DGX-H100 snapshot.
tune_env=(NCCLTUNE_CUDA_LIB="$fakecuda" NCCLTUNE_NCCL_LIB="$fakenccl" NCCLTUNE_EMULATE_NODES=2
          NCCLTUNE_FAKE_MODEL="$all_fixtures/models/tune-one-knob.yaml")
tune_args=(--from "$all_fixtures/nodes/dgx-h100" --space "$all_fixtures/spaces/tune-small.yaml" --max-bytes 1M
           --max-trials 24 --init-timeout 20 --size-timeout 20 --progress log --comms world)
mkdir -m 0755 "$work/tuned"
(cd "$work/job-cwd" && env "${tune_env[@]}" timeout 300 srun --mpi=pmix --overcommit --nodes=1 --ntasks=4 --time=5 \
  "$nccltune" tune --out "$work/tuned/pmix" "${tune_args[@]}") >"$work/tune.out" 2>"$work/tune.err"
status=$?
expect_equal "$status" 0 "srun --mpi=pmix -n 4 nccltune tune exits 0"
[ "$status" -eq 0 ] || { tail -n 5 "$work/tune.err"; tail -n 5 "$work/tune.out"; }
tuned_profile=$(find "$work/tuned/pmix" -name 2n.yaml)
check "srun --mpi=pmix: tune writes <store>/<key>/2n.yaml" test -n "$tuned_profile"
check "srun --mpi=pmix: the profile reads back" "$nccltune" show "$tuned_profile"

(cd "$work/job-cwd" && env "${tune_env[@]}" timeout 120 srun --overcommit --nodes=1 --ntasks=2 --time=2 \
  "$nccltune" tune --out "$work/tuned/plain" "${tune_args[@]}") >"$work/plain.out" 2>"$work/plain.err"
status=$?
expect_equal "$status" 2 "plain srun: tune stops with exit 2"
lines=$(grep -c '^nccltune tune:' "$work/plain.err")
expect_equal "$lines" 1 "plain srun: one line from nccltune, not one per rank"
[ "$lines" = 1 ] || sed 's/^/  | /' "$work/plain.err"
check "plain srun: the line says srun --mpi=pmix" grep -q "srun --mpi=pmix" "$work/plain.err"

# The template as written, with the node's size: one rank per GPU, two per node (sbatch refuses
# --overcommit with --ntasks-per-node beyond the CPUs, and without it such a job never starts).
(cd "$work/job-cwd" && env "${tune_env[@]}" NCCLTUNE_BIN="$nccltune" NCCLTUNE_STORE="$work/tuned/batch" \
  NCCLTUNE_BUDGET=4m NCCLTUNE_TUNE_ARGS="${tune_args[*]}" timeout 300 sbatch --wait --nodes=1 \
  --ntasks-per-node=2 --gpus-per-node=2 --time=5 --no-requeue --output="$work/batch.out" "$scripts/tune.sbatch") \
  >"$work/sbatch.out" 2>&1
status=$?
expect_equal "$status" 0 "sbatch configs/slurm/tune.sbatch exits 0"
[ "$status" -eq 0 ] || tail -n 8 "$work/batch.out" "$work/sbatch.out"
check "sbatch tune.sbatch: the profile is in the store" test -n "$(find "$work/tuned/batch" -name 2n.yaml)"

# The fleet template as written: two emulated nodes of one GPU each, a healthy model; the survey's
# JSON where the operator asked, exit 0 through srun --mpi=pmix and the template's own exit.
(cd "$work/job-cwd" && env "${tune_env[@]}" NCCLTUNE_FAKE_MODEL="$all_fixtures/models/fleet-healthy.yaml" \
  NCCLTUNE_BIN="$nccltune" NCCLTUNE_FLEET_OUT="$work/fleet/survey.json" NCCLTUNE_BUDGET=4m \
  NCCLTUNE_FLEET_ARGS="--bytes 1M --iterations 5 --init-timeout 20 --size-timeout 20" timeout 300 sbatch --wait \
  --nodes=1 --ntasks-per-node=2 --gpus-per-node=2 --time=5 --no-requeue --output="$work/fleet.out" \
  "$scripts/fleet.sbatch") >"$work/sbatch-fleet.out" 2>&1
status=$?
expect_equal "$status" 0 "sbatch configs/slurm/fleet.sbatch exits 0 on a healthy fleet"
[ "$status" -eq 0 ] || tail -n 8 "$work/fleet.out" "$work/sbatch-fleet.out"
check "sbatch fleet.sbatch: the survey is where NCCLTUNE_FLEET_OUT says" grep -q '"nccltune/fleet/v1"' "$work/fleet/survey.json"
check "sbatch fleet.sbatch: the job's output says clean" grep -q '^nccltune fleet: clean' "$work/fleet.out"

# ---- The env plugin as NCCL loads it, in a job started with srun --mpi=pmix: the job shape from
# Slurm's variables (1 node, SLURM_GPUS_ON_NODE=2), the profile's value in the fake NCCL's own INFO
# line on every rank. The plugin reads another store than the TaskProlog, so what only its profile
# sets (NCCL_BUFFSIZE) can have come from the plugin alone.
mkdir -p "$work/plugin-site/store/$key" "$work/plugin-job"
cat >"$work/plugin-site/store/$key/1n.yaml" <<YAML
schema: nccltune/profile/v1
shape: {key: "$key", nodes: 1, gpus_per_node: 2, ranks: 2, gpu: "NVIDIA H100 80GB HBM3", nvswitch: false,
        nics_per_node: 0, nccl_version: "2.28.9"}
env: {NCCL_BUFFSIZE: "2097152"}
per_size: []
YAML
chmod -R u=rwX,go=rX "$work/plugin-site"
printf 'env:\n  store: %s\n' "$work/plugin-site/store" >"$work/plugin-site/nccltune.yaml"
(cd "$work/job-cwd" && env NCCLTUNE_CUDA_LIB="$fakecuda" NCCLTUNE_NCCL_LIB="$fakenccl" \
  NCCLTUNE_FAKE_MODEL="$all_fixtures/models/tune-one-knob.yaml" NCCL_ENV_PLUGIN="$env_plugin" NCCL_DEBUG=INFO \
  NCCL_DEBUG_SUBSYS=INIT,ENV NCCL_DEBUG_FILE="$work/plugin-job/nccl.%h.%p.log" \
  NCCLTUNE_CONFIG="$work/plugin-site/nccltune.yaml" NCCLTUNE_NODE_STATE="$work/site/node.yaml" \
  timeout 120 srun --mpi=pmix --overcommit --nodes=1 --ntasks=2 --gpus-per-node=2 --time=2 \
  "$nccltune" bench -b 8 -e 1K -f 4 -n 2 -w 1 --init-timeout 20 --size-timeout 20) \
  >"$work/plugin-job.out" 2>"$work/plugin-job.err"
status=$?
expect_equal "$status" 0 "srun --mpi=pmix -n 2 nccltune bench with NCCL_ENV_PLUGIN exits 0"
[ "$status" -eq 0 ] || { tail -n 5 "$work/plugin-job.err"; tail -n 5 "$work/plugin-job.out"; }
served=$(cat "$work/plugin-job"/* 2>/dev/null | grep -c 'NCCL INFO NCCL_BUFFSIZE set by environment to 2097152$')
expect_equal "$served" 2 "env plugin under srun --mpi=pmix: NCCL says NCCL_BUFFSIZE=2097152 on both ranks"
check "env plugin under srun --mpi=pmix: the job shape is Slurm's" \
  grep -q "serving 1 variable(s) of $work/plugin-site/store/$key/1n.yaml (job shape from Slurm)" "$work/plugin-job.err"

stop_daemons
left=$(pgrep -f -- "$work" || true)
expect_equal "$left" "" "no process started by the test is left running"

finish
