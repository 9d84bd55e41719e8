#include "report/profile_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "base/byte_size.h"
#include "report/profile_numbers.h"
#include "report/profile_text.h"

namespace nccltune {

namespace {

void compare(std::vector<FieldChange>& out, const std::string& field, const std::string& a,
             const std::string& b) {
  if (a != b) out.push_back({field, a, b});
}

std::vector<FieldChange> shape_changes(const Profile& pa, const Profile& pb) {
  const ProfileShape &a = pa.shape, &b = pb.shape;
  auto yes_no = [](bool v) { return std::string(v ? "true" : "false"); };
  std::vector<FieldChange> out;
  const auto schema = [](const Profile& p) {  // as profile_to_yaml writes it
    return std::string(!p.shapes.empty() || !p.withheld.empty() ? kProfileSchemaV3 : kProfileSchema);
  };
  compare(out, "schema", schema(pa), schema(pb));
  compare(out, "key", a.node_type_key, b.node_type_key);
  compare(out, "nccl_version", a.nccl_version, b.nccl_version);
  compare(out, "cuda_driver", a.cuda_driver, b.cuda_driver);
  compare(out, "nodes", std::to_string(a.nodes), std::to_string(b.nodes));
  compare(out, "gpus_per_node", std::to_string(a.gpus_per_node), std::to_string(b.gpus_per_node));
  compare(out, "ranks", std::to_string(a.ranks), std::to_string(b.ranks));
  compare(out, "gpu", a.gpu, b.gpu);
  compare(out, "nvswitch", yes_no(a.nvswitch), yes_no(b.nvswitch));
  compare(out, "nics_per_node", std::to_string(a.nics_per_node), std::to_string(b.nics_per_node));
  compare(out, "nic", a.nic, b.nic);
  compare(out, "gpu_nic_affinity", a.gpu_nic_affinity, b.gpu_nic_affinity);
  compare(out, "keep_defaults", yes_no(pa.keep_defaults), yes_no(pb.keep_defaults));
  return out;
}

std::vector<FieldChange> env_changes(const Profile& a, const Profile& b) {
  std::set<std::string> names;
  for (const auto& [name, value] : a.env) names.insert(name);
  for (const auto& [name, value] : b.env) names.insert(name);
  std::vector<FieldChange> out;
  for (const std::string& name : names) {
    const auto in_a = a.env.find(name), in_b = b.env.find(name);
    compare(out, name, in_a == a.env.end() ? "" : in_a->second, in_b == b.env.end() ? "" : in_b->second);
  }
  return out;
}

std::vector<ChoiceChange> choice_changes(const CollectiveProfile& a, const CollectiveProfile& b) {
  std::set<std::uint64_t> points(a.results.sizes.begin(), a.results.sizes.end());
  points.insert(b.results.sizes.begin(), b.results.sizes.end());
  for (const SizeChoice& c : a.per_size) points.insert(c.min_bytes);
  for (const SizeChoice& c : b.per_size) points.insert(c.min_bytes);
  auto choice_at = [](const CollectiveProfile& p, std::uint64_t bytes) {
    const SizeChoice* c = choice_for_size(p.per_size, bytes);
    return c ? describe_choice(*c) : std::string("-");
  };
  std::vector<ChoiceChange> out;
  for (std::uint64_t bytes : points) {
    std::string before = choice_at(a, bytes), after = choice_at(b, bytes);
    if (before != after) out.push_back({bytes, std::move(before), std::move(after)});
  }
  return out;
}

std::string ratio(double before, double after) {
  return format_speedup(speedup_of(before, after));
}

// A profile may hold .nan: a value that is NaN on both sides has not changed.
bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

std::string shown(const std::string& value) {
  return value.empty() ? "(none)" : value;
}

CollectiveDiff collective_diff(const std::string& name, const CollectiveProfile* in_a,
                               const CollectiveProfile* in_b) {
  static const CollectiveProfile kNone;
  const CollectiveProfile& a = in_a ? *in_a : kNone;
  const CollectiveProfile& b = in_b ? *in_b : kNone;
  CollectiveDiff d;
  d.name = name;
  d.in_a = in_a != nullptr;
  d.in_b = in_b != nullptr;
  d.per_size = choice_changes(a, b);
  const ProfileResults &ra = a.results, &rb = b.results;
  for (std::size_t i = 0; i < ra.sizes.size(); ++i) {
    const auto j = std::find(rb.sizes.begin(), rb.sizes.end(), ra.sizes[i]);
    if (j == rb.sizes.end()) {
      d.sizes_only_a.push_back(ra.sizes[i]);
      continue;
    }
    const auto k = static_cast<std::size_t>(j - rb.sizes.begin());
    d.busbw.push_back({ra.sizes[i], value_at(ra.baseline, i), value_at(rb.baseline, k), value_at(ra.tuned, i),
                       value_at(rb.tuned, k)});
  }
  for (std::uint64_t bytes : rb.sizes)
    if (std::find(ra.sizes.begin(), ra.sizes.end(), bytes) == ra.sizes.end()) d.sizes_only_b.push_back(bytes);
  d.speedup_a = ra.speedup_geomean;
  d.speedup_b = rb.speedup_geomean;
  if (!ra.with_plugin.empty()) d.plugin_speedup_a = ra.with_plugin_speedup_geomean;
  if (!rb.with_plugin.empty()) d.plugin_speedup_b = rb.with_plugin_speedup_geomean;
  d.busbw_differs = !same(d.speedup_a, d.speedup_b) || d.plugin_speedup_a != d.plugin_speedup_b ||
                    std::any_of(d.busbw.begin(), d.busbw.end(), [](const BusbwRow& r) {
                      return !same(r.baseline_a, r.baseline_b) || !same(r.tuned_a, r.tuned_b);
                    });
  return d;
}

// Every collective of every communicator shape: the world's by its own name, another section's
// after the section ("rail: 2 nodes x 1 rank, all_reduce"), so that two profiles compare shape by
// shape.
std::vector<std::pair<std::string, const CollectiveProfile*>> collectives_by_section(const Profile& p) {
  std::vector<std::pair<std::string, const CollectiveProfile*>> named;
  for (const auto& [name, c] : p.collectives) named.emplace_back(name, &c);
  for (const CommunicatorSection& section : p.shapes)
    for (const auto& [name, c] : section.collectives)
      named.emplace_back(describe_section(section) + ", " + name, &c);
  return named;
}

// What NCCL said on the world under the defaults (else the shipped env), fact by fact.
std::map<std::string, std::string> nccl_facts(const Profile& p) {
  std::map<std::string, std::string> facts;
  const NcclObserved& observed = p.provenance.nccl_observed;
  const NcclObservation* o = observed.defaults ? &*observed.defaults : jobs_observation(observed);
  if (!o) return facts;
  if (!o->transport.empty()) facts["transport"] = o->transport;
  if (o->connections && o->gdr_connections)
    facts["GPUDirect RDMA"] = fmt::format("{} of {} connections", *o->gdr_connections, *o->connections);
  if (o->nvls_available)
    facts["NVLS"] = *o->nvls_available ? fmt::format("available, {} channels", o->nvls_channels.value_or(0))
                                       : std::string("unavailable");
  if (o->coll_channels) facts["channels"] = std::to_string(*o->coll_channels);
  if (!o->tuner.empty()) facts["tuner"] = o->tuner;
  return facts;
}

std::vector<FieldChange> nccl_said_changes(const Profile& a, const Profile& b) {
  const std::map<std::string, std::string> fa = nccl_facts(a), fb = nccl_facts(b);
  std::vector<FieldChange> out;
  for (const char* field : {"transport", "GPUDirect RDMA", "NVLS", "channels", "tuner"}) {
    const auto ia = fa.find(field), ib = fb.find(field);
    compare(out, field, ia == fa.end() ? "" : ia->second, ib == fb.end() ? "" : ib->second);
  }
  return out;
}

// The settings withheld from env on either side, by what they set: added, removed, or with another why.
std::vector<FieldChange> withheld_changes(const Profile& a, const Profile& b) {
  std::map<std::string, std::pair<std::string, std::string>> why;  // describe_env -> (A's, B's)
  for (const WithheldSetting& w : a.withheld) why[describe_env(w.env)].first = w.why;
  for (const WithheldSetting& w : b.withheld) why[describe_env(w.env)].second = w.why;
  std::vector<FieldChange> changes;
  for (const auto& [setting, sides] : why)
    if (sides.first != sides.second) changes.push_back({setting, sides.first, sides.second});
  return changes;
}

std::string describe_model_pair(const ModelPair& pair) {
  return fmt::format("{:.1f} us, {}", pair.latency_us,
                     pair.busbw ? format_busbw(*pair.busbw) + " GB/s" : std::string("busbw unknown"));
}

// NCCL's model on either side, collective by collective and pair by pair.
std::vector<ModelChange> model_changes(const Profile& a, const Profile& b) {
  using Pairs = std::map<std::string, std::string>;  // "RING/SIMPLE" -> describe_model_pair
  std::map<std::string, std::pair<Pairs, Pairs>> sides;
  const auto collect = [&sides](const Profile& p, bool first) {
    for (const auto& [name, pairs] : p.provenance.nccl_observed.nccl_model) {
      Pairs& into = first ? sides[name].first : sides[name].second;
      for (const ModelPair& pair : pairs) into[pair.algo + "/" + pair.proto] = describe_model_pair(pair);
    }
  };
  collect(a, true);
  collect(b, false);
  std::vector<ModelChange> changes;
  for (const auto& [name, both] : sides) {
    std::set<std::string> pairs;
    for (const auto& [pair, text] : both.first) pairs.insert(pair);
    for (const auto& [pair, text] : both.second) pairs.insert(pair);
    for (const std::string& pair : pairs) {
      const auto in_a = both.first.find(pair), in_b = both.second.find(pair);
      std::string before = in_a == both.first.end() ? "" : in_a->second;
      std::string after = in_b == both.second.end() ? "" : in_b->second;
      if (before != after) changes.push_back({name, pair, std::move(before), std::move(after)});
    }
  }
  return changes;
}

std::string size_list(const std::vector<std::uint64_t>& sizes) {
  std::string text;
  for (std::uint64_t bytes : sizes) text += (text.empty() ? "" : " ") + format_byte_size(bytes);
  return text;
}

// One collective's changes; under its name unless both profiles hold all_reduce alone.
std::string render_collective_diff(const CollectiveDiff& d, bool named) {
  std::string out;
  const std::string of = named ? " of " + d.name : "";
  if (!d.in_a || !d.in_b) return fmt::format("\n{}: measured in {} only\n", d.name, d.in_a ? "A" : "B");
  if (d.identical())
    return fmt::format("\n{}: unchanged ({} sizes, speedup {})\n", d.name, d.busbw.size(),
                       format_speedup(d.speedup_a));
  if (!d.per_size.empty()) {
    out += "\nper-size choices" + of + "\n";
    for (const ChoiceChange& c : d.per_size)
      out += fmt::format("  {:>8}: {} -> {}\n", format_byte_size(c.bytes), c.before, c.after);
  }
  // Only the sizes whose numbers changed, line by line; the others counted.
  std::vector<const BusbwRow*> changed;
  for (const BusbwRow& r : d.busbw)
    if (!same(r.baseline_a, r.baseline_b) || !same(r.tuned_a, r.tuned_b)) changed.push_back(&r);
  if (!changed.empty()) {
    out += fmt::format(
        "\nbusbw GB/s{} at the sizes both measured\n{:>10}  {:>10}  {:>10}  {:>7}  {:>10}  {:>10}  {:>7}\n",
        of, "size", "defaults A", "defaults B", "B/A", "tuned A", "tuned B", "B/A");
    for (const BusbwRow* row : changed) {
      const BusbwRow& r = *row;
      out += fmt::format("{:>10}  {:>10}  {:>10}  {:>7}  {:>10}  {:>10}  {:>7}\n", format_byte_size(r.bytes),
                         format_busbw(r.baseline_a), format_busbw(r.baseline_b),
                         ratio(r.baseline_a, r.baseline_b), format_busbw(r.tuned_a), format_busbw(r.tuned_b),
                         ratio(r.tuned_a, r.tuned_b));
    }
  }
  if (changed.size() < d.busbw.size())
    out += fmt::format("{} size{}{} unchanged\n", d.busbw.size() - changed.size(),
                       d.busbw.size() - changed.size() == 1 ? "" : "s", changed.empty() ? of : "");
  if (!d.sizes_only_a.empty()) out += "sizes only in A: " + size_list(d.sizes_only_a) + "\n";
  if (!d.sizes_only_b.empty()) out += "sizes only in B: " + size_list(d.sizes_only_b) + "\n";
  out += fmt::format("speedup{} over the defaults: {} -> {}\n", of, format_speedup(d.speedup_a),
                     format_speedup(d.speedup_b));
  if (d.plugin_speedup_a || d.plugin_speedup_b) {
    const auto text = [](const std::optional<double>& s) {
      return s ? format_speedup(*s) : std::string("not confirmed");
    };
    out += fmt::format("speedup{} with the tuner plugin: {} -> {}\n", of, text(d.plugin_speedup_a),
                       text(d.plugin_speedup_b));
  }
  return out;
}

}  // namespace

ProfileDiff diff_profiles(const Profile& a, const Profile& b) {
  ProfileDiff d;
  d.shape = shape_changes(a, b);
  d.env = env_changes(a, b);
  d.withheld = withheld_changes(a, b);
  using Named = std::vector<std::pair<std::string, const CollectiveProfile*>>;
  const Named in_a = collectives_by_section(a), in_b = collectives_by_section(b);
  std::vector<std::string> names;  // A's order, then what only B has
  for (const Named* side : {&in_a, &in_b})
    for (const auto& [name, c] : *side)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  const auto find = [](const Named& in, const std::string& name) -> const CollectiveProfile* {
    for (const auto& [n, c] : in)
      if (n == name) return c;
    return nullptr;
  };
  for (const std::string& name : names)
    d.collectives.push_back(collective_diff(name, find(in_a, name), find(in_b, name)));
  d.nccl_model = model_changes(a, b);
  d.nccl_said = nccl_said_changes(a, b);
  return d;
}

std::string render_profile_diff(const ProfileDiff& d, const Profile& a, std::string_view a_origin,
                                const Profile& b, std::string_view b_origin) {
  auto origin_line = [](const char* tag, std::string_view origin, const Profile& p) {
    return fmt::format("{} {} ({}, {})\n", tag, origin,
                       p.provenance.date.empty() ? "date unknown" : p.provenance.date,
                       p.provenance.tool.empty() ? "tool unknown" : p.provenance.tool);
  };
  std::string out = origin_line("A:", a_origin, a) + origin_line("B:", b_origin, b);
  if (d.identical()) return out + "identical: same shape, env, per-size choices and results\n";

  if (!d.shape.empty()) {
    out += "\nshape\n";
    for (const FieldChange& c : d.shape)
      out += fmt::format("  {}: {} -> {}\n", c.field, shown(c.before), shown(c.after));
  }
  if (!d.env.empty()) {
    out += "\nenv\n";
    for (const FieldChange& c : d.env) {
      if (c.before.empty())
        out += fmt::format("  + {}={}\n", c.field, c.after);
      else if (c.after.empty())
        out += fmt::format("  - {}={}\n", c.field, c.before);
      else
        out += fmt::format("  ~ {}: {} -> {}\n", c.field, c.before, c.after);
    }
  }
  if (!d.withheld.empty()) {
    out += "\nwithheld from env\n";
    for (const FieldChange& c : d.withheld) {
      if (c.before.empty())
        out += fmt::format("  + {}: {}\n", c.field, c.after);
      else if (c.after.empty())
        out += fmt::format("  - {}: {}\n", c.field, c.before);
      else
        out += fmt::format("  ~ {}: {} -> {}\n", c.field, c.before, c.after);
    }
  }
  if (!d.nccl_said.empty()) {
    out += "\nNCCL said (the world, under the defaults)\n";
    for (const FieldChange& c : d.nccl_said)
      out += fmt::format("  {}: {} -> {}\n", c.field, shown(c.before), shown(c.after));
  }
  const bool named = !(d.collectives.size() == 1 && d.collectives.front().name == kAllReduce);
  for (const CollectiveDiff& c : d.collectives) out += render_collective_diff(c, named);
  if (!d.nccl_model.empty()) {
    out += "\nNCCL's model (latency, busbw it predicts at large sizes)\n";
    for (const ModelChange& c : d.nccl_model) {
      const std::string what = c.collective + " " + c.pair;
      if (c.before.empty())
        out += fmt::format("  + {}: {}\n", what, c.after);
      else if (c.after.empty())
        out += fmt::format("  - {}: {}\n", what, c.before);
      else
        out += fmt::format("  ~ {}: {} -> {}\n", what, c.before, c.after);
    }
  }
  return out;
}

}  // namespace nccltune
