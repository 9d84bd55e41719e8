#include "topology/nvidia_smi_query.h"

#include <charconv>
#include <cstddef>
#include <map>
#include <utility>

#include "base/clean_text.h"
#include "base/printable_text.h"
#include "base/status.h"
#include "base/text_words.h"
#include "base/utf8.h"

namespace nccltune {
namespace {

// One line of the text without its indentation and line end; `indent` counts a tab to the next
// multiple of 8, so a capture that mixes tabs and spaces nests as a terminal shows it.
struct TextLine {
  int number = 0;
  std::size_t indent = 0;
  std::string text;
};

TextLine text_line(std::string_view raw, int number) {
  TextLine line;
  line.number = number;
  std::size_t at = 0;
  for (; at < raw.size() && is_blank(raw[at]); ++at)
    line.indent = raw[at] == '\t' ? (line.indent / 8 + 1) * 8 : line.indent + 1;
  line.text = repaired_utf8(trimmed(raw.substr(at)));
  return line;
}

// A value from the text as an error quotes it: bounded, printable.
std::string quoted(std::string_view value) {
  return "'" + printable_excerpt(value, 40) + "'";
}

// nvidia-smi prints a value it knows as a number and one it does not as words: "N/A", "[N/A]",
// "[Not Supported]", "Unknown Error", "Insufficient Permissions", "[GPU requires reset]", and
// whatever later drivers add. A value that starts like a number must be one.
bool starts_like_number(std::string_view value) {
  return !value.empty() &&
         (is_digit(value.front()) || value.front() == '-' || value.front() == '+' || value.front() == '.');
}

// A text field nvidia-smi could not fill ("N/A", "[N/A]", "[Not Supported]", "Unknown Error").
bool is_unknown_word(std::string_view value) {
  return value.front() == '[' || value == "N/A" || value == "Unknown" || value == "Unknown Error" ||
         value == "Not Supported" || value == "Not Available" || value == "Insufficient Permissions";
}

// The whole of `digits` as a decimal number; nullopt for anything else, overflow included.
std::optional<std::uint64_t> decimal(std::string_view digits) {
  if (digits.empty() || !is_digit(digits.front())) return std::nullopt;
  std::uint64_t value = 0;
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// "24564 MiB" (KiB, MiB or GiB, as nvidia-smi prints sizes) in bytes. An unknown value and a
// size of 0 (no GPU has no memory: the driver did not answer) are nullopt.
Result<std::optional<std::uint64_t>> memory_size(std::string_view value, std::string_view origin, int line) {
  if (!starts_like_number(value)) return std::optional<std::uint64_t>();
  std::size_t digits = 0;
  while (digits < value.size() && is_digit(value[digits])) ++digits;
  const std::string_view unit = trimmed(value.substr(digits));
  static const std::map<std::string_view, std::uint64_t> kUnits = {
      {"KiB", std::uint64_t{1} << 10}, {"MiB", std::uint64_t{1} << 20}, {"GiB", std::uint64_t{1} << 30}};
  const auto scale = kUnits.find(unit);
  const std::optional<std::uint64_t> count = decimal(value.substr(0, digits));
  if (!count || scale == kUnits.end())
    return error_at(origin, line, quoted(value) + " is not a size in KiB, MiB or GiB");
  if (*count > kMaxGpuMemoryBytes / scale->second)
    return error_at(origin, line, quoted(value) + " is more than the 1 PiB a GPU may have");
  if (*count == 0) return std::optional<std::uint64_t>();
  return std::optional(*count * scale->second);
}

// "5" for a PCIe generation, "16x" (or "x16", "16") for a link width; an unknown value is nullopt.
Result<std::optional<int>> link_number(std::string_view text, bool width, std::string_view origin, int line) {
  std::string_view value = text;
  if (width && !value.empty() && value.front() == 'x' && value.size() > 1 && is_digit(value[1]))
    value.remove_prefix(1);
  else if (!starts_like_number(value))
    return std::optional<int>();
  if (width && !value.empty() && value.back() == 'x') value.remove_suffix(1);
  const int high = width ? 32 : 7;  // x32 is the widest link PCIe defines; Gen7 the newest spec
  const std::optional<std::uint64_t> number = decimal(value);
  if (!number || *number < 1 || *number > static_cast<std::uint64_t>(high))
    return error_at(
        origin, line,
        quoted(text) + " is not a PCIe " + (width ? "link width (1x to 32x)" : "generation (1 to 7)"));
  return std::optional(static_cast<int>(*number));
}

// Where a line stands: the blocks it is in ("PCI" > "GPU Link Info" > "Link Width"), each with
// the indentation of its header line.
struct Block {
  std::size_t indent = 0;
  std::string name;
};

// What a GPU's Fabric block said, before it is known whether the GPU has a fabric.
struct FabricDraft {
  std::optional<FabricState> state;
  GpuFabric fabric;
  FabricHealth health;
  bool health_known = false;
};

// Letters and digits only, lower case: "Incorrect Chassis SN" and "INCORRECT_CHASSIS_SN" alike.
std::string squeezed(std::string_view text) {
  std::string out;
  for (char c : text)
    if (is_digit(c) || (c >= 'a' && c <= 'z'))
      out += c;
    else if (c >= 'A' && c <= 'Z')
      out += static_cast<char>(c - 'A' + 'a');
  return out;
}

std::optional<FabricState> fabric_state_word(std::string_view value) {
  const std::string word = squeezed(value);
  if (word == "completed") return FabricState::completed;
  if (word == "inprogress") return FabricState::in_progress;
  if (word == "notstarted") return FabricState::not_started;
  return std::nullopt;  // "N/A", "Not Supported", words of later drivers: no fabric known
}

// A Health row: Bandwidth prints Full or Degraded, the others True or False.
std::optional<FabricCondition> condition_word(std::string_view value) {
  const std::string word = squeezed(value);
  if (word == "true" || word == "degraded") return FabricCondition::present;
  if (word == "false" || word == "full") return FabricCondition::absent;
  return std::nullopt;
}

// Incorrect Configuration: None, or the misconfiguration nvml.h names; 0 for a word it does not.
int incorrect_configuration_word(std::string_view value) {
  const std::string word = squeezed(value);
  if (word == "none") return 1;
  static const std::map<std::string, int> kSpellings = {{"incorrectsysguid", 2},
                                                        {"incorrectchassissn", 3},
                                                        {"incorrectchassisserialnumber", 3},
                                                        {"nopartition", 4},
                                                        {"insufficientnvlinks", 5},
                                                        {"incompatiblegpufw", 6},
                                                        {"incompatiblegpufirmware", 6},
                                                        {"invalidlocation", 7}};
  const auto found = kSpellings.find(word);
  return found == kSpellings.end() ? 0 : found->second;
}

std::optional<FabricSummary> summary_word(std::string_view value) {
  const std::string word = squeezed(value);
  if (word == "healthy") return FabricSummary::healthy;
  if (word == "unhealthy") return FabricSummary::unhealthy;
  if (word == "limitedcapacity") return FabricSummary::limited_capacity;
  return std::nullopt;
}

// One field of a Fabric block (`block` "Fabric") or of its Health block (`block` "Health").
Status read_fabric_field(std::string_view block, std::string_view key, std::string_view value,
                         FabricDraft& draft, std::string_view origin, int line) {
  if (is_unknown_word(value)) return Ok{};
  if (block == "Fabric") {
    if (key == "State") draft.state = fabric_state_word(value);
    if (key == "Status") draft.fabric.status = std::string(trimmed(cleaned_text(value)));
    if (key == "CliqueId") {
      const std::optional<std::uint64_t> id = decimal(value);
      if (!id || *id > 0xffffffffu)
        return error_at(origin, line, quoted(value) + " is not a clique id (a whole number below 2^32)");
      draft.fabric.clique_id = static_cast<std::uint32_t>(*id);
    }
    if (key == "ClusterUUID") {
      draft.fabric.cluster_uuid = normalize_uuid(value);
      if (!draft.fabric.cluster_uuid) return error_at(origin, line, quoted(value) + " is not a UUID");
    }
    return Ok{};
  }
  FabricCondition* condition = key == "Bandwidth"                    ? &draft.health.degraded_bandwidth
                               : key == "Route Recovery in progress" ? &draft.health.route_recovery
                               : key == "Route Unhealthy"            ? &draft.health.route_unhealthy
                               : key == "Access Timeout Recovery"    ? &draft.health.access_timeout_recovery
                                                                     : nullptr;
  if (condition) {
    if (const auto word = condition_word(value)) {
      *condition = *word;
      draft.health_known = true;
    }
  } else if (key == "Incorrect Configuration") {
    draft.health.incorrect_configuration = incorrect_configuration_word(value);
    draft.health_known = draft.health_known || draft.health.incorrect_configuration != 0;
  } else if (key == "Summary") {
    draft.fabric.summary = summary_word(value);
  }
  return Ok{};
}

std::optional<GpuFabric> finished_fabric(const FabricDraft& draft) {
  if (!draft.state) return std::nullopt;
  GpuFabric fabric = draft.fabric;
  fabric.state = *draft.state;
  if (draft.health_known) fabric.health_mask = encode_fabric_health(draft.health);
  return fabric;
}

constexpr std::string_view kBanner = "NVSMI LOG";

// The line of the banner ("==============NVSMI LOG=============="), if the text has one.
std::optional<std::size_t> banner_line(const std::vector<TextLine>& lines) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& text = lines[i].text;
    if (!text.empty() && text.front() == '=' && text.find(kBanner) != std::string::npos) return i;
  }
  return std::nullopt;
}

// "GPU 00000000:18:00.0", the line that starts a GPU's section: two words, the second with a
// colon (no field of nvidia-smi -q is two words and a colon without " : ").
std::optional<std::string_view> section_bus_id(std::string_view text) {
  if (text.substr(0, 3) != "GPU" || text.size() < 5 || !is_blank(text[3])) return std::nullopt;
  const std::string_view bus_id = trimmed(text.substr(4));
  if (bus_id.find(':') == std::string_view::npos) return std::nullopt;
  for (char c : bus_id)
    if (is_blank(c)) return std::nullopt;
  return bus_id;
}

}  // namespace

