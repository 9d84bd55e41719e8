#include "topology/nvidia_smi_topo.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/text_words.h"
#include "base/utf8.h"

namespace nccltune {
namespace {

using Words = std::vector<std::string_view>;

// A device label of the matrix: "GPU3" or "NIC12".
struct DeviceLabel {
  bool is_nic = false;
  int index = 0;

  std::string id() const { return is_nic ? nic_id(index) : gpu_id(index); }
  friend bool operator==(const DeviceLabel&, const DeviceLabel&) = default;
};

// GPUs before NICs, lower index first: the order of DeviceLink's `a` and `b`.
bool ordered_before(const DeviceLabel& x, const DeviceLabel& y) {
  return std::pair(x.is_nic, x.index) < std::pair(y.is_nic, y.index);
}

// One row of the matrix, with the values of the header's trailing columns that it gives.
struct MatrixRow {
  int line = 0;
  std::vector<LinkType> cells;  // one per header device, in header order
  std::optional<std::string> cpu_affinity;
  std::optional<int> numa;
};

// Parses a non-negative decimal number that fills all of `digits`.
std::optional<int> parse_index(std::string_view digits) {
  if (digits.empty() || !is_digit(digits.front())) return std::nullopt;
  int value = 0;
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<DeviceLabel> parse_device_label(std::string_view word) {
  if (word.size() < 4) return std::nullopt;
  std::string_view prefix = word.substr(0, 3);
  if (prefix != "GPU" && prefix != "NIC") return std::nullopt;
  auto index = parse_index(word.substr(3));
  if (!index) return std::nullopt;
  return DeviceLabel{prefix == "NIC", *index};
}

// Removes ANSI SGR sequences ("\x1b[4m"), what is left of them when the ESC byte was lost
// ("[4m"), and any other ESC byte.
std::string strip_ansi(std::string_view line) {
  std::string out;
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == '\x1b') {
      ++i;
      continue;
    }
    if (line[i] == '[') {
      std::size_t j = i + 1;
      while (j < line.size() && (is_digit(line[j]) || line[j] == ';')) ++j;
      if (j < line.size() && line[j] == 'm') {
        i = j + 1;
        continue;
      }
    }
    out += line[i++];
  }
  return out;
}

// The lines without ANSI colour codes, and with any byte that is not UTF-8 as '?', so that a
// damaged capture still parses and what it names can be written as JSON.
std::vector<std::string> clean_lines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    lines.push_back(repaired_utf8(strip_ansi(text.substr(0, end))));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return lines;
}

bool is_comment(const Words& words) {
  return !words.empty() && words.front().front() == '#';
}

// The header's column names after the device labels. The names nvidia-smi prints have several
// words ("GPU NUMA ID"); any other word counts as a column of its own.
std::vector<std::string> split_column_names(std::span<const std::string_view> words) {
  constexpr std::array<std::string_view, 3> known_names = {"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"};
  std::vector<std::string> names;
  std::size_t pos = 0;
  while (pos < words.size()) {
    std::string name(words[pos]);
    std::size_t used = 1;
    for (std::string_view known : known_names) {
      Words known_words = split_words(known);
      if (pos + known_words.size() <= words.size() &&
          std::equal(known_words.begin(), known_words.end(), words.begin() + pos)) {
        name = known;
        used = known_words.size();
        break;
      }
    }
    names.push_back(name);
    pos += used;
  }
  return names;
}

// Link cells start with a letter ("X", "NV18", "SYS"); the trailing values start with a digit
// ("0-23", "0,2-17") or are "N/A".
bool looks_like_link_cell(std::string_view word) {
  return word != "N/A" && !is_digit(word[0]);
}

