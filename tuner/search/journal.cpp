#include "search/journal.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "profile/comm_shape.h"

namespace nccltune {
namespace {

std::string errno_text() {
  return std::strerror(errno);
}

nlohmann::ordered_json numbers_json(const std::vector<double>& values) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (double value : values) {
    if (std::isfinite(value))
      out.push_back(value);
    else
      out.push_back(nullptr);
  }
  return out;
}

// Thrown inside parse_journal_line only.
struct LineError {
  std::string message;
};

const nlohmann::json& field(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end()) throw LineError{std::string("missing \"") + key + "\""};
  return *found;
}

// A list of communicator names ("world", "rail", "node"), strictly.
std::vector<std::string> comm_names(const nlohmann::json& value, const char* key) {
  if (!value.is_array()) throw LineError{std::string("\"") + key + "\" must be a list of communicator names"};
  std::vector<std::string> names;
  for (const auto& name : value) {
    if (!name.is_string() || !parse_comm_role(name.get<std::string>()))
      throw LineError{std::string("\"") + key + "\" items must be communicator names (world, rail, node)"};
    names.push_back(name.get<std::string>());
  }
  return names;
}

std::string string_field(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = field(object, key);
  if (!value.is_string()) throw LineError{std::string("\"") + key + "\" must be a string"};
  return value.get<std::string>();
}

int int_field(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = field(object, key);
  if (!value.is_number_integer() || value.get<long long>() < 0 ||
      value.get<long long>() > std::numeric_limits<int>::max())
    throw LineError{std::string("\"") + key + "\" must be a whole number from 0"};
  return value.get<int>();
}

double number(const nlohmann::json& value, const std::string& what) {
  if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
  // A literal beyond a double (1e999) reads as an infinity: refused, as by every JSON reader.
  if (!value.is_number() || !std::isfinite(value.get<double>())) throw LineError{what + " must be a number or null"};
  return value.get<double>();
}

std::vector<double> numbers_field(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = field(object, key);
  if (!value.is_array()) throw LineError{std::string("\"") + key + "\" must be a list"};
  std::vector<double> out;
  for (const auto& item : value) out.push_back(number(item, std::string("\"") + key + "\" items"));
  return out;
}

// A list of 0 and 1.
std::vector<int> flags_field(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = field(object, key);
  if (!value.is_array()) throw LineError{std::string("\"") + key + "\" must be a list"};
  std::vector<int> flags;
  for (const auto& flag : value) {
    if (!flag.is_number_integer() || (flag.get<long long>() != 0 && flag.get<long long>() != 1))
      throw LineError{std::string("\"") + key + "\" items must be 0 or 1"};
    flags.push_back(flag.get<int>());
  }
  return flags;
}

// A pair-mode entry's "pairs" ("Ring/LL"), "pair_outcomes" (one per pair) and "unavailable"
// (0 or 1 per point).
void read_pair_mode(const nlohmann::json& json, JournalEntry& entry) {
  const nlohmann::json& pairs = field(json, "pairs");
  if (!pairs.is_array() || pairs.empty()) throw LineError{"\"pairs\" must be a list of ALGO/PROTO pairs"};
  for (const auto& pair : pairs) {
    if (!pair.is_string() || pair.get<std::string>().find('/') == std::string::npos)
      throw LineError{"\"pairs\" items must be ALGO/PROTO pairs"};
    entry.pairs.push_back(pair.get<std::string>());
  }
  const nlohmann::json& outcomes = field(json, "pair_outcomes");
  if (!outcomes.is_array() || outcomes.size() != entry.pairs.size())
    throw LineError{"\"pair_outcomes\" must be a list of one outcome per pair"};
  for (const auto& outcome : outcomes) {
    const std::optional<TrialOutcome> parsed =
        outcome.is_string() ? parse_trial_outcome(outcome.get<std::string>()) : std::nullopt;
    if (!parsed) throw LineError{"\"pair_outcomes\" items must be trial outcomes"};
    entry.pair_outcomes.push_back(*parsed);
  }
  entry.unavailable = flags_field(json, "unavailable");
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// Whether `line` is, or begins, what journal_line writes first, before any zeros a power loss
// leaves. A last line that is not may not be cut as "left by a crash mid-write": the file is
// something else, named by mistake.
bool starts_like_journal_line(std::string_view line) {
  line = line.substr(0, line.find('\0'));
  const std::string start = "{\"schema\":\"" + std::string(kJournalSchema) + "\"";
  const std::size_t n = std::min(line.size(), start.size());
  return line.substr(0, n) == std::string_view(start).substr(0, n);
}

}  // namespace

