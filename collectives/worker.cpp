#include "collectives/worker.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "collectives/collective_spec.h"
#include "collectives/cuda_driver.h"
#include "collectives/nccl_library.h"
#include "collectives/worker_protocol.h"

namespace nccltune {
namespace {

class EventWriter {
 public:
  explicit EventWriter(int fd) : fd_(fd) {}
  void send(const WorkerEvent& event) const {
    std::string line = encode_event(event) + "\n";
    std::string_view rest = line;
    while (!rest.empty()) {
      ssize_t n = ::write(fd_, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the parent is gone; nothing else to tell it
      rest.remove_prefix(static_cast<size_t>(n));
    }
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
  WorkerEvent ready;
  ready.kind = WorkerEvent::Kind::ready;
  events.send(ready);

  const SweepContext sweep_context{*cuda, *nccl, *comm, *stream, config->rank, config->nranks};
  for (const CollectiveSpec* spec : specs) {
    auto measured = run_size_sweep(sweep_context, *spec, config->sweep, [&](const SizeMeasurement& size) {
      WorkerEvent event;
      event.kind = WorkerEvent::Kind::size;
      event.op = std::string(spec->name());
      event.size = size;
      events.send(event);
    });
    if (!measured) return events.fail("run", std::string(spec->name()) + ": " + measured.error());
  }
  WorkerEvent done;
  done.kind = WorkerEvent::Kind::done;
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
