#include "node/env_grounds.h"

#include <fmt/format.h>

namespace nccltune {

namespace {

std::string plural(int n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : ", ") + word;
  return out;
}

// "no --shape, no node state at F, then a read of this machine": each step env took.
std::string steps_tried(const NodeTypeAttempt& a) {
  if (!a.shape.empty()) return "from --shape";
  std::string steps = "no --shape";
  if (a.node_state_present) return steps + ", from the node state " + a.node_state;
  return steps + ", no node state at " + a.node_state + ", then " + describe_node_type_source(a);
}

std::string job_words(const JobShape& job) {
  std::string out = plural(job.nodes, "node");
  if (job.gpus_per_node) out += " x " + plural(*job.gpus_per_node, "GPU");
  return out;
}

}  // namespace

std::string describe_node_type_source(const NodeTypeAttempt& a) {
  if (!a.shape.empty()) return "--shape";
  if (a.node_state_present) return "the node state " + a.node_state;
  return a.from.empty() ? "a read of this machine" : "a read of --from " + a.from;
}

std::string cannot_work_out_node_type(const NodeTypeAttempt& a, const std::string& error) {
  return fmt::format(
      "served nothing: cannot work out this node's type ({}): {}: pass --shape KEY (the "
      "node type key of the job's nodes, a directory of the store), --node-state FILE, or run "
      "nccltuned on the node",
      steps_tried(a), error);
}

std::string why_nothing_served(const NothingServed& n) {
  std::string line = fmt::format("served nothing: node type {} ({}), job of {}: ", n.key,
                                 steps_tried(n.attempt), job_words(n.job));
  if (n.job.gpus_per_node && *n.job.gpus_per_node == 0)
    return line + "a job without GPUs gets no profile (SLURM_GPUS_ON_NODE=0)";
  if (n.unfit_file)
    return line + fmt::format(
                      "{} is tuned for {} GPUs per node, not {}: pass --gpus-per-node {} if the job "
                      "runs {} ranks per node, or tune with {}",
                      *n.unfit_file, n.unfit_gpus_per_node, n.job.gpus_per_node.value_or(0),
                      n.unfit_gpus_per_node, n.unfit_gpus_per_node, job_words(n.job));
  if (n.stored_counts.empty()) {
    line += fmt::format("{} holds no profile for this node type", n.store);
    if (!n.store_keys.empty()) line += " (it holds " + joined(n.store_keys) + ")";
    return line + ": pass --shape KEY with the key of the job's nodes, or --profiles DIR for another store";
  }
  std::vector<std::string> counts;
  for (const int count : n.stored_counts) counts.push_back(std::to_string(count));
  return line + fmt::format(
                    "{} holds this node type's profiles for {} node{}, none of which serves {} (one "
                    "node and several never stand in for each other): pass --nodes N for the job's "
                    "node count, or tune this one (nccltune tune --node-counts {})",
                    n.store, joined(counts), counts == std::vector<std::string>{"1"} ? "" : "s",
                    plural(n.job.nodes, "node"), n.job.nodes);
}

std::string served_with_gpus_per_node_unknown(const std::string& file, int tuned_gpus_per_node) {
  return fmt::format(
      "the job's GPUs per node is unknown (no --gpus-per-node, SLURM_GPUS_ON_NODE or "
      "SLURM_NTASKS_PER_NODE): serving {} as tuned, for {} GPUs per node; pass --gpus-per-node G "
      "to serve only a profile tuned for the job's own",
      file, tuned_gpus_per_node);
}

}  // namespace nccltune