std::string journal_key(const JournalEntry& entry) {
  std::string key = entry.node_type_key + "|" + entry.nccl_version + "|";
  bool first = true;
  for (const auto& [name, value] : entry.env) {  // a std::map: sorted by name
    key += (first ? "" : " ") + name + "=" + value;
    first = false;
  }
  key += "|" + std::string(to_string(entry.phase)) + "|" + std::to_string(entry.iterations) + "|" +
         std::to_string(entry.warmup) + "|";
  for (std::size_t i = 0; i < entry.sizes.size(); ++i) key += (i ? "," : "") + std::to_string(entry.sizes[i]);
  key += "|" + std::to_string(entry.repeat);
  // all_reduce alone keeps the key it had before trials measured several collectives.
  if (entry.collectives != std::vector<std::string>{kAllReduce})
    for (std::size_t i = 0; i < entry.collectives.size(); ++i) key += (i ? "," : "|") + entry.collectives[i];
  for (std::size_t i = 0; i < entry.pairs.size(); ++i) key += (i ? "," : "|pairs:") + entry.pairs[i];
  if (!entry.plugin_profile.empty()) key += "|plugin-profile:" + entry.plugin_profile;
  // The world alone keeps the key it had before trials measured split communicators.
  if (entry.comms != std::vector<std::string>{"world"})
    for (std::size_t i = 0; i < entry.comms.size(); ++i) key += (i ? "," : "|comms:") + entry.comms[i];
  return key;
}

std::vector<std::string> journal_points(const JournalEntry& entry, std::vector<std::uint64_t>& sizes) {
  std::vector<std::string> ops;
  sizes.clear();
  const std::size_t rounds = std::max<std::size_t>(1, entry.pairs.size());
  const std::size_t points = entry.sizes.size() * entry.collectives.size() * entry.comms.size() * rounds;
  if (entry.busbw.size() != points || (!entry.point_bytes.empty() && entry.point_bytes.size() != points))
    return ops;
  for (std::size_t round = 0; round < rounds; ++round)
    for (std::size_t comm = 0; comm < entry.comms.size(); ++comm)
      for (const std::string& op : entry.collectives)
        for (std::size_t i = 0; i < entry.sizes.size(); ++i) {
          ops.push_back(op);
          sizes.push_back(entry.point_bytes.empty() ? entry.sizes[i] : entry.point_bytes[ops.size() - 1]);
        }
  return ops;
}

