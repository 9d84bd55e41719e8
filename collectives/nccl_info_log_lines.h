// The reader of one input's lines of NCCL's INFO log, for the files that define its parts: which
// line is which and the merge of readers (nccl_info_log.cpp), then one file per kind of line.
// Private to collectives/; the log's API is nccl_info_log.h.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/nccl_info_log.h"
#include "collectives/nccl_info_tuning_table.h"

namespace nccltune::nccl_info_detail {

// Bounds on what a hostile or endless log can make the parser keep.
inline constexpr std::size_t kMaxHosts = 65536;
inline constexpr std::size_t kMaxDevices = 1024;
inline constexpr std::size_t kMaxChoices = 65536;
inline constexpr std::size_t kMaxFailures = 1000;
inline constexpr std::size_t kMaxEnv = 1024;
inline constexpr std::size_t kMaxFabrics = 4096;
inline constexpr std::size_t kMaxCliqueRanks = 65536;
inline constexpr std::size_t kMaxProcesses = 4096;
inline constexpr std::size_t kMaxGdrCauses = 16;

// The words of a line (nccl_info_log.cpp).
std::optional<int> to_count(std::string_view word);
std::optional<int> count_after(const std::vector<std::string_view>& words, std::string_view key);
void keep_max(std::optional<int>& kept, std::optional<int> value);

// What one process printed that later lines of it need: its communicator's ranks, and its
// tuning table under way.
struct ProcessState {
  std::optional<int> ranks;
  NcclTuningTableReader table;
};

class LineReader {
 public:
  LineReader(NcclInfoLog& log, NcclInfoLogReader::Index& index, std::string_view source)
      : log_(log), index_(index), source_(source) {}

  void read(std::string_view raw, int number);
  // The tuning tables still under way, once the text has ended.
  void finish();
  // Adds what another reader found (another node's ranks): as if its lines had been read here.
  void merge(const NcclInfoLog& other);

 private:
  // Which line is which, and the hosts (nccl_info_log.cpp); true for a line of NCCL's INFO account
  // (what info_lines counts).
  bool read_body(std::string_view body, bool warn, int number);
  // The kinds of line of NCCL's account; false for a line that is none of them.
  bool read_account(std::string_view body, const std::vector<std::string_view>& words, int number);
  void add_host(std::string_view host);
  NcclLogLine line_at(std::string_view body, int number) const;
  // WARN lines and failure texts (nccl_info_log_failures.cpp).
  void read_problems(std::string_view body, bool warn, int number);
  // The version, the communicator, its channels, NVLS and MNNVL (nccl_info_log_comm.cpp).
  void read_version(std::string_view body);
  void read_comm(const std::vector<std::string_view>& words);
  void read_channels(const std::vector<std::string_view>& words);
  void read_nvls_support(std::string_view body);
  void read_nvls(const std::vector<std::string_view>& words);
  void read_mnnvl(std::string_view body, int number);
  void add_fabric(const NcclMnnvlFabric& fabric);
  // The network: its plugin, devices and connections (nccl_info_log_network.cpp).
  void read_ib_devices(std::string_view list);
  void read_socket_devices(std::string_view list);
  void read_ofi(std::string_view body, const std::vector<std::string_view>& words, int number);
  void add_gdr_cause(NcclLogLine cause);
  void read_loaded_net_plugin(std::string_view body);
  void read_connection(std::string_view body, size_t via);
  void add_device(NcclNetDevice device);
  // The variables the environment set (nccl_info_log_env.cpp).
  bool read_env(const std::vector<std::string_view>& words);
  // The tuner, its choices and NCCL's tuning tables (nccl_info_log_tuning.cpp).
  void read_tuner(std::string_view body);
  bool read_tuner_init(const std::vector<std::string_view>& words);
  // The matrix NCCL prints under "Enabled NCCL Func/Proto/Algo Matrix:", one bare line per row.
  bool read_enabled_matrix(std::string_view body);
  void read_choice(std::string_view body, size_t arrow);
  void read_kernel_choice(std::string_view body);
  ProcessState* process();
  void add_table(NcclModelTable table);

  NcclInfoLog& log_;
  NcclInfoLogReader::Index& index_;
  std::string source_;
  std::map<std::string, ProcessState> processes_;  // by "host:pid"; "" for lines without a prefix
  std::string process_;                            // the current line's
  std::vector<std::string> matrix_algos_;          // the enabled matrix's columns, once its header is read
};

}  // namespace nccltune::nccl_info_detail
