// libfakenccl.so: the NCCL functions nccltune uses, for machines without a GPU. This file makes
// and ends communicators (ncclCommInitRank, ncclCommSplit, ncclCommDestroy); a collective's run is
// fake_nccl_collectives.cpp's, groups and send/recv fake_nccl_groups.cpp's (fake_nccl_comm.h).
// Ranks in different processes really exchange and reduce data (SharedComm, keyed by the bytes
// of the ncclUniqueId), so broken bootstrap plumbing fails or times out and wrong data shows.
// Each op advances its stream's simulated clock in libfakecuda.so by the model's time.
// The model (NCCLTUNE_FAKE_MODEL, or NCCLTUNE_FAKE_MODEL_<tag> for a copy named
// libfakenccl-<tag>.so) and the NCCL_* environment are read once, at
// ncclCommInitRank; faults from the model fire there (init_error) or at every op (hang, crash,
// corrupt, slow_rank, slow_node, slow_link). Problems are one line on stderr, starting "fakenccl: ".
// NCCLTUNE_FAKE_TIMEOUT_S (default 60) bounds every wait for a peer. Under NCCL_DEBUG=INFO it
// prints NCCL 2.28's INFO lines (nccl_debug.h). NCCL_TUNER_PLUGIN loads a tuner plugin that
// chooses each collective's pair from a cost table, as NCCL does (tuner_plugin_host.h).
// ncclCommSplit makes communicators of their own from a parent's ranks, as NCCL's (FIDELITY.md F21).
#include <dlfcn.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "env_plugin_host.h"
#include "nccl_config.h"
#include "nvls_force.h"
#include "fake_nccl_comm.h"

extern char** environ;

namespace fakenccl {
namespace {

constexpr double kDefaultTimeoutS = 60;

// Finds the hooks in the libfakecuda.so this process loaded, by soname whatever its path, or in
// the global scope.
std::optional<FakeCudaHooks> find_fakecuda() {
  void* loaded = dlopen(kFakeCudaSoname, RTLD_NOW | RTLD_NOLOAD);
  auto find = [&](const char* name) {
    void* address = loaded ? dlsym(loaded, name) : nullptr;
    return address ? address : dlsym(RTLD_DEFAULT, name);
  };
  FakeCudaHooks hooks;
  hooks.advance_stream = reinterpret_cast<fakecuda_advance_stream_fn>(find("fakecuda_advance_stream"));
  hooks.stream_clock = reinterpret_cast<fakecuda_stream_clock_fn>(find("fakecuda_stream_clock"));
  hooks.current_device = reinterpret_cast<fakecuda_current_device_fn>(find("fakecuda_current_device"));
  hooks.is_device_range = reinterpret_cast<fakecuda_is_device_range_fn>(find("fakecuda_is_device_range"));
  if (loaded) dlclose(loaded);  // the product's own handle keeps it loaded
  if (!hooks.advance_stream || !hooks.stream_clock || !hooks.current_device || !hooks.is_device_range) return std::nullopt;
  return hooks;
}

double timeout_seconds() {
  const char* text = std::getenv("NCCLTUNE_FAKE_TIMEOUT_S");
  if (text == nullptr) return kDefaultTimeoutS;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  return end != text && *end == '\0' && value > 0 ? value : kDefaultTimeoutS;
}

// The model of this library: NCCLTUNE_FAKE_MODEL_<tag> when this file is a copy named
// libfakenccl-<tag>.so and that is set, else NCCLTUNE_FAKE_MODEL. Each copy dlopen'd in a
// process is a library of its own and reads its own model. The variable's name, for messages.
std::pair<const char*, std::string> model_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&model_path), &info) != 0 && info.dli_fname != nullptr) {
    std::string tagged = nccltune::fake::tagged_model_variable(info.dli_fname);
    if (const char* path = tagged.empty() ? nullptr : std::getenv(tagged.c_str())) return {path, tagged};
  }
  return {std::getenv("NCCLTUNE_FAKE_MODEL"), "NCCLTUNE_FAKE_MODEL"};
}

