#!/bin/bash
# Slurm TaskProlog (slurm.conf: TaskProlog=/etc/nccltune/slurm/task_prolog.sh): gives each task of
# a job the NCCL_* variables of the nccltune profile for the job's shape. slurmstepd runs it as
# the job's user with the job's environment before every task and reads its stdout as commands;
# an `export NAME=value` line sets NAME in the task.
#
# `nccltune env` reads the shape from the environment Slurm gives the task (SLURM_JOB_NUM_NODES,
# SLURM_GPUS_ON_NODE, SLURM_NTASKS_PER_NODE). A variable the job has set itself is left alone
# (the user's choice wins over the profile), and NCCLTUNE_DISABLE=1 in the job's environment
# turns the profile off for that job: `nccltune env` does both itself, in every format, and this
# script checks again before it passes a line on. NCCLTUNE_INSPECTOR=1 in the job's environment
# also switches NCCL Inspector on for the job, where the node config names it (configs/README.md,
# "NCCL Inspector for a job"): `nccltune env` reads it too, and its lines pass as the profile's
# do. Fail-open: whatever goes wrong, the task starts, with no variables added, and the reason
# goes to stderr and syslog.

# common.sh lies next to the real file, also when run through a symlink (a prolog.d/* glob).
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/common.sh" || exit 0

emit_profile_variables() {
  [ "${NCCLTUNE_DISABLE:-}" = 1 ] && return
  local lines status=0
  lines=$(nccltune_env --format slurm) || status=$?
  if [ "$status" -ne 0 ]; then
    nccltune_log "'$nccltune_bin env' failed (exit status $status); the job starts without a profile"
    return
  fi
  # Only `export NAME=value` reaches slurmstepd: it also obeys `unset` and `print` lines.
  local line name
  while IFS= read -r line; do
    [[ -z $line || $line == '#'* ]] && continue  # env's comments: which profile, what it withheld
    name=${line#export }
    name=${name%%=*}
    if [[ $line != "export $name="* || ! $name =~ ^[A-Z][A-Z0-9_]*$ ]]; then
      nccltune_log "dropped a line that is not 'export NAME=value'"
      continue
    fi
    [ -n "${!name+set}" ] && continue
    printf '%s\n' "$line"
  done <<<"$lines"
}

emit_profile_variables
exit 0
