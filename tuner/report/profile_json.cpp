#include "report/profile_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/json_optional.h"
#include "profile/profile.h"

namespace nccltune {

namespace {

using Json = nlohmann::ordered_json;

Json number_or_null(double value) {
  return std::isfinite(value) ? Json(value) : Json(nullptr);
}

Json text_or_null(const std::string& text) {
  return text.empty() ? Json(nullptr) : Json(text);
}

Json env_json(const Env& env) {
  Json out = Json::object();
  for (const auto& [name, value] : env) out[name] = value;
  return out;
}

Json choice_json(const SizeChoice& c) {
  Json out{{"min_bytes", c.min_bytes},
           {"max_bytes", c.max_bytes},
           {"algo", text_or_null(c.algo)},
           {"proto", text_or_null(c.proto)},
           {"channels", c.channels}};
  if (c.chunk_bytes > 0) out["chunk_bytes"] = c.chunk_bytes;
  return out;
}

Json switch_json(const SizeSwitch& s) {
  return Json{{"lo", s.lo},
              {"hi", s.hi},
              {"bytes", s.bytes},
              {"fit", s.fit},
              {"below", s.below},
              {"above", s.above},
              {"below_latency_us", number_or_null(s.below_latency_us)},
              {"below_gbps", number_or_null(s.below_gbps)},
              {"above_latency_us", number_or_null(s.above_latency_us)},
              {"above_gbps", number_or_null(s.above_gbps)}};
}

Json speedup_json(const SpeedupView& s) {
  return Json{{"geomean", number_or_null(s.geomean)},
              {"best", s.best ? Json{{"bytes", s.best->bytes}, {"ratio", number_or_null(s.best->ratio)}} : Json(nullptr)}};
}

Json model_json(const Profile& profile, const std::string& name) {
  const auto& models = profile.provenance.nccl_observed.nccl_model;
  const auto model = models.find(name);
  if (model == models.end()) return nullptr;
  Json pairs = Json::array();
  for (const ModelPair& pair : model->second)
    pairs.push_back({{"algo", pair.algo},
                     {"proto", pair.proto},
                     {"latency_us", pair.latency_us},
                     {"busbw_gbps", optional_to_json(pair.busbw)}});
  return pairs;
}

Json collective_json(const Profile& profile, const CollectiveView& v, bool world) {
  const CollectiveProfile& c = *v.profile;
  Json per_size = Json::array();
  for (const SizeChoice& choice : c.per_size) per_size.push_back(choice_json(choice));
  Json switches = Json::array();
  for (const SwitchView& at : v.switches) switches.push_back(switch_json(at.at));
  Json sizes = Json::array();
  for (const SizeView& s : v.sizes)
    sizes.push_back({{"bytes", s.bytes},
                     {"defaults_gbps", number_or_null(s.defaults_gbps)},
                     {"tuned_gbps", number_or_null(s.tuned_gbps)},
                     {"with_plugin_gbps", number_or_null(s.with_plugin_gbps)},
                     {"speedup", number_or_null(s.speedup)},
                     {"with_plugin_speedup", number_or_null(s.with_plugin_speedup)},
                     {"choice", s.choice ? Json{{"algo", text_or_null(s.choice->algo)},
                                                {"proto", text_or_null(s.choice->proto)},
                                                {"channels", s.choice->channels}}
                                         : Json(nullptr)},
                     {"nccl_chose", text_or_null(s.nccl_chose)}});
  return Json{{"name", v.name},
              {"guard", c.guard},
              {"measured", c.measured.known() ? Json{{"min_bytes", c.measured.min_bytes},
                                                     {"max_bytes", c.measured.max_bytes}}
                                              : Json(nullptr)},
              {"speedup",
               {{"tuned", speedup_json(v.tuned)},
                {"with_plugin", v.with_plugin ? speedup_json(*v.with_plugin) : Json(nullptr)},
                {"worst_size_ratio", number_or_null(v.worst_ratio)}}},
              {"confirmation", {{"status", to_string(v.confirmation)}, {"reason", text_or_null(v.reason)}}},
              {"peak",
               {{"busbw_gbps", optional_to_json(v.peak_gbps)},
                {"bottleneck", text_or_null(v.peak_bottleneck)},
                {"bytes", v.sizes.empty() ? Json(nullptr) : Json(v.sizes.back().bytes)},
                {"percent",
                 v.peak_percent && std::isfinite(*v.peak_percent) ? Json(*v.peak_percent) : Json(nullptr)}}},
              {"per_size", std::move(per_size)},
              {"switches", std::move(switches)},
              {"sizes", std::move(sizes)},
              {"nccl_model", world ? model_json(profile, v.name) : Json(nullptr)}};
}

}  // namespace

std::string render_profile_json(const ProfileView& view, const ShowContext& context) {
  const Profile& p = *view.profile;
  const ProfileShape& s = p.shape;
  Json withheld = Json::array();
  for (const WithheldSetting& w : p.withheld) withheld.push_back({{"env", env_json(w.env)}, {"why", w.why}});
  Json communicators = Json::array();
  for (const SectionView& section : view.sections) {
    Json collectives = Json::array();
    for (const CollectiveView& c : section.collectives)
      collectives.push_back(collective_json(p, c, section.role == CommRole::world));
    communicators.push_back({{"role", to_string(section.role)},
                             {"nodes", section.nodes},
                             {"ranks_per_node", section.ranks_per_node},
                             {"collectives", std::move(collectives)}});
  }
  Json failed = Json::array();
  for (const FailedTrial& f : p.failed)
    failed.push_back(
        {{"env", env_json(f.env)}, {"outcome", to_string(f.outcome)}, {"reason", text_or_null(f.reason)}});
  const ProfileProvenance& pv = p.provenance;
  const bool v3 = !p.shapes.empty() || !p.withheld.empty();
  const Json document{{"schema", kShowSchema},
                      {"context",
                       {{"profile", context.profile},
                        {"profile_schema", v3 ? kProfileSchemaV3 : kProfileSchema},
                        {"generated_by", context.generated_by},
                        {"stored_node_counts", context.stored_counts}}},
                      {"shape",
                       {{"node_type_key", s.node_type_key},
                        {"nodes", s.nodes},
                        {"gpus_per_node", s.gpus_per_node},
                        {"ranks", s.ranks},
                        {"hosts", s.host_count()},
                        {"mnnvl", s.mnnvl},
                        {"described", describe_profile_shape(s)},
                        {"gpu", text_or_null(s.gpu)},
                        {"nvswitch", s.nvswitch},
                        {"nics_per_node", s.nics_per_node},
                        {"nic", text_or_null(s.nic)},
                        {"gpu_nic_affinity", text_or_null(s.gpu_nic_affinity)},
                        {"nccl_version", text_or_null(s.nccl_version)},
                        {"cuda_driver", text_or_null(s.cuda_driver)}}},
                      {"keep_defaults", p.keep_defaults},
                      {"env", env_json(p.env)},
                      {"withheld", std::move(withheld)},
                      {"notes", p.notes},
                      {"communicators", std::move(communicators)},
                      {"provenance",
                       {{"tool", text_or_null(pv.tool)},
                        {"date", text_or_null(pv.date)},
                        {"trials", pv.trials},
        {"pairs", pv.pairs},
                        {"failed_trials", pv.failed_trials},
                        {"duration_s", number_or_null(pv.duration_s)},
                        {"objective", pv.objective.empty() ? "balanced" : pv.objective},
                        {"hosts", pv.hosts},
                        {"noise_floor", number_or_null(pv.noise_floor)},
                        {"confirmation", text_or_null(pv.confirmation)},
                        {"plugin_confirmation", text_or_null(pv.plugin_confirmation)}}},
                      {"failed", std::move(failed)}};
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace nccltune