Result<MatrixRow> parse_row(const Words& words, std::size_t row_device,
                            const std::vector<DeviceLabel>& devices, const std::vector<std::string>& columns,
                            std::string_view origin, int line) {
  const std::string row_id = devices[row_device].id();
  std::size_t link_cells = 0;
  while (1 + link_cells < words.size() && looks_like_link_cell(words[1 + link_cells])) {
    ++link_cells;
  }
  if (link_cells != devices.size()) {
    return error_at(origin, line,
                    "row " + row_id + " has " + std::to_string(link_cells) + " link cells, the header has " +
                        std::to_string(devices.size()) + " devices");
  }
  MatrixRow row;
  row.line = line;
  for (std::size_t column = 0; column < devices.size(); ++column) {
    std::string_view cell = words[1 + column];
    const std::string where = "row " + row_id + ", column " + devices[column].id() + ": ";
    auto type = parse_link_type(cell);
    if (!type) {
      return error_at(origin, line, where + "unknown link type '" + std::string(cell) + "'");
    }
    bool on_diagonal = column == row_device;
    if (on_diagonal && type->kind != LinkKind::self) {
      return error_at(origin, line, where + "expected X, found '" + std::string(cell) + "'");
    }
    if (!on_diagonal && type->kind == LinkKind::self) {
      return error_at(origin, line, where + "X off the diagonal");
    }
    row.cells.push_back(*type);
  }
  std::span<const std::string_view> values = std::span(words).subspan(1 + devices.size());
  if (values.size() > columns.size()) {
    return error_at(origin, line,
                    "row " + row_id + " has more values after its link cells (" +
                        std::to_string(values.size()) + ") than the header has columns (" +
                        std::to_string(columns.size()) + ")");
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] == "N/A") continue;
    if (columns[i] == "CPU Affinity") row.cpu_affinity = std::string(values[i]);
    if (columns[i] == "NUMA Affinity") {
      // "0,2-17": the first node is the one nearest to the device.
      std::string_view list = values[i];
      std::size_t digits = 0;
      while (digits < list.size() && is_digit(list[digits])) ++digits;
      row.numa = parse_index(list.substr(0, digits));
      if (!row.numa) {
        return error_at(
            origin, line,
            "row " + row_id + ": NUMA Affinity '" + std::string(list) + "' is not a list of NUMA nodes");
      }
    }
  }
  return row;
}

}  // namespace

