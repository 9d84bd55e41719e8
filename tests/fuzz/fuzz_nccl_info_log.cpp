// Feeds arbitrary bytes to the NCCL INFO log reader (`nccltune explain LOG`) as two ranks' files,
// then does what explain does with the result: the verdicts (without a topology), the
// nccltune/nccl-log/v1 JSON (which throws, and so aborts here, on strings that are not valid
// UTF-8) and the text summary; and the summary a node sends rank 0 in a tune, which must read back
// as it was written. Asserts that, and what the sanitizers and a clean return assert.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "collectives/nccl_info_log.h"
#include "nccl_log/nccl_log_verdicts.h"
#include "nccl_log/node_log_summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nccltune::NcclInfoLogReader reader;
  reader.add(text.substr(0, size / 2), "rank0.log");
  reader.add(text.substr(size / 2), "rank1.log");
  const nccltune::NcclInfoLog log = reader.result();
  const auto verdicts = nccltune::explain_nccl_log(log, nullptr);
  (void)nccltune::log_verdicts_exit_code(verdicts);
  nlohmann::ordered_json json = nccltune::nccl_info_log_to_json(log);
  json["verdicts"] = nccltune::log_verdicts_to_json(verdicts);
  (void)json.dump(2);
  (void)nccltune::render_nccl_log_text(log, verdicts);
  const std::string summary = nccltune::node_log_summary_to_json(log);
  const auto back = nccltune::node_log_summary_from_json(summary);
  if (!back || nccltune::node_log_summary_to_json(*back) != summary) std::abort();
  return 0;
}
