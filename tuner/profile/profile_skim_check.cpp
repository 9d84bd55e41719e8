// The proof behind ProfileParts::for_jobs that what it skips the whole parse would accept: a
// section the skim blanks (provenance, failed, notes, a collective's results) is read here by a
// small reader of the layout profile_to_yaml writes (block maps and lists by indentation, one-line
// flow maps and lists, double-quoted texts with \" and \\ only, plain numbers and words) and held
// to the same rules as profile_reader.cpp and nccl_observed.cpp hold it. Anything else (another
// layout, a comment, an escape, a number the whole parse reads otherwise) is not proven, and the
// caller parses the file whole, which decides. So this may refuse what the whole parse reads, never
// the other way round: a torn or hand-broken profile is never served by the lean path.
#include "profile/profile_skim_check.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "base/clean_text.h"
#include "profile/env_names.h"
#include "profile/nccl_observed.h"
#include "profile/profile.h"

namespace nccltune {
namespace skim_check {
namespace {

struct Field;
struct Node {
  enum Kind { plain, quoted, list, map } kind = plain;
  // As written, a view of the line: a quoted text between its quotes, escapes and all. Where a
  // rule compares a text, one with an escape fails it (conservative); is_clean_text reads '\\'
  // and '"' as printable, and the text unescaped is no longer, so it holds for that too.
  std::string_view text;
  std::vector<Node> items;
  std::vector<Field> fields;
  const Node* field(std::string_view key) const;
};
struct Field {
  std::string_view key;
  Node value;
};
const Node* Node::field(std::string_view key) const {
  for (const Field& f : fields)
    if (f.key == key) return &f.value;
  return nullptr;
}

bool plain_character(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '+' || c == '-';
}

// One line's flow value from `at`: advances `at`; false when not in the layout read here.
bool flow_value(std::string_view line, std::size_t& at, Node& out, bool in_flow);

bool quoted_text(std::string_view line, std::size_t& at, std::string_view& out) {
  if (at >= line.size() || line[at] != '"') return false;
  const std::size_t start = ++at;
  while (at < line.size()) {
    const char c = line[at];
    if (c == '"') {
      out = line.substr(start, at - start);
      ++at;
      return true;
    }
    if (c == '\\') {
      if (at + 1 >= line.size() || (line[at + 1] != '"' && line[at + 1] != '\\')) return false;
      at += 2;
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
    ++at;
  }
  return false;
}

bool plain_word(std::string_view line, std::size_t& at, std::string_view& out) {
  const std::size_t start = at;
  while (at < line.size() && plain_character(line[at])) ++at;
  out = line.substr(start, at - start);
  // "-" alone, or "-" before a letter, is YAML's block sequence or reads otherwise: not proven.
  if (out.empty() || (out[0] == '-' && (out.size() == 1 || !(std::isdigit(static_cast<unsigned char>(out[1])) ||
                                                              out[1] == '.'))))
    return false;
  return true;
}

bool key_text(std::string_view line, std::size_t& at, std::string_view& key) {
  if (at < line.size() && line[at] == '"') return quoted_text(line, at, key);
  const std::size_t start = at;
  while (at < line.size() && (std::isalnum(static_cast<unsigned char>(line[at])) || line[at] == '_')) ++at;
  key = line.substr(start, at - start);
  return !key.empty();
}

bool flow_value(std::string_view line, std::size_t& at, Node& out, bool in_flow) {
  if (at >= line.size()) return false;
  const char c = line[at];
  if (c == '"') {
    out.kind = Node::quoted;
    return quoted_text(line, at, out.text);
  }
  if (c == '[' || c == '{') {
    const bool is_map = c == '{';
    const char close = is_map ? '}' : ']';
    out.kind = is_map ? Node::map : Node::list;
    ++at;
    if (at < line.size() && line[at] == close) {
      ++at;
      return true;
    }
    while (true) {
      Node item;
      if (is_map) {
        std::string_view key;
        if (!key_text(line, at, key) || line.substr(at, 2) != ": ") return false;
        at += 2;
        if (!flow_value(line, at, item, true)) return false;
        out.fields.push_back(Field{key, std::move(item)});
      } else {
        if (!flow_value(line, at, item, true)) return false;
        out.items.push_back(std::move(item));
      }
      if (at < line.size() && line[at] == close) {
        ++at;
        return true;
      }
      if (line.substr(at, 2) != ", ") return false;
      at += 2;
    }
  }
  out.kind = Node::plain;
  if (!plain_word(line, at, out.text)) return false;
  return in_flow || at == line.size();
}

std::size_t indent_of_line(std::string_view line) {
  const std::size_t first = line.find_first_not_of(' ');
  return first == std::string_view::npos ? line.size() : first;
}

// The lines of one section, blank and comment lines left out.
struct Lines {
  std::vector<std::string_view> lines;
  std::size_t next = 0;
  bool done() const { return next >= lines.size(); }
};

bool block(Lines& in, std::size_t indent, Node& out);

// A key's value: after "key: " on the line, or the block on the lines below.
bool value_after_key(Lines& in, std::string_view line, std::size_t at, std::size_t indent, Node& out) {
  if (at == line.size()) {
    if (in.done()) return false;  // a key with no value reads as null: not proven
    const std::string_view next = in.lines[in.next];
    const std::size_t next_indent = indent_of_line(next);
    const bool sequence_here = next_indent == indent && next.substr(indent).starts_with("- ");
    if (next_indent <= indent && !sequence_here) return false;
    return block(in, next_indent, out);
  }
  if (line.substr(at, 1) != " ") return false;
  ++at;
  return flow_value(line, at, out, false) && at == line.size();
}

bool block(Lines& in, std::size_t indent, Node& out) {
  const bool sequence = in.lines[in.next].substr(indent).starts_with("- ");
  out.kind = sequence ? Node::list : Node::map;
  while (!in.done()) {
    const std::string_view line = in.lines[in.next];
    const std::size_t line_indent = indent_of_line(line);
    if (line_indent < indent) return true;
    if (line_indent > indent) return false;
    if (sequence != line.substr(indent).starts_with("- ")) {
      // A sequence at its key's own indentation ends where that map's next key starts.
      return sequence;
    }
    ++in.next;
    if (sequence) {
      std::size_t at = indent + 2;
      Node item;
      if (!flow_value(line, at, item, false) || at != line.size()) return false;
      out.items.push_back(std::move(item));
    } else {
      std::size_t at = indent;
      std::string_view key;
      if (!key_text(line, at, key) || at >= line.size() || line[at] != ':') return false;
      ++at;
      Node value;
      if (!value_after_key(in, line, at, indent, value)) return false;
      out.fields.push_back(Field{key, std::move(value)});
    }
  }
  return true;
}

// The rules of the whole parse, for what it reads in these sections.

bool keys_in(const Node& map, std::initializer_list<std::string_view> keys) {
  if (map.kind != Node::map) return false;
  for (std::size_t i = 0; i < map.fields.size(); ++i) {
    const Field& f = map.fields[i];
    for (std::size_t j = 0; j < i; ++j)  // a few keys a map: no set to allocate
      if (map.fields[j].key == f.key) return false;
    bool known = false;
    for (std::string_view k : keys) known |= k == f.key;
    if (!known) return false;
  }
  return true;
}

bool text(const Node* node) {
  return node && node->kind == Node::quoted && is_clean_text(node->text);
}
bool optional_text(const Node* node) { return !node || text(node); }

// yaml_integer's whole number: plain, std::from_chars into long long, within min..max.
bool integer(const Node* node, long long min, long long max) {
  if (!node || node->kind != Node::plain) return false;
  const std::string_view v = node->text;
  long long number = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), number);
  return ec == std::errc() && end == v.data() + v.size() && number >= min && number <= max;
}
bool optional_integer(const Node* node, long long min, long long max) {
  return !node || integer(node, min, max);
}

// profile_reader.cpp's byte_count: from_chars into uint64_t, the whole text.
std::optional<std::uint64_t> byte_count(const Node& node) {
  if (node.kind != Node::plain) return std::nullopt;
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(node.text.data(), node.text.data() + node.text.size(), number);
  if (ec != std::errc() || end != node.text.data() + node.text.size()) return std::nullopt;
  return number;
}

// profile_reader.cpp's number: .nan / .inf spellings, else from_chars after an optional '+', no
// letter n or i.
std::optional<double> number(const Node* node) {
  if (!node || node->kind != Node::plain) return std::nullopt;
  const std::string_view value = node->text;
  for (std::string_view nan : {".nan", ".NaN", ".NAN"})
    if (value == nan) return std::numeric_limits<double>::quiet_NaN();
  for (std::string_view inf : {".inf", ".Inf", ".INF", "+.inf"})
    if (value == inf) return std::numeric_limits<double>::infinity();
  for (std::string_view inf : {"-.inf", "-.Inf", "-.INF"})
    if (value == inf) return -std::numeric_limits<double>::infinity();
  std::string_view digits = value;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  if (digits.empty() || digits.find_first_of("nNiI") != std::string_view::npos) return std::nullopt;
  double parsed = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), parsed);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return parsed;
}
bool non_negative(const Node* node) {
  const std::optional<double> value = number(node);
  return value && *value >= 0 && !std::isinf(*value);
}