std::string journal_line(const JournalEntry& entry) {
  nlohmann::ordered_json line;
  line["schema"] = kJournalSchema;
  line["shape_key"] = entry.node_type_key;
  line["nccl_version"] = entry.nccl_version;
  if (entry.nodes > 0) line["nodes"] = entry.nodes;
  line["env"] = nlohmann::ordered_json::object();
  for (const auto& [name, value] : entry.env) line["env"][name] = value;
  line["phase"] = to_string(entry.phase);
  line["iterations"] = entry.iterations;
  line["warmup"] = entry.warmup;
  line["sizes"] = entry.sizes;
  line["collectives"] = entry.collectives;
  if (!entry.point_bytes.empty()) line["point_bytes"] = entry.point_bytes;
  line["outcome"] = to_string(entry.outcome);
  line["reason"] = entry.reason;
  line["time_us"] = numbers_json(entry.time_us);
  line["busbw"] = numbers_json(entry.busbw);
  if (std::isfinite(entry.duration_s))
    line["duration_s"] = entry.duration_s;
  else
    line["duration_s"] = nullptr;
  line["repeat"] = entry.repeat;
  if (!entry.pairs.empty()) {
    line["pairs"] = entry.pairs;
    line["pair_outcomes"] = nlohmann::ordered_json::array();
    for (TrialOutcome outcome : entry.pair_outcomes) line["pair_outcomes"].push_back(to_string(outcome));
    line["unavailable"] = entry.unavailable;
  }
  if (!entry.plugin_profile.empty()) {
    line["plugin_profile"] = entry.plugin_profile;
    line["plugin_served"] = entry.plugin_served;
    line["plugin_declined"] = entry.plugin_declined;
  }
  if (entry.comms != std::vector<std::string>{"world"}) line["comms"] = entry.comms;
  if (!entry.point_comms.empty()) line["point_comms"] = entry.point_comms;
  line["workers"] = entry.workers;
  line["communicators"] = entry.communicators;
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Result<JournalEntry> parse_journal_line(std::string_view line) {
  const nlohmann::json json = nlohmann::json::parse(line, nullptr, false);
  if (json.is_discarded()) return Error{"not valid JSON"};
  if (!json.is_object()) return Error{"not a JSON object"};
  try {
    if (string_field(json, "schema") != kJournalSchema)
      throw LineError{"schema is not " + std::string(kJournalSchema)};
    JournalEntry entry;
    entry.node_type_key = string_field(json, "shape_key");
    entry.nccl_version = string_field(json, "nccl_version");
    if (json.contains("nodes")) {
      entry.nodes = int_field(json, "nodes");
      if (entry.nodes < 1) throw LineError{"\"nodes\" must be a node count from 1"};
    }
    const nlohmann::json& env = field(json, "env");
    if (!env.is_object()) throw LineError{"\"env\" must be an object"};
    for (const auto& [name, value] : env.items()) {
      if (!value.is_string()) throw LineError{"\"env\"." + name + " must be a string"};
      entry.env[name] = value.get<std::string>();
    }
    const std::string phase = string_field(json, "phase");
    const std::optional<TrialPhase> parsed_phase = parse_trial_phase(phase);
    if (!parsed_phase) throw LineError{"\"phase\" '" + phase + "' is not a phase of the search"};
    entry.phase = *parsed_phase;
    entry.iterations = int_field(json, "iterations");
    entry.warmup = int_field(json, "warmup");
    const nlohmann::json& sizes = field(json, "sizes");
    if (!sizes.is_array()) throw LineError{"\"sizes\" must be a list"};
    for (const auto& size : sizes) {
      if (!size.is_number_unsigned()) throw LineError{"\"sizes\" items must be whole numbers from 0"};
      entry.sizes.push_back(size.get<std::uint64_t>());
    }
    if (const auto collectives = json.find("collectives"); collectives != json.end()) {
      if (!collectives->is_array() || collectives->empty())
        throw LineError{"\"collectives\" must be a list of collective names"};
      entry.collectives.clear();
      for (const auto& name : *collectives) {
        if (!name.is_string() || !is_collective_name(name.get<std::string>()))
          throw LineError{"\"collectives\" items must be collective names (" + std::string(kCollectiveNames) +
                          ")"};
        entry.collectives.push_back(name.get<std::string>());
      }
    }
    if (const auto bytes = json.find("point_bytes"); bytes != json.end()) {
      if (!bytes->is_array()) throw LineError{"\"point_bytes\" must be a list"};
      for (const auto& size : *bytes) {
        if (!size.is_number_unsigned()) throw LineError{"\"point_bytes\" items must be whole numbers from 0"};
        entry.point_bytes.push_back(size.get<std::uint64_t>());
      }
    }
    const std::string outcome = string_field(json, "outcome");
    const std::optional<TrialOutcome> parsed_outcome = parse_trial_outcome(outcome);
    if (!parsed_outcome) throw LineError{"\"outcome\" '" + outcome + "' is not a trial outcome"};
    entry.outcome = *parsed_outcome;
    entry.reason = string_field(json, "reason");
    entry.time_us = numbers_field(json, "time_us");
    entry.busbw = numbers_field(json, "busbw");
    entry.duration_s = number(field(json, "duration_s"), "\"duration_s\"");
    entry.repeat = int_field(json, "repeat");
    if (json.contains("workers")) entry.workers = int_field(json, "workers");
    if (json.contains("communicators")) entry.communicators = int_field(json, "communicators");
    if (json.contains("pairs")) read_pair_mode(json, entry);
    if (json.contains("plugin_profile")) entry.plugin_profile = string_field(json, "plugin_profile");
    if (json.contains("plugin_served")) entry.plugin_served = flags_field(json, "plugin_served");
    if (json.contains("plugin_declined")) entry.plugin_declined = string_field(json, "plugin_declined");
    if (json.contains("comms")) {
      entry.comms = comm_names(field(json, "comms"), "comms");
      if (entry.comms.empty()) throw LineError{"\"comms\" must name at least one communicator"};
    }
    if (json.contains("point_comms")) {
      entry.point_comms = comm_names(field(json, "point_comms"), "point_comms");
      for (const std::string& comm : entry.point_comms)
        if (std::find(entry.comms.begin(), entry.comms.end(), comm) == entry.comms.end())
          throw LineError{"\"point_comms\" names '" + comm + "', which \"comms\" does not"};
      if (!entry.point_comms.empty() && entry.point_comms.size() != entry.busbw.size())
        throw LineError{"\"point_comms\" must have one communicator per point"};
    }
    return entry;
  } catch (const LineError& error) {
    return Error{error.message};
  }
}

Result<std::vector<JournalEntry>> parse_journal(std::string_view text, std::string_view origin,
                                                std::vector<std::string>* warnings) {
  struct Line {
    int number;
    std::string_view text;
  };
  std::vector<Line> lines;
  int number = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    const std::string_view line = text.substr(start, end == std::string_view::npos ? end : end - start);
    ++number;
    if (!is_blank(line)) lines.push_back({number, line});
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  std::vector<JournalEntry> entries;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    Result<JournalEntry> entry = parse_journal_line(lines[i].text);
    const std::string where = std::string(origin) + ":" + std::to_string(lines[i].number);
    if (!entry) {
      if (i + 1 == lines.size() && starts_like_journal_line(lines[i].text)) {
        if (warnings)
          warnings->push_back(where + ": dropped a truncated or corrupt last line (" + entry.error() +
                              "; a run killed mid-write?)");
        break;
      }
      return Error{where + ": invalid journal entry: " + entry.error()};
    }
    entries.push_back(std::move(*entry));
  }
  return entries;
}