int model_nccl_version() {
  const char* path = model_path().first;
  if (path == nullptr) return nccltune::fake::kDefaultNcclVersion;
  Result<FakeModel> model = nccltune::fake::load_fake_model(path);
  return model ? model->nccl_version : nccltune::fake::kDefaultNcclVersion;
}

}  // namespace
}  // namespace fakenccl

using namespace fakenccl;

FAKE_EXPORT ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = model_nccl_version();
  return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* unique_id) {
  if (unique_id == nullptr) return ncclInvalidArgument;
  std::size_t filled = 0;
  while (filled < sizeof unique_id->internal) {
    const ssize_t got = getrandom(unique_id->internal + filled, sizeof unique_id->internal - filled, 0);
    if (got <= 0) {
      say("ncclGetUniqueId: getrandom failed");
      return ncclSystemError;
    }
    filled += static_cast<std::size_t>(got);
  }
  return ncclSuccess;
}

// The rank and size of the job that started this process, as the launcher says (Open MPI,
// Slurm), for NCCLTUNE_EMULATE_NODES: a worker inherits its MPI rank's environment. A process no
// launcher started (the tests' forked ranks) is its own job: the communicator's rank and size.
std::pair<int, int> launcher_rank(int comm_rank, int comm_size) {
  const auto number = [](const char* name) -> int {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return -1;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    return *end == '\0' && value >= 0 && value < (1 << 24) ? static_cast<int>(value) : -1;
  };
  for (const auto& [rank_var, size_var] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                           std::pair{"SLURM_PROCID", "SLURM_NTASKS"}}) {
    const int rank = number(rank_var), size = number(size_var);
    if (rank >= 0 && size > rank) return {rank, size};
  }
  return {comm_rank, comm_size};
}

namespace {

// FNV-1a of the id: NCCL's commHash stands in (the tuner plugin's commId).
std::uint64_t id_hash(const ncclUniqueId& id) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char byte : id.internal) hash = (hash ^ static_cast<unsigned char>(byte)) * 0x100000001b3ull;
  return hash;
}

// How late this process reaches each collective: the sum of the model's late_rank faults that
// hold for the environment and name its launcher rank or its emulated node.
double late_delay_us(const FakeModel& model, const ProcessSetup& process, int node) {
  double delay = 0;
  for (const nccltune::fake::Fault& fault : model.faults) {
    if (fault.kind != FaultKind::late_rank || !nccltune::fake::holds(fault.when, process.env)) continue;
    if ((fault.rank && *fault.rank == process.world_rank) || (fault.node && *fault.node == node))
      delay += fault.delay_us;
  }
  return delay;
}