bool short_list(const Node* node, std::size_t most) {
  return node && node->kind == Node::list && node->items.size() <= most;
}

bool results(const Node& node) {
  if (!keys_in(node, {"sizes", "baseline", "tuned", "speedup_geomean", "worst_size_ratio", "peak_busbw_gbps",
                      "peak_bottleneck", "with_plugin", "with_plugin_speedup_geomean"}))
    return false;
  std::size_t sizes = 0;
  if (const Node* list = node.field("sizes")) {
    if (list->kind != Node::list) return false;
    std::optional<std::uint64_t> last;
    for (const Node& item : list->items) {
      const std::optional<std::uint64_t> bytes = byte_count(item);
      if (!bytes || (last && *bytes <= *last)) return false;
      last = bytes;
    }
    sizes = list->items.size();
  }
  for (const char* key : {"baseline", "tuned", "with_plugin"}) {
    const Node* list = node.field(key);
    if (!list) continue;
    if (list->kind != Node::list || (!list->items.empty() && list->items.size() != sizes)) return false;
    for (const Node& item : list->items)
      if (!number(&item)) return false;
  }
  for (const char* key : {"speedup_geomean", "worst_size_ratio", "with_plugin_speedup_geomean"})
    if (node.field(key) && !number(node.field(key))) return false;
  if (node.field("peak_busbw_gbps") && !non_negative(node.field("peak_busbw_gbps"))) return false;
  return optional_text(node.field("peak_bottleneck"));
}

