# shellcheck shell=bash
# Sourced by nccltune's Slurm scripts (task_prolog.sh, prolog.sh, epilog.sh): their settings and
# the few helpers they share. Nothing here may fail a job: every script ends with `exit 0`.
#
# Settings, each taken from the environment when set there, else the default shown. slurmd starts
# a Prolog or Epilog with a fresh environment of SLURM_* variables only, so a site that needs other
# values edits them here or names a two-line wrapper as Prolog= (`export NCCLTUNE_BIN=...; exec
# /path/to/prolog.sh`). A TaskProlog runs as the job's user with the job's environment.
#   NCCLTUNE_BIN         the binary that runs `env`, found on PATH below when not a path; by default
#                        the lean nccltune-env when installed (it starts in a few ms, without the
#                        MPI, hwloc and verbs libraries nccltune loads), else nccltune
#   NCCLTUNE_CONFIG      read by nccltune itself (default: the config path compiled into it,
#                        <sysconfdir>/nccltune/nccltune.yaml; `nccltune env --help` shows it)
#   NCCLTUNE_NODE_STATE  the node state file nccltuned writes (nccltune's default when unset)
#   NCCLTUNE_JOBS_DIR    where prolog.sh writes <jobid>.env and epilog.sh removes it
#   NCCLTUNE_TIMEOUT     seconds `nccltune env` may take before the job starts without it (5;
#                        slurmd expects a Prolog to finish within MessageTimeout, 10 s by default)

# Slurm runs these scripts with a minimal PATH (and a job may have any PATH at all).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

if [ -n "${NCCLTUNE_BIN:-}" ]; then
  nccltune_bin=$NCCLTUNE_BIN
elif command -v nccltune-env >/dev/null 2>&1; then
  nccltune_bin=nccltune-env
else
  nccltune_bin=nccltune
fi
nccltune_jobs_dir=${NCCLTUNE_JOBS_DIR:-/run/nccltune/jobs}
nccltune_timeout=${NCCLTUNE_TIMEOUT:-5}
nccltune_script=${0##*/}

# One line to stderr and to syslog: Slurm discards a prolog's output, ops read syslog.
nccltune_log() {
  printf 'nccltune %s: %s\n' "$nccltune_script" "$*" >&2
  logger -t nccltune -p user.warning -- "$nccltune_script: $*" 2>/dev/null || true
}

# `nccltune env` with the node state file when one is configured, bounded in time so that a hung
# store (a stuck NFS mount) delays the job by seconds at most instead of failing it. Its own
# errors go to stderr and syslog, its stdout only holds validated lines; a failure prints nothing.
nccltune_env() {
  local node_state=()
  [ -n "${NCCLTUNE_NODE_STATE:-}" ] && node_state=(--node-state "$NCCLTUNE_NODE_STATE")
  timeout --kill-after=2 "$nccltune_timeout" "$nccltune_bin" env --syslog "${node_state[@]}" "$@"
}

# The job id, or nothing when it is missing or not a plain number (Slurm's ids are): it becomes a
# file name under a directory root writes into, so '../x' or '1/2' must never reach a path.
nccltune_job_id() {
  local id=${SLURM_JOB_ID:-}
  if [[ $id =~ ^[1-9][0-9]{0,9}$ ]]; then
    printf '%s' "$id"
  else
    nccltune_log "SLURM_JOB_ID '${id:0:40}' is not a job number; nothing done"
  fi
}

# Succeeds when the jobs directory is a real directory (not a symlink) owned by this user and
# writable by nobody else, creating it (and /run/nccltune) when missing: prolog.sh writes there
# as root, so a directory others can write or replace would let them plant or redirect files.
nccltune_jobs_dir_ready() {
  local dir=$nccltune_jobs_dir
  [ -d "$dir" ] || (umask 022 && mkdir -p -- "$dir" 2>/dev/null)
  if [ -L "$dir" ] || [ ! -d "$dir" ]; then
    nccltune_log "$dir is not a directory; nothing done"
    return 1
  fi
  local owner mode
  owner=$(stat -c %u -- "$dir") && mode=$(stat -c %a -- "$dir") || return 1
  if [ "$owner" != "$(id -u)" ] || (((8#$mode & 8#022) != 0)); then
    nccltune_log "$dir must be owned by uid $(id -u) and writable by nobody else (owner $owner, mode $mode); nothing done"
    return 1
  fi
}
