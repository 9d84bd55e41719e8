// Feeds arbitrary bytes to parse_fleet_json (nccltune/fleet/v1, read back by report and nccltuned).
// When it parses, renders the text, the Slurm drain lines and the JSON, and asserts (abort) that
// the JSON parses again and is written the same the second time, and that every drain line that
// is not a comment is one `scontrol update` command with a Slurm host name and a reason that holds
// nothing a shell expands inside double quotes.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fleet/fleet_output.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& a, const std::string& b = "") {
  std::fprintf(stderr, "%s\n--- first:\n%s\n--- second:\n%s\n", what, a.c_str(), b.c_str());
  std::abort();
}

bool host_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

bool reason_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view(" ._,:%()/+-").find(c) != std::string_view::npos;
}

// `scontrol update NodeName=<host> State=DRAIN Reason="<reason>"`, or a comment.
void check_drain_line(std::string_view line) {
  if (line.substr(0, 2) == "# ") {
    for (char c : line)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) fail("control character in a drain comment", std::string(line));
    return;
  }
  constexpr std::string_view kStart = "scontrol update NodeName=";
  constexpr std::string_view kMiddle = " State=DRAIN Reason=\"";
  if (line.substr(0, kStart.size()) != kStart || line.empty() || line.back() != '"')
    fail("drain line of the wrong form", std::string(line));
  line.remove_prefix(kStart.size());
  line.remove_suffix(1);
  const std::size_t middle = line.find(kMiddle);
  if (middle == std::string_view::npos) fail("drain line without its state", std::string(line));
  const std::string_view host = line.substr(0, middle), reason = line.substr(middle + kMiddle.size());
  if (host.empty() || host.size() > 255 || !std::isalnum(static_cast<unsigned char>(host[0])))
    fail("drain line with a bad host name", std::string(host));
  for (char c : host)
    if (!host_character(c)) fail("drain line with a bad host name", std::string(host));
  if (reason.size() > 200) fail("drain reason over 200 bytes", std::string(reason));
  for (char c : reason)
    if (!reason_character(c)) fail("drain reason with an unsafe character", std::string(reason));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto survey = nccltune::parse_fleet_json(text, "fleet.json");
  if (!survey) return 0;
  (void)nccltune::render_fleet_text(*survey);
  (void)nccltune::fleet_exit_code(*survey);  // fleet_survey.h
  const std::string drain = nccltune::render_slurm_drain(*survey);
  for (std::size_t start = 0; start < drain.size();) {
    const std::size_t end = drain.find('\n', start);
    if (end == std::string::npos) fail("drain text does not end with a newline", drain);
    check_drain_line(std::string_view(drain).substr(start, end - start));
    start = end + 1;
  }

  const std::string written = nccltune::fleet_to_json(*survey).dump();
  const auto again = nccltune::parse_fleet_json(written, "written.json");
  if (!again) fail("written fleet JSON does not parse", again.error(), written);
  const std::string rewritten = nccltune::fleet_to_json(*again).dump();
  if (rewritten != written) fail("fleet JSON changes when written twice", written, rewritten);
  return 0;
}
