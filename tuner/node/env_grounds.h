// What `nccltune env` says on stderr about what it served, and why: one line when it serves
// nothing (what it tried for the node type: --shape, the node state file, a read of this machine
// or --from; what the store holds; and the flag that fixes it), and one line when it serves a
// profile without knowing the job's GPUs per node (on what grounds). Pure: the caller looks at
// the store and the files; stdout never sees these lines, since a prolog's stdout is the env.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "node/job_shape.h"

namespace nccltune {

// Where env looked for the node type, in its order: --shape, else the node state file when it
// exists, else a read of this machine (or of --from).
struct NodeTypeAttempt {
  std::string shape;  // --shape; "" when not given
  std::string node_state;
  bool node_state_present = false;
  std::string from;  // --from; "" for this machine
};

// "--shape", "the node state /run/nccltune/node.yaml", "a read of this machine", "a read of --from DIR".
std::string describe_node_type_source(const NodeTypeAttempt& attempt);

// The line when the node type cannot be worked out at all (`error`: the read's own reason).
std::string cannot_work_out_node_type(const NodeTypeAttempt& attempt, const std::string& error);

// What env found when it served nothing.
struct NothingServed {
  NodeTypeAttempt attempt;
  std::string key;    // the node type key it used
  std::string store;  // the profile store
  JobShape job;
  std::vector<std::string> store_keys;  // node types the store holds profiles for (a few)
  std::vector<int> stored_counts;       // the node counts stored for `key`
  // A profile for the key and count that was not used: tuned for other GPUs per node.
  std::optional<std::string> unfit_file;
  int unfit_gpus_per_node = 0;
};

// "served nothing: node type KEY (from ...), 2 nodes x 8 GPUs: STORE has no profile for this
// node type (it holds: A, B): pass --shape KEY of the job's nodes, ..." One line.
std::string why_nothing_served(const NothingServed& nothing);

// The rule for a job whose GPUs per node nothing gives (no --gpus-per-node, SLURM_GPUS_ON_NODE or
// SLURM_NTASKS_PER_NODE): the profile of its node type and node count is served as tuned, for
// its own GPUs per node, and this line says so.
std::string served_with_gpus_per_node_unknown(const std::string& file, int tuned_gpus_per_node);

}  // namespace nccltune
