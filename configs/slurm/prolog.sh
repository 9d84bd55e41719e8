#!/bin/bash
# Slurm Prolog (slurm.conf: Prolog=/etc/nccltune/slurm/prolog.sh): writes the job's nccltune
# profile variables to $NCCLTUNE_JOBS_DIR/<jobid>.env (default /run/nccltune/jobs), in the shell
# format (`export NCCL_X='value'` lines), on every node of the job, for job scripts, containers
# and wrappers that read an env file: `. /run/nccltune/jobs/$SLURM_JOB_ID.env`. An empty file
# means no profile applies. epilog.sh removes it.
#
# slurmd runs this as root with SLURM_* variables only; the shape comes from SLURM_JOB_NUM_NODES
# and, when the job has GPUs here, SLURM_JOB_GPUS. The file is replaced atomically (a temporary
# file in the same directory, fsync, rename): a reader sees the old file or the whole new one.
# Fail-open: a non-zero exit would drain the node, so this always exits 0 and reports problems
# on stderr and syslog; the job then starts without the file.

# common.sh lies next to the real file, also when run through a symlink (a prolog.d/* glob).
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/common.sh" || exit 0

write_job_env_file() {
  local job_id
  job_id=$(nccltune_job_id)
  [ -n "$job_id" ] || return
  nccltune_jobs_dir_ready || return

  local shape=()
  [ -n "${SLURM_JOB_NUM_NODES:-}" ] && shape+=(--nodes "$SLURM_JOB_NUM_NODES")
  if [[ ${SLURM_JOB_GPUS:-} =~ ^[0-9]+(,[0-9]+)*$ ]]; then  # this node's GPU indices, "0,1,2,3"
    local gpus=${SLURM_JOB_GPUS//[^,]/}
    shape+=(--gpus-per-node $((${#gpus} + 1)))
  fi

  local lines status=0
  lines=$(nccltune_env --format sh "${shape[@]}") || status=$?
  if [ "$status" -ne 0 ]; then
    nccltune_log "'$nccltune_bin env' failed (exit status $status); job $job_id gets an empty env file"
    lines=
  fi

  local target=$nccltune_jobs_dir/$job_id.env temporary
  temporary=$(mktemp -- "$nccltune_jobs_dir/.$job_id.env.XXXXXX") || {
    nccltune_log "cannot create a file in $nccltune_jobs_dir; job $job_id gets no env file"
    return
  }
  if { [ -z "$lines" ] || printf '%s\n' "$lines"; } >"$temporary" && sync -- "$temporary" &&
    chmod 0644 -- "$temporary" && mv -f -T -- "$temporary" "$target"; then
    return
  fi
  nccltune_log "cannot write $target; job $job_id gets no env file"
  rm -f -- "$temporary"
}

write_job_env_file
exit 0