Result<NodeTopology> parse_nvidia_smi_topo(std::string_view text, std::string_view origin) {
  const std::vector<std::string> lines = clean_lines(text);
  std::vector<Words> line_words;
  for (const auto& line : lines) line_words.push_back(split_words(line));
  auto line_number = [](std::size_t i) { return static_cast<int>(i + 1); };

  // The header is the first line that starts with a device label; lines before it (a shell
  // prompt, a comment) are not part of the output.
  std::size_t header = lines.size();
  for (std::size_t i = 0; i < lines.size() && header == lines.size(); ++i) {
    const Words& words = line_words[i];
    if (words.empty() || is_comment(words) || !parse_device_label(words[0])) continue;
    if (words.size() > 1 && parse_link_type(words[1])) {
      return error_at(origin, line_number(i),
                      "no header row of GPUn/NICn labels before row " + std::string(words[0]));
    }
    header = i;
  }
  if (header == lines.size()) {
    return error_at(origin, 1, "no header row of GPUn/NICn labels");
  }

  const Words& header_words = line_words[header];
  std::vector<DeviceLabel> devices;
  std::size_t labels_end = 0;
  for (; labels_end < header_words.size(); ++labels_end) {
    auto label = parse_device_label(header_words[labels_end]);
    if (!label) break;
    if (devices.size() == 2 * kMaxDevicesPerKind) {  // before the duplicate search grows quadratic
      return error_at(origin, line_number(header),
                      "header names more than " + std::to_string(2 * kMaxDevicesPerKind) +
                          " devices; a node may have at most " + std::to_string(kMaxDevicesPerKind) +
                          " GPUs and " + std::to_string(kMaxDevicesPerKind) + " NICs");
    }
    if (std::find(devices.begin(), devices.end(), *label) != devices.end()) {
      return error_at(origin, line_number(header), "header names " + label->id() + " twice");
    }
    devices.push_back(*label);
  }
  const auto nics = static_cast<std::size_t>(
      std::count_if(devices.begin(), devices.end(), [](const DeviceLabel& d) { return d.is_nic; }));
  if (std::max(nics, devices.size() - nics) > kMaxDevicesPerKind) {
    return error_at(origin, line_number(header),
                    "header names " + std::to_string(devices.size() - nics) + " GPUs and " +
                        std::to_string(nics) + " NICs; a node may have at most " +
                        std::to_string(kMaxDevicesPerKind) + " of each");
  }
  // nvidia-smi numbers GPUs and NICs from 0 without gaps, and the model indexes devices by that
  // number (gpus[i].index == i): a header with a gap (GPU0 GPU5) is a damaged capture.
  for (const DeviceLabel& label : devices) {
    const std::size_t of_kind = label.is_nic ? nics : devices.size() - nics;
    if (label.index < 0 || static_cast<std::size_t>(label.index) >= of_kind)
      return error_at(origin, line_number(header),
                      "header names " + label.id() + " but only " + std::to_string(of_kind) + " " +
                          (label.is_nic ? "NICs" : "GPUs") + ": numbers must run from 0 without gaps");
  }
  const std::vector<std::string> columns = split_column_names(std::span(header_words).subspan(labels_end));

  // Rows follow the header up to the first line that is blank or not a row (the Legend).
  std::vector<std::optional<MatrixRow>> rows(devices.size());
  std::size_t next = header + 1;
  int last_row_line = line_number(header);
  for (; next < lines.size(); ++next) {
    const Words& words = line_words[next];
    if (is_comment(words)) continue;
    if (words.empty()) break;
    auto label = parse_device_label(words[0]);
    if (!label) break;
    auto found = std::find(devices.begin(), devices.end(), *label);
    if (found == devices.end()) {
      return error_at(origin, line_number(next), "row " + label->id() + " is not in the header");
    }
    auto row_device = static_cast<std::size_t>(found - devices.begin());
    if (rows[row_device]) {
      return error_at(origin, line_number(next),
                      "row " + label->id() + " appears twice (first on line " +
                          std::to_string(rows[row_device]->line) + ")");
    }
    auto row = parse_row(words, row_device, devices, columns, origin, line_number(next));
    if (!row) return Error{row.error()};
    rows[row_device] = std::move(row.value());
    last_row_line = line_number(next);
  }
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (!rows[d]) {
      return error_at(origin, last_row_line, "the matrix has no row for " + devices[d].id());
    }
  }
  for (std::size_t a = 0; a < devices.size(); ++a) {
    for (std::size_t b = a + 1; b < devices.size(); ++b) {
      LinkType a_to_b = rows[a]->cells[b];
      LinkType b_to_a = rows[b]->cells[a];
      if (a_to_b == b_to_a) continue;
      return error_at(origin, std::max(rows[a]->line, rows[b]->line),
                      "the matrix is not symmetric: " + devices[a].id() + "->" + devices[b].id() + " is " +
                          to_string(a_to_b) + " (line " + std::to_string(rows[a]->line) + ") but " +
                          devices[b].id() + "->" + devices[a].id() + " is " + to_string(b_to_a) + " (line " +
                          std::to_string(rows[b]->line) + ")");
    }
  }

  // The "NIC Legend:" block after the matrix: "  NIC0: mlx5_0".
  std::vector<std::pair<int, std::string>> nic_names;
  for (std::size_t i = next; i < lines.size(); ++i) {
    const Words& words = line_words[i];
    if (words.size() != 2 || words[0].back() != ':') continue;
    auto label = parse_device_label(words[0].substr(0, words[0].size() - 1));
    if (label && label->is_nic) nic_names.emplace_back(label->index, std::string(words[1]));
  }

  std::vector<std::size_t> order(devices.size());
  for (std::size_t d = 0; d < order.size(); ++d) order[d] = d;
  std::sort(order.begin(), order.end(),
            [&devices](std::size_t x, std::size_t y) { return ordered_before(devices[x], devices[y]); });

  NodeTopology topology;
  for (std::size_t d : order) {
    const MatrixRow& row = *rows[d];
    if (!devices[d].is_nic) {
      Gpu gpu;
      gpu.index = devices[d].index;
      gpu.cpu_affinity = row.cpu_affinity;
      gpu.numa = row.numa;
      if (gpu.cpu_affinity) gpu.sources["cpu_affinity"] = FactSource::nvidia_smi;
      if (gpu.numa) gpu.sources["numa"] = FactSource::nvidia_smi;
      topology.gpus.push_back(std::move(gpu));
    } else {
      Nic nic;
      nic.index = devices[d].index;
      nic.numa = row.numa;
      for (const auto& [index, name] : nic_names) {
        if (index == nic.index) nic.name = name;
      }
      if (nic.name) nic.sources["name"] = FactSource::nvidia_smi;
      if (nic.numa) nic.sources["numa"] = FactSource::nvidia_smi;
      topology.nics.push_back(std::move(nic));
    }
  }
  for (std::size_t x = 0; x < order.size(); ++x) {
    for (std::size_t y = x + 1; y < order.size(); ++y) {
      topology.set_link(devices[order[x]].id(), devices[order[y]].id(), rows[order[x]]->cells[order[y]],
                        FactSource::nvidia_smi);
    }
  }
  topology.nvswitch = std::nullopt;
  topology.sources_used.push_back(FactSource::nvidia_smi);
  return topology;
}

}  // namespace nccltune
