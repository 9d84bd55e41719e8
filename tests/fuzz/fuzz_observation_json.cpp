// Feeds arbitrary bytes to parse_observation_json (nccltune/observe/v1 as `report --observed`
// reads it). When it parses, renders the page and asserts (abort) that nothing from the file
// reached it unescaped: no tag but the page's own, and every share drawn within its bar.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "report/observed_section.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "%s\n---\n%s\n", what, text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto observation = nccltune::parse_observation_json(text, "obs.json");
  if (!observation) {
    if (observation.error().find('\n') != std::string::npos)
      fail("error of more than one line", observation.error());
    return 0;
  }
  for (const nccltune::ShapeTimeShare& share : nccltune::shape_time_shares(*observation))
    if (!(share.unmeasured >= 0 && share.unmeasured <= share.share + 1e-9))
      fail("unmeasured share beyond its shape's", std::string(share.shape));
  const std::string page = nccltune::render_observed_report_html(*observation, "obs.json", "", "fuzz");
  for (const char* banned : {"<script", "<iframe", "<img", "<link", "<b>", "<x"})
    if (page.find(banned) != std::string::npos) fail("unescaped markup from the file", banned);
  return 0;
}