constexpr long long kInt = std::numeric_limits<int>::max();

bool observation(const Node& node) {
  if (!keys_in(node, {"nccl_version", "transport", "net_plugin", "hcas", "network", "tuner", "choices"}))
    return false;
  for (const char* key : {"nccl_version", "transport", "net_plugin", "tuner"})
    if (!optional_text(node.field(key))) return false;
  if (const Node* hcas = node.field("hcas")) {
    if (!short_list(hcas, kMaxObservedEntries)) return false;
    for (const Node& hca : hcas->items)
      if (!text(&hca)) return false;
  }
  if (const Node* network = node.field("network")) {
    if (!keys_in(*network, {"connections", "with_gdr", "nvls_available", "nvls_channels", "coll_channels"}))
      return false;
    for (const char* key : {"connections", "with_gdr", "nvls_channels", "coll_channels"})
      if (!optional_integer(network->field(key), 0, kInt)) return false;
    if (const Node* nvls = network->field("nvls_available"))
      if (nvls->kind != Node::plain || (nvls->text != "true" && nvls->text != "false")) return false;
    const Node* connections = network->field("connections");
    const Node* gdr = network->field("with_gdr");
    if (connections && gdr && std::stoll(std::string(gdr->text)) > std::stoll(std::string(connections->text))) return false;
  }
  if (const Node* choices = node.field("choices")) {
    if (!short_list(choices, kMaxObservedEntries)) return false;
    for (const Node& c : choices->items)
      if (!keys_in(c, {"op", "bytes", "algo", "proto"}) || !integer(c.field("bytes"), 0, std::numeric_limits<long long>::max()) ||
          !optional_text(c.field("op")) || !optional_text(c.field("algo")) || !optional_text(c.field("proto")))
        return false;
  }
  return true;
}

