#include "search/shape_condition.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "base/collective_names.h"
#include "base/result.h"
#include "profile/nccl_names.h"

namespace nccltune {

namespace {

std::optional<long long> parse_integer(std::string_view text) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || text.front() == '-')
    return std::nullopt;
  return value;
}

enum class Fact { nodes, gpus_per_node, ranks, nics, nccl, gpu_sm, nvswitch, ib, gdr, collective };
enum class Op { ge, le, gt, lt, eq, ne, is_true, is_false };

struct Condition {
  Fact fact = Fact::nodes;
  Op op = Op::is_true;
  long long number = 0;
  std::optional<Fact> other;             // compared with this count (`nics>gpus_per_node`), not number
  std::vector<std::string> collectives;  // Fact::collective: any of these
};

constexpr std::string_view kFactNames =
    "nodes, gpus_per_node, ranks, nics, nccl, gpu_sm, nvswitch, ib, gdr, collective";

// The facts that are true or false, written `fact` or `!fact`.
bool is_flag(Fact fact) {
  return fact == Fact::nvswitch || fact == Fact::ib || fact == Fact::gdr;
}

// `collective=all_gather|reduce_scatter` after `collective`: the names, each one NCCL's tests use.
Result<Condition> parse_collectives(std::string_view operands, const std::string& quoted) {
  Condition condition;
  condition.fact = Fact::collective;
  condition.op = Op::eq;
  while (true) {
    const std::string_view name = operands.substr(0, operands.find('|'));
    if (!is_known_collective(name))
      return Error{
          quoted + ": '" + std::string(name) +
          "' is not a collective (all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall)"};
    condition.collectives.emplace_back(name);
    if (name.size() == operands.size()) return condition;
    operands.remove_prefix(name.size() + 1);
  }
}

std::optional<Fact> fact_named(std::string_view name) {
  if (name == "nodes") return Fact::nodes;
  if (name == "gpus_per_node") return Fact::gpus_per_node;
  if (name == "ranks") return Fact::ranks;
  if (name == "nics") return Fact::nics;
  if (name == "nccl") return Fact::nccl;
  if (name == "gpu_sm") return Fact::gpu_sm;
  if (name == "nvswitch") return Fact::nvswitch;
  if (name == "ib") return Fact::ib;
  if (name == "gdr") return Fact::gdr;
  if (name == "collective") return Fact::collective;
  return std::nullopt;
}

// The facts that are plain counts, which a condition may compare with each other.
bool is_count(Fact fact) {
  return fact == Fact::nodes || fact == Fact::gpus_per_node || fact == Fact::ranks || fact == Fact::nics;
}

bool is_operator_char(char c) {
  return c == '<' || c == '>' || c == '=' || c == '!';
}

Result<Condition> parse_condition(std::string_view text) {
  std::string compact;
  for (char c : text)
    if (c != ' ' && c != '\t') compact += c;
  const std::string quoted = "'" + std::string(text) + "'";
  if (compact.empty()) return Error{"empty condition"};
  Condition condition;
  if (compact.front() == '!' && compact.find_first_of("<>=", 1) == std::string::npos &&
      compact.find('!', 1) == std::string::npos) {
    const std::optional<Fact> fact = fact_named(std::string_view(compact).substr(1));
    if (!fact)
      return Error{quoted + ": unknown fact '" + compact.substr(1) + "' (" + std::string(kFactNames) + ")"};
    if (!is_flag(*fact)) return Error{quoted + ": only nvswitch, ib and gdr can be negated with !"};
    condition.fact = *fact;
    condition.op = Op::is_false;
    return condition;
  }
  const std::size_t op_start = static_cast<std::size_t>(
      std::find_if(compact.begin(), compact.end(), is_operator_char) - compact.begin());
  const std::string name = compact.substr(0, op_start);
  const std::optional<Fact> fact = fact_named(name);
  if (!fact) return Error{quoted + ": unknown fact '" + name + "' (" + std::string(kFactNames) + ")"};
  condition.fact = *fact;
  if (op_start == compact.size()) {
    if (*fact == Fact::collective)
      return Error{quoted + ": collective needs a name, e.g. collective=alltoall"};
    if (!is_flag(*fact))
      return Error{quoted + ": '" + name + "' needs a comparison, e.g. " + name + ">1"};
    condition.op = Op::is_true;
    return condition;
  }
  if (is_flag(*fact)) return Error{quoted + ": " + name + " is written as " + name + " or !" + name};
  std::size_t op_end = op_start;
  while (op_end < compact.size() && is_operator_char(compact[op_end])) ++op_end;
  const std::string op = compact.substr(op_start, op_end - op_start);
  if (*fact == Fact::collective) {
    if (op != "=")
      return Error{quoted + ": collective is written as collective=NAME or collective=NAME|NAME"};
    return parse_collectives(std::string_view(compact).substr(op_end), quoted);
  }
  static constexpr std::pair<std::string_view, Op> kOperators[] = {
      {">=", Op::ge}, {"<=", Op::le}, {">", Op::gt}, {"<", Op::lt}, {"==", Op::eq}, {"!=", Op::ne}};
  const auto known = std::find_if(std::begin(kOperators), std::end(kOperators),
                                  [&](const auto& entry) { return entry.first == op; });
  if (known == std::end(kOperators))
    return Error{quoted + ": unknown operator '" + op + "' (>=, <=, >, <, ==, !=)"};
  condition.op = known->second;
  const std::string operand = compact.substr(op_end);
  if (*fact == Fact::nccl) {
    Result<int> version = parse_nccl_version(operand);
    if (!version) return Error{quoted + ": " + version.error()};
    condition.number = *version;
  } else if (const std::optional<long long> number = parse_integer(operand)) {
    condition.number = *number;
  } else if (const std::optional<Fact> other = fact_named(operand); other && is_count(*other) && is_count(*fact)) {
    condition.other = other;
  } else {
    return Error{quoted + ": '" + operand + "' is not a whole number" +
                 (is_count(*fact) ? " or a count (nodes, gpus_per_node, ranks, nics)" : "")};
  }
  return condition;
}