Result<Journal> Journal::open(const std::filesystem::path& path) {
  // O_NOFOLLOW and O_NONBLOCK: a symlink or a FIFO named by mistake is refused below, not waited on.
  const int fd =
      ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0 && errno == ELOOP) return Error{path.string() + ": is a symlink; name the journal file itself"};
  if (fd < 0) return Error{path.string() + ": cannot open the journal: " + errno_text()};
  Journal journal(path, fd);
  struct stat info;
  if (::fstat(fd, &info) != 0) return Error{path.string() + ": cannot stat the journal: " + errno_text()};
  if (!S_ISREG(info.st_mode))
    return Error{path.string() + ": is " + describe_file_type(info.st_mode) + ", not a journal file"};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return Error{path.string() + ": the journal is in use by another nccltune"};
    // Locks that the filesystem does not support are not worth failing a run for.
  }
  // A crash mid-write leaves a partial last line: cut it off before appending after it.
  Result<std::string> text = read_text_file(path, kMaxJournalBytes);
  if (!text) return Error{text.error()};
  std::string_view content = *text;
  std::size_t keep = content.size();
  std::size_t end = content.size();
  while (end > 0 && content[end - 1] == '\n') --end;  // trailing newlines
  const std::size_t newline = end == 0 ? std::string_view::npos : content.rfind('\n', end - 1);
  const std::size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
  const std::string_view last = content.substr(line_start, end - line_start);
  if (const Result<std::vector<JournalEntry>> entries = parse_journal(content, path.string()); !entries)
    return Error{entries.error() + " (tune appends only to a nccltune journal, or creates one)"};
  if (!is_blank(last) && !parse_journal_line(last)) keep = line_start;
  if (keep < content.size()) {
    spdlog::warn("{}: cutting off a truncated or corrupt last line ({} bytes) left by an earlier run",
                 path.string(), content.size() - keep);
    if (::ftruncate(fd, static_cast<off_t>(keep)) != 0 || ::fsync(fd) != 0)
      return Error{path.string() + ": cannot cut off the truncated last line: " + errno_text()};
  } else if (!content.empty() && content.back() != '\n') {
    // A complete entry whose newline never made it to disk.
    if (::write(fd, "\n", 1) != 1 || ::fsync(fd) != 0)
      return Error{path.string() + ": write failed: " + errno_text()};
  }
  return journal;
}

Status Journal::append(const JournalEntry& entry) {
  if (fd_ < 0) return Error{path_.string() + ": the journal is not open"};
  if (!write_all(fd_, journal_line(entry) + "\n"))
    return Error{path_.string() + ": write failed: " + errno_text()};
  if (::fsync(fd_) != 0) return Error{path_.string() + ": fsync failed: " + errno_text()};
  return Ok{};
}

Result<std::vector<JournalEntry>> Journal::read(const std::filesystem::path& path) {
  Result<std::string> text = read_text_file(path, kMaxJournalBytes);
  if (!text) return Error{text.error()};
  std::vector<std::string> warnings;
  Result<std::vector<JournalEntry>> entries = parse_journal(*text, path.string(), &warnings);
  for (const std::string& warning : warnings) spdlog::warn("{}", warning);
  return entries;
}

Journal::Journal(Journal&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

Journal& Journal::operator=(Journal&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace nccltune
