// `nccltune diff A B`: what changed between two profiles, e.g. of the same shape before and
// after an NCCL upgrade: shape fields, env and what was withheld from it, per-size choices and
// busbw per size, for each communicator shape (profile v3) the profiles measured, and NCCL's own
// model of each collective (latency and predicted busbw per algorithm/protocol).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.h"

namespace nccltune {

struct FieldChange {
  std::string field, before, after;  // before/after empty: absent on that side
};

struct ChoiceChange {
  std::uint64_t bytes = 0;
  std::string before, after;  // describe_choice, or "-" when no range holds the size
};

struct BusbwRow {
  std::uint64_t bytes = 0;
  double baseline_a = 0, baseline_b = 0, tuned_a = 0, tuned_b = 0;  // NaN: not recorded
};

// One collective of either profile.
struct CollectiveDiff {
  std::string name;               // nccl-tests name
  bool in_a = true, in_b = true;  // measured by that profile
  std::vector<ChoiceChange> per_size;
  std::vector<BusbwRow> busbw;  // sizes present in both, ascending
  std::vector<std::uint64_t> sizes_only_a, sizes_only_b;
  bool busbw_differs = false;  // any value of a common size, or the geomean, differs (NaN equals NaN)
  double speedup_a = 1, speedup_b = 1;
  // With the tuner plugin (results.with_plugin_speedup_geomean): nullopt where not confirmed.
  std::optional<double> plugin_speedup_a, plugin_speedup_b;

  bool identical() const {
    return in_a && in_b && per_size.empty() && !busbw_differs && sizes_only_a.empty() && sizes_only_b.empty();
  }
};

// One pair of NCCL's own model (provenance.nccl_observed.nccl_model) that differs: its latency and
// the busbw it predicts, "6.2 us, 48.00 GB/s"; before/after empty: the pair is absent on that side.
struct ModelChange {
  std::string collective;  // nccl-tests name
  std::string pair;        // "RING/SIMPLE", as NCCL's TUNING lines spell it
  std::string before, after;
};

struct ProfileDiff {
  // "schema" (v2: the world only, v3: communicator shapes), "nccl_version", "key", ... and
  // "keep_defaults"
  std::vector<FieldChange> shape;
  std::vector<FieldChange> env;       // added (before empty), removed (after empty), changed
  std::vector<FieldChange> withheld;  // by setting (describe_env); before/after: its why
  // By name: the world's collectives by theirs, another communicator shape's after its section
  // ("rail: 2 nodes x 1 rank, all_reduce").
  std::vector<CollectiveDiff> collectives;
  // NCCL's model of each tuned collective, pair by pair: what NCCL itself expects changed (a new
  // NCCL version, another topology), whatever was measured.
  std::vector<ModelChange> nccl_model;
  // What NCCL said it did on the world, under the defaults (provenance.nccl_observed): "transport",
  // "GPUDirect RDMA", "NVLS", "channels", "tuner", as describe_observation says them.
  std::vector<FieldChange> nccl_said;

  // Provenance (date, tool, trials) is shown, not compared: two runs of one result are the same;
  // NCCL's model is compared (nccl_model).
  bool identical() const {
    return shape.empty() && env.empty() && withheld.empty() && nccl_model.empty() && nccl_said.empty() &&
           std::all_of(collectives.begin(), collectives.end(),
                       [](const CollectiveDiff& c) { return c.identical(); });
  }
};

// Per-size choices are compared at every size where either profile has a result or starts a
// range, so a moved boundary shows too. Collectives come in profile order: the world's, then each
// communicator section's as the profile holds them (A's, then what only B has).
ProfileDiff diff_profiles(const Profile& a, const Profile& b);

std::string render_profile_diff(const ProfileDiff& diff, const Profile& a, std::string_view a_origin,
                                const Profile& b, std::string_view b_origin);

}  // namespace nccltune
