#include "collectives/worker.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>

#include "base/atomic_file.h"
#include "collectives/collective_spec.h"
#include "collectives/cuda_driver.h"
#include "collectives/nccl_library.h"
#include "collectives/tuner_control.h"
#include "collectives/worker_protocol.h"

namespace nccltune {
namespace {

class EventWriter {
 public:
  explicit EventWriter(int fd) : fd_(fd) {}
  void send(const WorkerEvent& event) const {
    // A failed write means the parent is gone: there is nothing else to tell it.
    (void)write_all(fd_, encode_event(event) + "\n");
  }
  int fail(const std::string& stage, const std::string& message) const {
    WorkerEvent event;
    event.kind = WorkerEvent::Kind::error;
    event.stage = stage;
    event.message = message;
    send(event);
    return 1;
  }

 private:
  int fd_;
};

// Reads one line from `fd`; nullopt at end of file.
std::optional<std::string> read_line(int fd) {
  std::string line;
  char c = 0;
  while (true) {
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    if (c == '\n') return line;
    line += c;
  }
}

Result<nlohmann::json> read_command(int fd, const char* expected) {
  auto line = read_line(fd);
  if (!line) return Error{std::string("the parent closed the command pipe before '") + expected + "'"};
  try {
    auto json = nlohmann::json::parse(*line);
    if (json.value("cmd", "") != expected)
      return Error{std::string("expected the '") + expected + "' command"};
    return json;
  } catch (const nlohmann::json::exception& e) {
    return Error{std::string("malformed command: ") + e.what()};
  }
}

// Pair mode and service counting: the control block of the tuner plugin at `path`. The library
// stays loaded for the worker's life (NCCL's dlopen of the same path shares this copy, and its
// dlclose at the last communicator does not unload it).
Result<NcclTuneControl*> open_tuner_control(const std::string& path) {
  void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return Error{"cannot load the tuner plugin: " + std::string(::dlerror())};
  auto* control = static_cast<NcclTuneControl*>(::dlsym(library, kTunerControlSymbol));
  if (control == nullptr)
    return Error{path + " has no " + kTunerControlSymbol + " (not this nccltune's tuner plugin?)"};
  if (control->version != kTunerControlVersion)
    return Error{path + " has control block version " + std::to_string(control->version) +
                 ", this worker writes " + std::to_string(kTunerControlVersion)};
  return control;
}

// Service counting: what the plugin did with one size's calls, the counts since `before`.
PluginService service_since(const NcclTuneControl& control, const PluginService& before) {
  PluginService service{control.served - before.served, control.declined - before.declined, {}};
  if (service.declined > 0) service.declined_why = control.declined_why;
  return service;
}

// One communicator to sweep on: its shape's name and this rank's context there.
struct ShapeContext {
  std::string comm;
  SweepContext context;
};

// One sweep of each collective on each communicator (config.comms' order): under NCCL's own
// choices, or in pair mode once per pair (the pair loop outermost: every pair runs on every
// communicator). A pair gets buffers filled afresh (run_size_sweep fills them) and its own data
// check, so a pair that corrupts cannot spoil the next one's.
Status run_sweeps(const std::vector<ShapeContext>& shapes, const std::vector<const CollectiveSpec*>& specs,
                  const WorkerConfig& config, NcclTuneControl* control, const EventWriter& events) {
  const bool pair_mode = control && !config.pairs.empty();
  const std::size_t rounds = pair_mode ? config.pairs.size() : 1;
  for (std::size_t p = 0; p < rounds; ++p) {
    // A pair with no cost table cell (algorithm < 0) forces nothing: NCCL's own choice runs.
    const bool forced = pair_mode && config.pairs[p].algorithm >= 0 && config.pairs[p].protocol >= 0;
    if (pair_mode) {
      control->algorithm = config.pairs[p].algorithm;
      control->protocol = config.pairs[p].protocol;
      control->unavailable = control->forced = 0;
      control->active = forced ? 1 : 0;
    }
    for (const ShapeContext& shape : shapes)
      for (const CollectiveSpec* spec : specs) {
        const SweepContext& context = shape.context;
        std::uint64_t unavailable_before = control ? control->unavailable : 0;
        std::uint64_t forced_before = control ? control->forced : 0;
        PluginService service_before =
            control ? PluginService{control->served, control->declined, {}} : PluginService{};
        auto measured = run_size_sweep(context, *spec, config.sweep, [&](const SizeMeasurement& size) {
          WorkerEvent event;
          event.kind = WorkerEvent::Kind::size;
          event.op = std::string(spec->name());
          event.size = size;
          event.comm = shape.comm;
          if (control && config.count_service) {
            event.service = service_since(*control, service_before);
            service_before = {control->served, control->declined, {}};
          }
          if (pair_mode) {
            event.pair = static_cast<int>(p);
            // The pair ran at this size only if every call forced it: a call NCCL's table did not
            // offer it to, or no call at all (an NCCL that never asked the plugin), ran NCCL's own.
            event.unavailable =
                forced && (control->unavailable > unavailable_before || control->forced == forced_before);
            unavailable_before = control->unavailable;
            forced_before = control->forced;
          }
          events.send(event);
        });
        if (!measured) {
          if (control) control->active = 0;
          const std::string under = !pair_mode ? ""
                                    : forced ? " under " + config.pairs[p].algo + "/" + config.pairs[p].proto
                                             : " under NCCL's own choice";
          const std::string on = shape.comm == "world" ? "" : " on the " + shape.comm + " communicator";
          return Error{std::string(spec->name()) + on + under + ": " + measured.error()};
        }
      }
  }
  if (control) control->active = 0;
  return Ok{};
}

}  // namespace

int run_worker(int command_fd, int event_fd) {
  const EventWriter events(event_fd);
  auto start = read_command(command_fd, "start");
  if (!start) return events.fail("load", start.error());
  auto config = worker_config_from_json(*start);
  if (!config) return events.fail("load", config.error());
  std::vector<const CollectiveSpec*> specs;
  for (const std::string& name : config->collectives) {
    const CollectiveSpec* spec = find_collective(name);
    if (!spec)
      return events.fail("load", "unknown collective '" + name + "' (known: " + collective_names() + ")");
    specs.push_back(spec);
  }

  // Before NCCL loads the plugin: service counting must be on when the communicator's init asks
  // it for a profile.
  NcclTuneControl* control = nullptr;
  if (!config->pairs.empty() || config->count_service) {
    auto opened = open_tuner_control(config->tuner_plugin);
    if (!opened)
      return events.fail("load",
                         (config->pairs.empty() ? "service counting: " : "pair mode: ") + opened.error());
    control = *opened;
    control->count_service = config->count_service ? 1 : 0;
    control->served = control->declined = 0;
  }

  auto cuda = CudaDriver::load(config->cuda_lib);
  if (!cuda) return events.fail("load", cuda.error());
  auto nccl = NcclLibrary::load(config->nccl_lib);
  if (!nccl) return events.fail("load", nccl.error());
  auto device = cuda->device_info(config->device);
  if (!device) return events.fail("load", device.error());
  auto context = cuda->use_device(config->device);
  if (!context) return events.fail("load", context.error());
  auto stream = cuda->create_stream();
  if (!stream) return events.fail("load", stream.error());

  WorkerEvent loaded;
  loaded.kind = WorkerEvent::Kind::loaded;
  loaded.nccl_version = nccl->version().ok() ? nccl->version().value() : 0;
  loaded.cuda_driver = cuda->driver_version().ok() ? cuda->driver_version().value() : 0;
  loaded.device = {device->name, device->pci_bus_id, device->sm};
  events.send(loaded);

  if (config->rank == 0) {
    auto id = nccl->unique_id();
    if (!id) return events.fail("init", id.error());
    WorkerEvent unique;
    unique.kind = WorkerEvent::Kind::unique_id;
    unique.id_hex = bytes_to_hex(&*id, sizeof(*id));
    events.send(unique);
  }
  auto init = read_command(command_fd, "init");
  if (!init) return events.fail("init", init.error());
  nccl_abi::ncclUniqueId id{};
  if (!hex_to_bytes(init->value("id", ""), &id, sizeof id)) return events.fail("init", "malformed unique id");
  auto comm = nccl->init_rank(config->nranks, id, config->rank);
  if (!comm) return events.fail("init", comm.error());

  // The shapes split from the world, once each, before any sweep: a rail (color = local rank, key
  // = node) and a node (color = node, key = local rank). Each split is a communicator's init.
  std::optional<NcclComm> rail, on_node;
  int communicators = 1;
  const auto wants = [&](const char* name) {
    return std::find(config->comms.begin(), config->comms.end(), name) != config->comms.end();
  };
  for (const char* name : {"rail", "node"}) {
    if (!wants(name)) continue;
    const bool is_rail = std::string(name) == "rail";
    auto made = is_rail ? nccl->split(*comm, config->device, config->node)
                        : nccl->split(*comm, config->node, config->device);
    if (!made)
      return events.fail("init", std::string("splitting the ") + name + " communicator: " + made.error());
    if (!made->has_value())
      return events.fail("init",
                         std::string("splitting the ") + name + " communicator: this rank is in none");
    (is_rail ? rail : on_node).emplace(std::move(**made));
    ++communicators;
  }
  WorkerEvent ready;
  ready.kind = WorkerEvent::Kind::ready;
  events.send(ready);

  std::vector<ShapeContext> shapes;
  for (const std::string& name : config->comms) {
    const NcclComm& on = name == "rail" ? *rail : name == "node" ? *on_node : *comm;
    const auto [rank, nranks] = comm_rank_and_size(*config, name);
    shapes.push_back({name, SweepContext{*cuda, *nccl, on, *stream, rank, nranks}});
  }
  if (Status swept = run_sweeps(shapes, specs, *config, control, events); !swept)
    return events.fail("run", swept.error());
  WorkerEvent done;
  done.kind = WorkerEvent::Kind::done;
  done.communicators = communicators;
  events.send(done);
  return 0;
}

int run_worker_process() {
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 1;  // the parent died before prctl took effect
  return run_worker(STDIN_FILENO, kWorkerEventFd);
}

}  // namespace nccltune