// The rest of a communicator's init once its ranks have met in `shared`, for ncclCommInitRank and
// ncclCommSplit alike: its nodes from its ranks' hosts, or NVLink domains under MNNVL (F18, F25),
// the model for its own shape, its faults, its INFO lines and its tuner plugin. `who` starts its stderr
// lines, `function` names the call in the plugin's WARN line. `plugin_env`: the env plugin's outcome, from
// ncclCommInitRank only. `version_line`: NCCL prints its version from ncclCommInitRankDev only (showVersion,
// init.cc:1979 at v2.28.9), never from a split. `shared_from`: the channels a split child of a
// parent that shares its resources is capped at (split_share.h); nullptr for the rest.
ncclResult_t finish_init(ncclComm_t* comm, const std::string& who, const char* function, ProcessSetup process,
                         SharedComm shared, const ncclUniqueId& id,
                         const nccltune::fake::PluginEnv* plugin_env, bool version_line,
                         const std::string& comm_name,
                         const nccltune::fake::SharedChannels* shared_from = nullptr) {
  const int rank = shared.rank();
  const int nranks = shared.nranks();
  const nccltune::fake::NcclEnv& env = process.env;
  // NCCL counts nodes by host: every rank's host, then this rank's place among them. A
  // communicator split off a job gets its own count, whatever its ranks' numbers.
  Result<std::vector<std::string>> hosts = shared.all_texts(process.host);
  if (!hosts) {
    say(who + hosts.error());
    return ncclSystemError;
  }
  // On a multi-node NVLink fabric NCCL's node may be the NVLink domain (mnnvl_domains.h). The
  // emulated host indexes the model's node faults name; "-node<k>" suffixes count only when this
  // process's emulation made them.
  const nccltune::fake::NcclNodeKeys keys = nccltune::fake::nccl_node_keys(
      *hosts, nccltune::fake::emulated_node_indexes(*hosts, process.emulated), rank, process.model.mnnvl, env);
  const nccltune::fake::RankPlace place = nccltune::fake::place_in_comm(*hosts, keys.node_of_rank, rank);
  const nccltune::fake::CommNodes nodes =
      nccltune::fake::comm_nodes(*hosts, keys.node_of_rank, rank, process.emulated);
  // The model of this node count (its `nodes` entry), and each collective's own entry within it.
  const auto failed_init = [&](const std::string& why, ncclResult_t result) {
    say(who + why);
    shared.mark_failed();
    return result;
  };
  if (plugin_env != nullptr && plugin_env->init_failed) {
    for (const auto& line : plugin_env->lines)
      if (line.warning) say(who + line.text);
    return failed_init("the env plugin's init failed", ncclSystemError);
  }
  // ncclMnnvlCheck (src/mnnvl.cc): a clique whose fabric memory IMEX cannot share fails the init.
  if (keys.mnnvl.enabled && !process.model.mnnvl->imex) {
    const std::string why = "MNNVL (cliqueSize " + std::to_string(keys.mnnvl.clique_size) +
                            ") is available but not working on this system. Check the IMEX channel configuration "
                            "(/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.";
    DebugLog(nccltune::fake::debug_settings(env), place.host, process.device).warn(why);
    return failed_init(why, ncclSystemError);
  }
  // A `nodes` entry may name the ranks on each node; uneven communicators match none that do.
  const int ranks_per_node = nranks % place.nodes == 0 && nodes.fewest_local_ranks == nranks / place.nodes
                                 ? nranks / place.nodes
                                 : 0;
  FakeModel node_model = nccltune::fake::model_for_nodes(process.model, place.nodes, ranks_per_node);
  Result<CommModel> behaviour = nccltune::fake::resolve_comm_model(
      nccltune::fake::model_for_collective(node_model, ""), env, rank, nranks, "all_reduce", nodes);
  if (!behaviour) return failed_init(behaviour.error(), ncclInvalidUsage);
  if (behaviour->has(FaultKind::init_error)) return failed_init("init_error fault: failing", ncclSystemError);
  if (shared_from) nccltune::fake::cap_to_shared_channels(*behaviour, node_model, *shared_from);
  std::map<std::string, OpModel> ops;
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall"}) {
    FakeModel op_model = nccltune::fake::model_for_collective(node_model, op);
    Result<CommModel> op_behaviour =
        nccltune::fake::resolve_comm_model(op_model, env, rank, nranks, op, nodes);
    if (!op_behaviour) return failed_init(std::string(op) + ": " + op_behaviour.error(), ncclInvalidUsage);
    if (shared_from) nccltune::fake::cap_to_shared_channels(*op_behaviour, op_model, *shared_from);
    ops.emplace(op, OpModel{std::move(op_model), std::move(*op_behaviour)});
  }
  DebugLog log(nccltune::fake::debug_settings(env), place.host, process.device);
  if (plugin_env != nullptr) {
    for (const auto& line : plugin_env->lines) {
      if (line.warning)
        log.warn(line.text);
      else
        log.info(nccltune::fake::kSubsysInit | nccltune::fake::kSubsysEnv, line.text);
    }
  }
  for (const nccltune::fake::LogLine& line :
       nccltune::fake::init_lines(node_model, env, *behaviour, place, keys.mnnvl)) {
    if (!version_line && line.message.starts_with("NCCL version ")) continue;
    log.info(line.subsystems, line.message);
  }
  // NCCL_NVLS_ENABLE=1 without multicast: NCCL's multicast setup fails, and init with it.
  if (const auto warn = nccltune::fake::forced_nvls_failure(node_model, env, nodes, nranks)) {
    log.warn(*warn);
    return failed_init(*warn + " (NCCL_NVLS_ENABLE forces NVLS on GPUs without multicast)", ncclUnhandledCudaError);
  }
  if (rank == 0) {
    std::vector<nccltune::fake::TuningTableRow> rows;
    for (const auto& [name, op] :
         {std::pair{"Broadcast", "broadcast"}, std::pair{"Reduce", "reduce"},
          std::pair{"AllGather", "all_gather"}, std::pair{"ReduceScatter", "reduce_scatter"},
          std::pair{"AllReduce", "all_reduce"}}) {
      const OpModel& op_model = ops.at(op);
      rows.push_back({name, op, &op_model.model, &op_model.behaviour});
    }
    for (const std::string& line : nccltune::fake::tuning_table_lines(rows))
      log.info(nccltune::fake::kSubsysTuning, line);
  }
  // NCCL_TUNER_PLUGIN, or "" when unset: NCCL then looks for libnccl-tuner.so (FIDELITY.md F35).
  const std::string plugin = [&]() -> std::string {
    const auto found = env.find("NCCL_TUNER_PLUGIN");
    return found == env.end() ? "" : found->second;
  }();
  auto created = std::make_unique<ncclComm>(std::move(node_model), std::move(*behaviour), std::move(ops),
                                            std::move(shared), std::move(process), id, std::move(log));
  created->shared_channels = shared_from ? *shared_from
                                         : nccltune::fake::SharedChannels{created->behaviour.channels,
                                                                          created->behaviour.nvls_channels};
  // The tuner plugin, once the node count is known (initTransportsRank in NCCL's src/init.cc):
  // its init failing fails the communicator, as NCCLCHECK does there.
  {
    TunerPluginHost::Opened opened = TunerPluginHost::open(
        plugin, created->model.nccl_version, id_hash(id), static_cast<std::size_t>(nranks),
        static_cast<std::size_t>(place.nodes), created->log);
    if (opened.init_failed) {
      const std::string why = "tuner plugin " + (plugin.empty() ? "libnccl-tuner.so" : plugin) + ": init returned " +
                              std::to_string(opened.init_result) + "; " + function + " fails";
      created->log.warn(why);
      created->shared.mark_failed();
      say(who + why);
      return opened.init_result;
    }
    created->tuner = std::move(opened.host);
  }
  created->name = comm_name;
  created->late_us = late_delay_us(created->model, created->process, nodes.node);
  // The profiler plugin, after the tuner (ncclProfilerPluginInit, init.cc:1251 at v2.28.9): its
  // init failing leaves the communicator without it.
  {
    const nccltune::fake::NcclEnv& own_env = created->process.env;  // `process` moved into the communicator
    const auto found = own_env.find("NCCL_PROFILER_PLUGIN");
    const std::optional<std::string> profiler =
        found == own_env.end() ? std::nullopt : std::optional<std::string>(found->second);
    created->profiler = ProfilerPluginHost::open(
        profiler, created->model.nccl_version,
        nccltune::fake::ProfiledComm{id_hash(id), comm_name, place.nodes, nranks, rank}, created->log);
  }
  *comm = created.release();
  return ncclSuccess;
}

