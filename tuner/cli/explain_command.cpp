// `nccltune explain LOG... [--from SRC] [--format text|json]`: what NCCL actually did in a job,
// read from its NCCL_DEBUG=INFO output (one file per rank, one mixed file, or `-` for stdin),
// and what that means. Exit 0 all pass, 1 warnings only, 2 failures, 3 when an input or the
// topology cannot be read. A log without NCCL's INFO lines (NCCL_DEBUG=WARN, or a version line only)
// is a warning, not an error: nothing of what NCCL chose can be checked.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/printable_text.h"
#include "cli/commands.h"
#include "cli/topology_input.h"
#include "collectives/nccl_info_log.h"
#include "nccl_log/nccl_log_verdicts.h"

namespace nccltune::cli {

namespace {

struct ExplainOptions {
  std::vector<std::string> logs;
  TopologyInput input;
  std::string format = "text";
};

// Standard input, within the same cap as a log file.
Result<std::string> read_stdin() {
  std::string text;
  char buffer[65536];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) {
    if (text.size() + got > kMaxLogBytes)
      return Error{fmt::format("-: standard input is larger than {} bytes", kMaxLogBytes)};
    text.append(buffer, got);
  }
  if (std::ferror(stdin)) return Error{"-: standard input could not be read"};
  return text;
}

int run_explain(const ExplainOptions& options) {
  NcclInfoLogReader reader;
  bool stdin_read = false;
  for (const std::string& path : options.logs) {
    if (path == "-" && stdin_read) continue;  // standard input ends after its first reading
    const Result<std::string> text = path == "-" ? read_stdin() : read_text_file(path, kMaxLogBytes);
    if (!text) {
      print_error_line("nccltune explain", text.error());
      return kInputError;
    }
    stdin_read = stdin_read || path == "-";
    reader.add(*text, path);
  }
  std::optional<NodeTopology> node;
  if (!options.input.from.empty()) {
    node = options.input.read("nccltune explain");
    if (!node) return kInputError;
  }
  const NcclInfoLog log = reader.result();
  const std::vector<LogVerdict> verdicts = explain_nccl_log(log, node ? &*node : nullptr);
  if (options.format == "json") {
    nlohmann::ordered_json document = nccl_info_log_to_json(log);
    document["verdicts"] = log_verdicts_to_json(verdicts);
    std::cout << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << render_nccl_log_text(log, verdicts);
  }
  return log_verdicts_exit_code(verdicts);
}

}  // namespace

void add_explain_command(CLI::App& app, Command& command) {
  auto options = std::make_shared<ExplainOptions>();
  auto* sub = app.add_subcommand(
      "explain",
      "Explain an NCCL_DEBUG=INFO log: what NCCL chose and why it matters (exit 0 pass, 1 warn, 2 fail)");
  command.usage_exit_codes[sub->get_name()] = kInputError;  // 1 and 2 are its verdicts
  sub->add_option("logs", options->logs, "NCCL log files, one per rank or mixed; - for standard input")
      ->required()
      ->expected(1, -1);
  options->input.add_options(*sub);
  sub->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->callback([options, &command] { command.run = [options] { return run_explain(*options); }; });
}

}  // namespace nccltune::cli