Result<NvidiaSmiQuery> parse_nvidia_smi_query(std::string_view text, std::string_view origin) {
  std::vector<TextLine> lines;
  for (int number = 1; !text.empty(); ++number) {
    const std::size_t end = text.find('\n');
    lines.push_back(text_line(text.substr(0, end), number));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  const std::optional<std::size_t> banner = banner_line(lines);

  NvidiaSmiQuery query;
  std::map<std::string, int> section_line;  // bus id -> the line of its section header
  std::vector<Block> blocks;
  std::optional<std::uint64_t> attached;  // "Attached GPUs : 8"
  NvidiaSmiQueryGpu* gpu = nullptr;
  std::vector<FabricDraft> fabrics;  // one per GPU section
  for (std::size_t i = banner ? *banner + 1 : 0; i < lines.size(); ++i) {
    const TextLine& line = lines[i];
    if (line.text.empty() || line.text.front() == '#') continue;

    if (const auto bus_id = section_bus_id(line.text)) {
      const std::optional<std::string> pci = normalize_pci_address(*bus_id);
      if (!pci)
        return error_at(origin, line.number,
                        quoted(*bus_id) + " in a GPU section header is not a PCI address");
      if (query.gpus.size() == kMaxDevicesPerKind)
        return error_at(origin, line.number,
                        "more than " + std::to_string(kMaxDevicesPerKind) +
                            " GPU sections; a node may have at most " + std::to_string(kMaxDevicesPerKind) +
                            " GPUs");
      const auto [first, inserted] = section_line.try_emplace(*pci, line.number);
      if (!inserted)
        return error_at(
            origin, line.number,
            "GPU " + *pci + " appears twice (first on line " + std::to_string(first->second) + ")");
      NvidiaSmiQueryGpu next;
      next.index = static_cast<int>(query.gpus.size());
      next.pci = *pci;
      query.gpus.push_back(std::move(next));
      fabrics.emplace_back();
      gpu = &query.gpus.back();
      blocks.clear();
      continue;
    }

    // "Key : value" (values may hold colons: times, bus ids), or a block's header: a line
    // without a value ("FB Memory Usage") or without a colon ("PCI", the ".." of an excerpt).
    const std::size_t colon = line.text.find(':');
    const std::string_view key = trimmed(std::string_view(line.text).substr(0, colon));
    const std::string_view value = colon == std::string::npos
                                       ? std::string_view()
                                       : trimmed(std::string_view(line.text).substr(colon + 1));
    if (value.empty()) {
      while (!blocks.empty() && blocks.back().indent >= line.indent) blocks.pop_back();
      blocks.push_back({line.indent, std::string(key)});
      continue;
    }
    // A field closes the deeper blocks but not a block at its own indentation: a capture whose
    // indentation was lost still reads "Total" as part of the header above it.
    while (!blocks.empty() && blocks.back().indent > line.indent) blocks.pop_back();
    const std::string_view block = blocks.empty() ? std::string_view() : std::string_view(blocks.back().name);

    if (!gpu) {
      if (key == "Driver Version" && starts_like_number(value) && !query.driver_version)
        query.driver_version = cleaned_text(value);
      if (key == "Attached GPUs") attached = decimal(value);
      continue;
    }
    if (blocks.empty() && key == "Product Name" && !gpu->name && !is_unknown_word(value))
      gpu->name = std::string(trimmed(cleaned_text(value)));
    if (key == "Total" && (block == "FB Memory Usage" || block == "BAR1 Memory Usage")) {
      auto size = memory_size(value, origin, line.number);
      if (!size) return Error{size.error()};
      auto& field = block == "FB Memory Usage" ? gpu->memory_bytes : gpu->bar1_bytes;
      if (!field) field = *size;
    }
    const bool in_fabric = block == "Fabric" || (block == "Health" && blocks.size() >= 2 &&
                                                 blocks[blocks.size() - 2].name == "Fabric");
    if (in_fabric) {
      const Status read = read_fabric_field(block, key, value, fabrics.back(), origin, line.number);
      if (!read) return Error{read.error()};
    }
    if ((key == "Max" || key == "Current") && (block == "PCIe Generation" || block == "Link Width")) {
      const bool width = block == "Link Width";
      auto number = link_number(value, width, origin, line.number);
      if (!number) return Error{number.error()};
      std::optional<int>& field = width ? (key == "Max" ? gpu->pcie.max_width : gpu->pcie.width)
                                        : (key == "Max" ? gpu->pcie.max_gen : gpu->pcie.gen);
      if (!field) field = *number;
    }
  }
  for (std::size_t i = 0; i < query.gpus.size(); ++i) query.gpus[i].fabric = finished_fabric(fabrics[i]);
  if (query.gpus.empty() && !(banner && attached == 0u)) {
    return error_at(
        origin, banner ? lines[*banner].number : 1,
        "no GPU section (a line 'GPU <PCI bus id>'): not the output of nvidia-smi -q, or cut short");
  }
  return query;
}

}  // namespace nccltune