long long count(Fact fact, const ShapeFacts& facts) {
  switch (fact) {
    case Fact::nodes: return facts.nodes;
    case Fact::gpus_per_node: return facts.gpus_per_node;
    case Fact::ranks: return static_cast<long long>(facts.nodes) * facts.gpus_per_node;
    case Fact::nics: return facts.nics;
    default: return 0;
  }
}

bool evaluate(const Condition& condition, const ShapeFacts& facts) {
  if (condition.fact == Fact::collective)  // unknown (empty): holds, as for other unknown facts
    return facts.collectives.empty() ||
           std::any_of(condition.collectives.begin(), condition.collectives.end(),
                       [&](const std::string& name) {
                         return std::find(facts.collectives.begin(), facts.collectives.end(), name) !=
                                facts.collectives.end();
                       });
  if (is_flag(condition.fact)) {
    // Unknown GPUDirect RDMA: both hold (explore rather than guess).
    if (condition.fact == Fact::gdr && !facts.gdr) return true;
    const bool value = condition.fact == Fact::nvswitch ? facts.nvswitch
                       : condition.fact == Fact::ib     ? facts.ib && facts.nics > 0
                                                        : *facts.gdr;
    return condition.op == Op::is_true ? value : !value;
  }
  long long actual = count(condition.fact, facts);
  if (condition.fact == Fact::nccl) actual = facts.nccl_version;
  if (condition.fact == Fact::gpu_sm) actual = facts.gpu_sm;
  // Unknown NCCL version or GPU architecture: every comparison holds (explore rather than guess).
  if ((condition.fact == Fact::nccl || condition.fact == Fact::gpu_sm) && actual <= 0) return true;
  const long long number = condition.other ? count(*condition.other, facts) : condition.number;
  switch (condition.op) {
    case Op::ge: return actual >= number;
    case Op::le: return actual <= number;
    case Op::gt: return actual > number;
    case Op::lt: return actual < number;
    case Op::eq: return actual == number;
    case Op::ne: return actual != number;
    case Op::is_true:
    case Op::is_false: return false;
  }
  return false;
}

// `a|b|...`: the alternatives of a condition, which holds when one of them does. NCCL's rules need
// it: NVLS wants 3+ GPUs on a node before 2.28.7 and 2+ from it (`gpus_per_node>=3|nccl>=2.28.7`).
// A collective condition's `|` separates names instead, so it stays whole.
std::vector<std::string_view> alternatives(std::string_view condition) {
  const std::size_t start = condition.find_first_not_of(" \t");
  if (start != std::string_view::npos && condition.substr(start).starts_with("collective")) return {condition};
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t bar = condition.find('|');
    parts.push_back(condition.substr(0, bar));
    if (bar == std::string_view::npos) return parts;
    condition.remove_prefix(bar + 1);
  }
}

}  // namespace

std::optional<std::string> condition_problem(std::string_view condition) {
  for (std::string_view alternative : alternatives(condition)) {
    Result<Condition> parsed = parse_condition(alternative);
    if (!parsed) return parsed.error();
  }
  return std::nullopt;
}

bool condition_holds(std::string_view condition, const ShapeFacts& facts) {
  if (condition_problem(condition)) return false;
  const std::vector<std::string_view> parts = alternatives(condition);
  return std::any_of(parts.begin(), parts.end(), [&](std::string_view alternative) {
    return evaluate(*parse_condition(alternative), facts);
  });
}

bool all_conditions_hold(const std::vector<std::string>& conditions, const ShapeFacts& facts) {
  return std::all_of(conditions.begin(), conditions.end(),
                     [&](const std::string& condition) { return condition_holds(condition, facts); });
}

}  // namespace nccltune
