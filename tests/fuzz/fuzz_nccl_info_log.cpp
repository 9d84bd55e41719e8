// Feeds arbitrary bytes to the NCCL INFO log reader (`nccltune explain LOG`) as two ranks' files,
// then does what explain does with the result: the verdicts (without a topology), the
// nccltune/nccl-log/v1 JSON (which throws, and so aborts here, on strings that are not valid
// UTF-8) and the text summary. Asserts only what the sanitizers and a clean return assert.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collectives/nccl_info_log.h"
#include "nccl_log/nccl_log_verdicts.h"

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
  return 0;
}
