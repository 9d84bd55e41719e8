#!/bin/bash
# Slurm Epilog (slurm.conf: Epilog=/etc/nccltune/slurm/epilog.sh): removes the env file
# prolog.sh wrote for the job ($NCCLTUNE_JOBS_DIR/<jobid>.env), and a temporary file a killed
# prolog may have left. Runs as root on every node of the job; always exits 0, since a failing
# Epilog drains the node.

# common.sh lies next to the real file, also when run through a symlink (a prolog.d/* glob).
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/common.sh" || exit 0

remove_job_env_file() {
  local job_id
  job_id=$(nccltune_job_id)
  [ -n "$job_id" ] || return
  [ -d "$nccltune_jobs_dir" ] && [ ! -L "$nccltune_jobs_dir" ] || return
  rm -f -- "$nccltune_jobs_dir/$job_id.env" "$nccltune_jobs_dir/.$job_id.env."?????? ||
    nccltune_log "cannot remove $nccltune_jobs_dir/$job_id.env"
}

remove_job_env_file
exit 0
