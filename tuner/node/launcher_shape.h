// The shape of the job a process belongs to, as its launcher says in the environment: for the
// NCCL env plugin, which runs inside every NCCL application with no prolog and no flags. In order:
// NCCLTUNE_NODES / NCCLTUNE_GPUS_PER_NODE (set by hand or by a wrapper), Slurm
// (SLURM_JOB_NUM_NODES, SLURM_GPUS_ON_NODE, SLURM_NTASKS_PER_NODE), torchrun (WORLD_SIZE,
// LOCAL_WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_SIZE) and PMIx / MPICH
// (PMI_SIZE, MPI_LOCALNRANKS). A launcher that gives ranks and local ranks gives nodes as their
// quotient, when that is a whole number: one rank per GPU is how NCCL jobs run. The environment
// is passed in, never read here.
#pragma once

#include <map>
#include <string>

#include "base/result.h"
#include "node/job_shape.h"

namespace nccltune {

struct LauncherShape {
  JobShape job;
  std::string source;  // "NCCLTUNE_NODES", "Slurm", "torchrun", "Open MPI" or "PMI"
};

// Errors: no launcher variable at all, a value that is not a count (naming the variable), or
// ranks that do not divide evenly into local ranks ("WORLD_SIZE=12 is not a multiple of
// LOCAL_WORLD_SIZE=8"): then no profile fits, and the caller says so in one line.
Result<LauncherShape> launcher_shape(const std::map<std::string, std::string>& environment);

// Every variable launcher_shape reads, for callers that copy them out of the process environment.
inline constexpr const char* kLauncherShapeVariables[] = {
    "NCCLTUNE_NODES",     "NCCLTUNE_GPUS_PER_NODE", "SLURM_JOB_NUM_NODES",
    "SLURM_GPUS_ON_NODE", "SLURM_NTASKS_PER_NODE",  "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",   "OMPI_COMM_WORLD_SIZE",   "OMPI_COMM_WORLD_LOCAL_SIZE",
    "PMI_SIZE",           "MPI_LOCALNRANKS"};

}  // namespace nccltune