bool nccl_observed(const Node& node) {
  if (!keys_in(node, {"defaults", "shipped", "verdicts", "contradictions", "nccl_model"})) return false;
  for (const char* key : {"defaults", "shipped"})
    if (node.field(key) && !observation(*node.field(key))) return false;
  if (const Node* verdicts = node.field("verdicts")) {
    if (!short_list(verdicts, kMaxObservedEntries)) return false;
    for (const Node& v : verdicts->items) {
      if (!keys_in(v, {"level", "check", "message"}) || !text(v.field("level")) || !optional_text(v.field("check")) ||
          !optional_text(v.field("message")))
        return false;
      const std::string_view level = v.field("level")->text;
      if (level != "info" && level != "warn" && level != "fail") return false;
    }
  }
  if (const Node* contradictions = node.field("contradictions")) {
    if (!short_list(contradictions, kMaxObservedEntries)) return false;
    for (const Node& c : contradictions->items)
      if (!keys_in(c, {"op", "bytes", "nccl", "measured"}) ||
          !integer(c.field("bytes"), 0, std::numeric_limits<long long>::max()) || !optional_text(c.field("op")) ||
          !optional_text(c.field("nccl")) || !optional_text(c.field("measured")))
        return false;
  }
  if (const Node* model = node.field("nccl_model")) {
    if (!keys_in(*model, {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce"}))
      return false;
    for (const auto& [op, pairs] : model->fields) {  // Field{key, value}
      if (!is_collective_name(op) || !short_list(&pairs, kMaxModelPairs)) return false;
      for (const Node& p : pairs.items) {
        if (!keys_in(p, {"algo", "proto", "latency_us", "busbw"}) || !text(p.field("algo")) ||
            !text(p.field("proto")) || p.field("algo")->text.empty() || p.field("proto")->text.empty())
          return false;
        for (const char* key : {"latency_us", "busbw"}) {
          if (!p.field(key)) continue;
          const std::optional<double> value = number(p.field(key));
          // yaml_number: from_chars, finite; model_number_at: from 0. No .nan / .inf spellings.
          if (!value || !std::isfinite(*value) || !(*value >= 0) || p.field(key)->text.front() == '+' ||
              p.field(key)->text.front() == '.')
            return false;
        }
      }
    }
  }
  return true;
}

bool provenance(const Node& node) {
  if (!keys_in(node, {"tool", "date", "trials", "pairs", "failed_trials", "duration_s", "objective", "hosts",
                      "noise_floor", "confirmation", "plugin_confirmation", "nccl_observed"}))
    return false;
  for (const char* key : {"tool", "date", "confirmation", "plugin_confirmation"})
    if (!optional_text(node.field(key))) return false;
  for (const char* key : {"trials", "pairs", "failed_trials", "hosts"})
    if (!optional_integer(node.field(key), 0, kInt)) return false;
  for (const char* key : {"duration_s", "noise_floor"})
    if (node.field(key) && !non_negative(node.field(key))) return false;
  if (const Node* objective = node.field("objective")) {
    if (!text(objective)) return false;
    const std::string_view name = objective->text;
    if (!name.empty() && name != "balanced" && name != "bandwidth" && name != "latency") return false;
  }
  return !node.field("nccl_observed") || nccl_observed(*node.field("nccl_observed"));
}

bool failed(const Node& node) {
  if (node.kind != Node::list) return false;
  for (const Node& trial : node.items) {
    if (!keys_in(trial, {"env", "outcome", "reason"})) return false;
    if (const Node* env = trial.field("env")) {
      if (env->kind != Node::map) return false;
      std::set<std::string_view> names;
      for (const auto& [name, value] : env->fields)  // Field{key, value}
        if (!is_safe_env_name(name) || !names.insert(name).second ||
            (value.kind != Node::quoted && value.kind != Node::plain) || !is_safe_env_setting(name, value.text))
          return false;
    }
    if (const Node* outcome = trial.field("outcome")) {
      if (!text(outcome)) return false;
      const std::string_view name = outcome->text;
      if (name != "wrong_data" && name != "timeout" && name != "init_error" && name != "crash") return false;
    }
    if (!optional_text(trial.field("reason"))) return false;
  }
  return true;
}

bool notes(const Node& node) {
  if (node.kind != Node::list) return false;
  for (const Node& note : node.items)
    if (!text(&note)) return false;
  return true;
}

}  // namespace

bool section_reads_whole(std::string_view key, const std::vector<std::string_view>& section_lines) {
  Lines in;
  in.lines.reserve(section_lines.size());
  for (std::string_view line : section_lines) {
    const std::size_t indent = indent_of_line(line);
    if (indent == line.size() || line[indent] == '#') continue;  // blank, or a comment line
    if (line.find_first_of("\t\r") != std::string_view::npos || line.back() == ' ') return false;
    in.lines.push_back(line);
  }
  if (in.lines.empty()) return false;
  Node document;
  if (!block(in, indent_of_line(in.lines.front()), document) || !in.done()) return false;
  if (document.kind != Node::map || document.fields.size() != 1 || document.fields[0].key != key) return false;
  const Node& value = document.fields[0].value;
  if (key == "results") return results(value);
  if (key == "provenance") return provenance(value);
  if (key == "failed") return failed(value);
  if (key == "notes") return notes(value);
  return false;
}

}  // namespace skim_check
}  // namespace nccltune