// The id of the communicator of `color` split off `parent`: every rank of that color derives the
// same one from what NCCL hashes into the child's commHash (parent, split count, color:
// ncclCommInitRankFunc, init.cc:1552-1557 at v2.28.9), so each split's communicators meet in
// segments of their own. FNV-1a of the three, spread over the id's bytes by splitmix64.
ncclUniqueId split_id(const ncclUniqueId& parent, int split_count, int color) {
  std::uint64_t hash = id_hash(parent);
  for (const int value : {split_count, color}) {
    unsigned char bytes[sizeof value];
    std::memcpy(bytes, &value, sizeof value);
    for (const unsigned char byte : bytes) hash = (hash ^ byte) * 0x100000001b3ull;
  }
  ncclUniqueId id{};
  for (std::size_t at = 0; at < sizeof id.internal; at += sizeof(std::uint64_t)) {
    hash += 0x9e3779b97f4a7c15ull;
    std::uint64_t word = hash;
    word = (word ^ (word >> 30)) * 0xbf58476d1ce4e5b9ull;
    word = (word ^ (word >> 27)) * 0x94d049bb133111ebull;
    word ^= word >> 31;
    std::memcpy(id.internal + at, &word, sizeof word);
  }
  return id;
}

}  // namespace

FAKE_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId comm_id, int rank) {
  if (comm == nullptr || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  *comm = nullptr;
  const std::string who = "rank " + std::to_string(rank) + ": ncclCommInitRank: ";
  const std::optional<FakeCudaHooks> hooks = find_fakecuda();
  if (!hooks) {
    say(who + "libfakecuda.so is not loaded in this process (load it before ncclCommInitRank)");
    return ncclSystemError;
  }
  if (hooks->current_device() < 0) {
    say(who + "no current CUDA context (cuCtxSetCurrent first)");
    return ncclInvalidUsage;
  }
  const auto [path, variable] = model_path();
  if (path == nullptr) {
    say(who + variable + " is not set");
    return ncclInvalidUsage;
  }
  Result<FakeModel> model = nccltune::fake::load_fake_model(path);
  if (!model) {
    say(model.error());
    return ncclInvalidUsage;
  }
  // A real communicator takes a second or more to come up (init_cost_ms.nccl_comm).
  if (model->init_cost.nccl_comm_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(model->init_cost.nccl_comm_ms));
  // Every variable through the env plugin, as NCCL 2.28.9 reads them (env_plugin_host.h).
  nccltune::fake::PluginEnv plugin_env =
      nccltune::fake::read_nccl_env_through_plugin(environ, model->nccl_version);
  Result<SharedComm> shared = SharedComm::join(comm_id, nranks, rank, timeout_seconds());
  if (!shared) {
    say(who + shared.error());
    return ncclSystemError;
  }
  char hostname[256] = {};
  gethostname(hostname, sizeof hostname - 1);
  const auto [world_rank, world_size] = launcher_rank(rank, nranks);
  ProcessSetup process;
  process.host =
      nccltune::fake::process_host(hostname, std::getenv("NCCLTUNE_EMULATE_NODES"), world_rank, world_size);
  process.emulated = process.host != nccltune::fake::process_host(hostname, nullptr, world_rank, world_size);
  // NVLink domains are whole blocks of emulated hosts: a model whose domains do not fill the
  // emulated hosts is a mistake in it, said once at init.
  if (model->mnnvl && process.emulated) {
    const std::string problem = nccltune::fake::domain_layout_problem(
        *model->mnnvl, model->file,
        nccltune::fake::emulated_host_count(std::getenv("NCCLTUNE_EMULATE_NODES"), world_size));
    if (!problem.empty()) {
      say(problem);
      shared->mark_failed();
      return ncclInvalidUsage;
    }
  }
  process.world_rank = world_rank;
  process.device = hooks->current_device();
  process.hooks = *hooks;
  process.env = plugin_env.env;
  process.model = std::move(*model);
  return finish_init(comm, who, "ncclCommInitRank", std::move(process), std::move(*shared), comm_id,
                     &plugin_env,
                     /*version_line=*/true, /*comm_name=*/"");
}

// As NCCL 2.28.9's ncclCommSplit (ncclCommInitChildComm and ncclCommInitRankFunc, src/init.cc;
// FIDELITY.md F21): collective over the parent's ranks, NCCL_SPLIT_NOCOLOR ones included. Every
// rank posts its color and key (commGetSplitInfo's bootstrapAllGather); the ranks of one color
// form a communicator, ordered by key, ties by parent rank; NOCOLOR gets NULL. Only -1 is
// NOCOLOR: any other color, negative too, forms a communicator, as NCCL compares with == only.
// The child is a communicator of its own, as from ncclCommInitRank: its nodes, model, faults,
// init cost, INFO lines (no version line), tuner and profiler plugins. Of `config` the fake reads
// commName (config_comm_name); NULL inherits the parent's (copyCommConfig).
FAKE_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                       ncclConfig_t* config) {
  // CommCheck and PtrCheck (init.cc:2558-2559), then ncclCommEnsureReady (:2568): the parent's
  // asynchronous error, kept.
  if (comm == nullptr || newcomm == nullptr) return ncclInvalidArgument;
  if (comm->async_error != ncclSuccess) return comm->async_error;
  *newcomm = nullptr;
  // Every split counts, NOCOLOR too (:2621), so that each one's communicators are new.
  const int split_count = ++comm->split_count;
  const int parent_rank = comm->behaviour.rank;
  const std::string who = "rank " + std::to_string(parent_rank) + ": ncclCommSplit(color " +
                          std::to_string(color) + ", key " + std::to_string(key) + "): ";
  // parseCommConfig (init.cc:1804-1822 at v2.28.9): the config names the child (commName), and
  // one NCCL_CONFIG_INITIALIZER did not make fails the call.
  const std::optional<std::string> name =
      config == nullptr ? std::optional<std::string>(comm->name) : nccltune::fake::config_comm_name(config);
  if (!name) {
    say(who + "ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER");
    return ncclInvalidArgument;
  }
  if (color == kSplitNoColor)
    comm->log.info(nccltune::fake::kSubsysInit, "Rank " + std::to_string(parent_rank) +
                                                    " has color with NCCL_SPLIT_NOCOLOR, not creating a new "
                                                    "communicator");
  Result<std::vector<std::string>> posted =
      comm->shared.all_texts(std::to_string(color) + " " + std::to_string(key));
  if (!posted) {
    say(who + posted.error());
    return ncclSystemError;
  }
  if (color == kSplitNoColor) return ncclSuccess;
  // commGetSplitInfo (init.cc:1455-1495): the parent's ranks of this color, each inserted after
  // those of key <= its own, so ties keep parent-rank order.
  std::vector<std::pair<int, int>> members;  // key, parent rank
  for (int r = 0; r < static_cast<int>(posted->size()); ++r) {
    int their_color = 0, their_key = 0;
    if (std::sscanf((*posted)[static_cast<std::size_t>(r)].c_str(), "%d %d", &their_color, &their_key) != 2) {
      say(who + "rank " + std::to_string(r) + " posted '" + (*posted)[static_cast<std::size_t>(r)] + "'");
      return ncclInternalError;
    }
    if (their_color == color) members.emplace_back(their_key, r);
  }
  std::stable_sort(members.begin(), members.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const int nranks = static_cast<int>(members.size());
  int rank = 0;
  while (members[static_cast<std::size_t>(rank)].second != parent_rank) ++rank;
  // Each split is a communicator's init, less what its process and parent already did: no root
  // rendezvous (bootstrapSplit, init.cc:1563-1565), and with shared resources no proxy of its own
  // (init.cc:1255-1259, bootstrap.cc:844), so its own cost.
  const bool share = nccltune::fake::splits_share_resources(comm->process.env);
  const nccltune::fake::InitCost& cost = comm->process.model.init_cost;
  if (const int split_ms = share ? cost.shared_split_ms() : cost.split_ms(); split_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(split_ms));
  const ncclUniqueId child_id = split_id(comm->id, split_count, color);
  Result<SharedComm> shared = SharedComm::join(child_id, nranks, rank, timeout_seconds());
  if (!shared) {
    say(who + shared.error());
    return ncclSystemError;
  }
  return finish_init(newcomm, who, "ncclCommSplit", comm->process, std::move(*shared), child_id, nullptr,
                     /*version_line=*/false, *name, share ? &comm->shared_channels : nullptr);
}

FAKE_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclInvalidArgument;
  leave_group(comm);
  delete comm;
  return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  comm->shared.mark_failed();
  return ncclCommDestroy(comm);
}

FAKE_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  if (comm == nullptr || async_error == nullptr) return ncclInvalidArgument;
  *async_error = comm->async_error;
  return ncclSuccess;
}

FAKE_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}
