// The NCCL tuner plugin as NCCL meets it: the built libnccl-tuner-nccltune.so is dlopen'd, both
// plugin tables are looked up by name, and init / getCollInfo / finalize are called with cost
// tables laid out and filled as NCCL 2.28 does (one float[7][3] array cast to float**, cells NCCL
// cannot run at -1). The pure choice logic is tested directly at the end.
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <latch>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collectives/tuner_control.h"
#include "nccl_logger_capture.h"
#include "plugin/cost_table_choice.h"
#include "plugin/nccl_tuner_v4.h"
#include "plugin/nccl_tuner_v5.h"
#include "plugin/nccl_tuner_v6.h"
#include "plugin/nccl_tuner_v7.h"
#include "test_files.h"

namespace nccltune {
namespace {

using namespace nccl_abi;
namespace fs = std::filesystem;
using test_support::fixture;
using test_support::read_file;
using test_support::TempDir;
using test_support::write_file;

using test_support::all_log;
using test_support::capture_nccl_log;
using test_support::count_logged;
using test_support::g_logged;
using test_support::kPluginNodeTypeKey;
using test_support::logged;
using test_support::LoggedLine;

// ---- NCCL's side ------------------------------------------------------------------------------

// A cost table as NCCL 2.28's updateCollCostTable leaves it for an all_reduce on 8 H100s per
// node with NVLS and no CollNet: estimated microseconds (latency + bytes / bandwidth) in the
// cells it can run, NCCL_ALGO_PROTO_IGNORE elsewhere.
struct NcclCostTable {
  float cells[kNumAlgorithms][kNumProtocols];

  explicit NcclCostTable(std::size_t bytes) {
    for (auto& row : cells)
      for (float& cell : row) cell = kAlgoProtoIgnore;
    const auto cost = [bytes](double latency_us, double gbps) {
      return static_cast<float>(latency_us + static_cast<double>(bytes) / (gbps * 1e3));
    };
    cells[kAlgoTree][kProtoLl] = cost(7, 35);
    cells[kAlgoTree][kProtoLl128] = cost(15, 250);
    cells[kAlgoTree][kProtoSimple] = cost(20, 300);
    cells[kAlgoRing][kProtoLl] = cost(9, 40);
    cells[kAlgoRing][kProtoLl128] = cost(16, 300);
    cells[kAlgoRing][kProtoSimple] = cost(28, 360);
    cells[kAlgoNvls][kProtoSimple] = cost(24, 470);
    cells[kAlgoNvlsTree][kProtoSimple] = cost(30, 420);
  }
  float** as_nccl_passes_it() { return reinterpret_cast<float**>(cells); }
};

// What NCCL's topoGetAlgoInfo then picks: the cheapest cell that is not ignored.
std::pair<int, int> nccl_pick(const NcclCostTable& table, int num_algorithms = kNumAlgorithms) {
  std::pair<int, int> best{-1, -1};
  float best_cost = 3600000000.0f;
  for (int a = 0; a < num_algorithms; ++a)
    for (int p = 0; p < kNumProtocols; ++p) {
      const float cost = table.cells[a][p];
      if (cost == kAlgoProtoIgnore) continue;
      if (cost >= 0.0f && cost < best_cost) {
        best = {a, p};
        best_cost = cost;
      }
    }
  return best;
}

bool same_cells(const NcclCostTable& a, const NcclCostTable& b) {
  for (int i = 0; i < kNumAlgorithms; ++i)
    for (int j = 0; j < kNumProtocols; ++j)
      if (a.cells[i][j] != b.cells[i][j]) return false;
  return true;
}

// ---- the library as a file --------------------------------------------------------------------

struct ElfFacts {
  std::vector<std::string> needed;  // DT_NEEDED
  std::set<std::string> exported;   // defined global or weak symbols in .dynsym
};

ElfFacts read_elf(const fs::path& file) {
  const std::string bytes = read_file(file);
  ElfFacts facts;
  if (bytes.size() < sizeof(Elf64_Ehdr)) return facts;
  const auto at = [&](std::size_t offset) { return bytes.data() + offset; };
  Elf64_Ehdr header;
  std::memcpy(&header, at(0), sizeof header);
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (std::size_t i = 0; i < sections.size(); ++i)
    std::memcpy(&sections[i], at(header.e_shoff + i * header.e_shentsize), sizeof(Elf64_Shdr));
  const auto string_at = [&](const Elf64_Shdr& table, std::size_t offset) {
    return std::string(at(table.sh_offset + offset));
  };
  for (const Elf64_Shdr& section : sections) {
    const Elf64_Shdr& strings = sections[section.sh_link];
    if (section.sh_type == SHT_DYNAMIC) {
      for (std::size_t offset = 0; offset + sizeof(Elf64_Dyn) <= section.sh_size;
           offset += sizeof(Elf64_Dyn)) {
        Elf64_Dyn entry;
        std::memcpy(&entry, at(section.sh_offset + offset), sizeof entry);
        if (entry.d_tag == DT_NEEDED) facts.needed.push_back(string_at(strings, entry.d_un.d_val));
      }
    } else if (section.sh_type == SHT_DYNSYM) {
      for (std::size_t offset = 0; offset + sizeof(Elf64_Sym) <= section.sh_size;
           offset += sizeof(Elf64_Sym)) {
        Elf64_Sym symbol;
        std::memcpy(&symbol, at(section.sh_offset + offset), sizeof symbol);
        const int binding = ELF64_ST_BIND(symbol.st_info);
        if (symbol.st_shndx != SHN_UNDEF &&
            (binding == STB_GLOBAL || binding == STB_WEAK || binding == STB_GNU_UNIQUE))
          facts.exported.insert(string_at(strings, symbol.st_name));
      }
    }
  }
  return facts;
}

// ---- fixture ----------------------------------------------------------------------------------

class TunerPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    g_logged.clear();
    for (const char* name : kVariables) unsetenv(name);
    // Nothing on this machine may leak in: an empty node config, no daemon state.
    test_support::write_file(scratch() / "empty-config.yaml", "");
    setenv("NCCLTUNE_CONFIG", (scratch() / "empty-config.yaml").c_str(), 1);
    setenv("NCCLTUNE_NODE_STATE", (scratch() / "no-node.yaml").c_str(), 1);
    library_ = dlopen(NCCLTUNE_TUNER_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library_, nullptr) << dlerror();
    v5_ = static_cast<const ncclTuner_v5_t*>(dlsym(library_, kTunerV5Symbol));
    v4_ = static_cast<const ncclTuner_v4_t*>(dlsym(library_, kTunerV4Symbol));
    ASSERT_NE(v5_, nullptr);
    ASSERT_NE(v4_, nullptr);
  }

  void TearDown() override {
    if (context_ != nullptr) {
      EXPECT_EQ(v5_->finalize(context_), ncclSuccess);
    }
    if (library_ != nullptr) {
      dlclose(library_);
      // Unloaded, so the next test starts with an empty per-process profile cache.
      EXPECT_EQ(dlopen(NCCLTUNE_TUNER_PLUGIN, RTLD_NOW | RTLD_NOLOAD), nullptr);
    }
    for (const char* name : kVariables) unsetenv(name);
  }

  const fs::path& scratch() const { return scratch_.path(); }

  // A store holding h100-2n.yaml as <store>/<key>/2n.yaml, the node.yaml naming that key, and a
  // node config naming the store.
  fs::path make_store() {
    const fs::path store = scratch() / "store";
    fs::create_directories(store / kPluginNodeTypeKey);
    fs::copy_file(fixture("plugin/h100-2n.yaml"), store / kPluginNodeTypeKey / "2n.yaml");
    chmod((store / kPluginNodeTypeKey / "2n.yaml").c_str(), 0644);
    for (const fs::path& directory : {store, store / kPluginNodeTypeKey}) chmod(directory.c_str(), 0755);
    write_file(scratch() / "nccltune.yaml", "env:\n  store: " + store.string() + "\n  prefer: below\n");
    setenv("NCCLTUNE_CONFIG", (scratch() / "nccltune.yaml").c_str(), 1);
    setenv("NCCLTUNE_NODE_STATE", (fixture("plugin/node.yaml")).c_str(), 1);
    return store;
  }

  void init_v5(std::size_t ranks, std::size_t nodes, void** context = nullptr) {
    ncclNvlDomainInfo_v5_t domains{static_cast<int>(nodes), 8, 8};
    ncclTunerConstants_v5_t constants{};
    ASSERT_EQ(v5_->init(context != nullptr ? context : &context_, 42, ranks, nodes, capture_nccl_log,
                        &domains, &constants),
              ncclSuccess);
  }

  void finalize() {
    EXPECT_EQ(v5_->finalize(context_), ncclSuccess);
    context_ = nullptr;
  }

  // getCollInfo on a fresh NCCL-filled table; returns the table after the call, channels in `channels`.
  NcclCostTable call(std::size_t bytes, ncclFunc_t collective = ncclFuncAllReduce,
                     int num_algorithms = kNumAlgorithms, NcclCostTable* before = nullptr) {
    return call_on(context_, bytes, collective, num_algorithms, before);
  }

  NcclCostTable call_on(void* context, std::size_t bytes, ncclFunc_t collective = ncclFuncAllReduce,
                        int num_algorithms = kNumAlgorithms, NcclCostTable* before = nullptr) {
    NcclCostTable table(bytes);
    if (before != nullptr) table = *before;
    channels = 0;  // NCCL passes nMaxChannels = 0
    EXPECT_EQ(v5_->getCollInfo(context, collective, bytes, 1, table.as_nccl_passes_it(), num_algorithms,
                               kNumProtocols, 0, &channels),
              ncclSuccess);
    return table;
  }

  // NCCL's choices stand: getCollInfo leaves the table and the channel count as they were.
  void expect_nccls_choices() {
    for (std::size_t bytes : {std::size_t{8}, std::size_t{65536}, std::size_t{1} << 30}) {
      SCOPED_TRACE(bytes);
      EXPECT_TRUE(same_cells(call(bytes), NcclCostTable(bytes)));
      EXPECT_EQ(channels, 0);
    }
  }

  static constexpr std::array<const char*, 5> kVariables = {
      "NCCLTUNE_PROFILE", "NCCLTUNE_PROFILES", "NCCLTUNE_CONFIG", "NCCLTUNE_NODE_STATE", "NCCL_DEBUG"};
  void* library_ = nullptr;
  const ncclTuner_v5_t* v5_ = nullptr;
  const ncclTuner_v4_t* v4_ = nullptr;
  void* context_ = nullptr;
  int channels = 0;
  // A private directory, 0700 as mkdtemp makes it: the store checks accept it.
  TempDir scratch_{"nccltune-plugin"};
};

// ---- what NCCL sees of the file ---------------------------------------------------------------

TEST_F(TunerPlugin, ExportsOnlyTheFourPluginTablesAndTheControlBlock) {
  const ElfFacts facts = read_elf(NCCLTUNE_TUNER_PLUGIN);
  EXPECT_EQ(facts.exported, (std::set<std::string>{"ncclTunerPlugin_v4", "ncclTunerPlugin_v5", "ncclTunerPlugin_v6",
                                                   "ncclTunerPlugin_v7", kTunerControlSymbol}));
  EXPECT_STREQ(v5_->name, "nccltune");
  EXPECT_STREQ(v4_->name, "nccltune");
}

// NCCL 2.30.3+ takes the v6 table: v5's entry points, and getChunkSize, which keeps NCCL's chunk
// size unless the range measured one with the pair NCCL runs (h100-2n.yaml: 262144 bytes for
// Ring/LL128 at 64 KiB-1 MiB).
TEST_F(TunerPlugin, V6GetChunkSizeServesOnlyAMeasuredChunkForItsPair) {
  const auto* v6 = static_cast<const ncclTuner_v6_t*>(dlsym(library_, kTunerV6Symbol));
  ASSERT_NE(v6, nullptr);
  EXPECT_STREQ(v6->name, "nccltune");
  EXPECT_EQ(v6->getCollInfo, v5_->getCollInfo);
  ASSERT_NE(v6->getChunkSize, nullptr);
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  ncclNvlDomainInfo_v6_t domains{2, 8, 8};
  ncclTunerConstants_v6_t constants{};
  ASSERT_EQ(v6->init(&context_, 42, 16, 2, capture_nccl_log, &domains, &constants), ncclSuccess);
  const auto chunk = [&](ncclFunc_t collective, std::size_t bytes, int algo, int proto) {
    std::size_t size = 131072;  // NCCL's own
    EXPECT_EQ(v6->getChunkSize(context_, collective, bytes, algo, proto, 16, &size), ncclSuccess);
    return size;
  };
  EXPECT_EQ(chunk(ncclFuncAllReduce, 65536, kAlgoRing, kProtoLl128), 262144u);
  EXPECT_EQ(chunk(ncclFuncAllReduce, 1048575, kAlgoRing, kProtoLl128), 262144u);
  EXPECT_EQ(chunk(ncclFuncAllReduce, 65536, kAlgoTree, kProtoLl128), 131072u);    // another pair
  EXPECT_EQ(chunk(ncclFuncAllReduce, 65536, kAlgoRing, kProtoSimple), 131072u);   // another pair
  EXPECT_EQ(chunk(ncclFuncAllReduce, 8, kAlgoTree, kProtoLl), 131072u);           // range without one
  EXPECT_EQ(chunk(ncclFuncAllReduce, 1048576, kAlgoRing, kProtoLl128), 131072u);  // next range
  EXPECT_EQ(chunk(ncclFuncAllGather, 65536, kAlgoRing, kProtoLl128), 131072u);    // not tuned
  EXPECT_EQ(v6->getChunkSize(context_, ncclFuncAllReduce, 65536, kAlgoRing, kProtoLl128, 16, nullptr),
            ncclSuccess);
}

// NCCL 2.32.6+ takes the v7 table: v6's entry points, init with v7's constants (five
// compute-capability rows). The same profile gives the same cells and chunk sizes as through v5.
TEST_F(TunerPlugin, V7ServesTheProfileAsV5AndV6Do) {
  const auto* v7 = static_cast<const ncclTuner_v7_t*>(dlsym(library_, kTunerV7Symbol));
  ASSERT_NE(v7, nullptr);
  EXPECT_STREQ(v7->name, "nccltune");
  ASSERT_NE(v7->getChunkSize, nullptr);
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  ncclNvlDomainInfo_v7_t domains{2, 8, 8};
  ncclTunerConstants_v7_t constants{};
  constants.llMaxBws[kTunerV7CompCaps - 1][0] = 123.0;  // the Rubin row: NCCL's, left alone
  ASSERT_EQ(v7->init(&context_, 42, 16, 2, capture_nccl_log, &domains, &constants), ncclSuccess);
  ASSERT_NE(context_, nullptr);
  EXPECT_EQ(constants.llMaxBws[kTunerV7CompCaps - 1][0], 123.0);
  NcclCostTable table(65536);
  int nchannels = 0;
  ASSERT_EQ(v7->getCollInfo(context_, ncclFuncAllReduce, 65536, 1, reinterpret_cast<float**>(table.cells),
                            kNumAlgorithms, kNumProtocols, 0, &nchannels),
            ncclSuccess);
  EXPECT_EQ(nccl_pick(table), std::make_pair(kAlgoRing, kProtoLl128));
  EXPECT_EQ(nchannels, 24);
  std::size_t size = 131072;
  EXPECT_EQ(v7->getChunkSize(context_, ncclFuncAllReduce, 65536, kAlgoRing, kProtoLl128, 16, &size), ncclSuccess);
  EXPECT_EQ(size, 262144u);
  size = 131072;
  EXPECT_EQ(v7->getChunkSize(context_, ncclFuncAllReduce, 65536, kAlgoTree, kProtoLl128, 16, &size), ncclSuccess);
  EXPECT_EQ(size, 131072u);  // another pair
}

TEST_F(TunerPlugin, NeedsNoMpiHwlocVerbsOrCuda) {
  const ElfFacts facts = read_elf(NCCLTUNE_TUNER_PLUGIN);
  ASSERT_FALSE(facts.needed.empty());
  for (const std::string& library : facts.needed)
    for (const char* forbidden :
         {"mpi", "open-pal", "open-rte", "hwloc", "ibverbs", "cuda", "nvidia-ml", "nccl"})
      EXPECT_EQ(library.find(forbidden), std::string::npos) << library << " is NEEDED";
}

// ---- choices from NCCLTUNE_PROFILE ------------------------------------------------------------

TEST_F(TunerPlugin, MarksTheProfilesBestCellForEachSizeRange) {
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  init_v5(16, 2);
  ASSERT_NE(context_, nullptr);
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "h100-2n.yaml")) << all_log();

  struct Case {
    std::size_t bytes;
    std::pair<int, int> pick;
    int channels;
  };
  // Both ends of each range that names one cell.
  for (const Case& expected :
       {Case{8, {kAlgoTree, kProtoLl}, 0}, Case{65535, {kAlgoTree, kProtoLl}, 0},
        Case{65536, {kAlgoRing, kProtoLl128}, 24}, Case{1048575, {kAlgoRing, kProtoLl128}, 24},
        Case{67108864, {kAlgoNvls, kProtoSimple}, 0},
        Case{std::size_t{16} << 30, {kAlgoNvls, kProtoSimple}, 0}}) {
    SCOPED_TRACE(expected.bytes);
    const NcclCostTable untouched(expected.bytes);
    const NcclCostTable table = call(expected.bytes);
    EXPECT_EQ(nccl_pick(table), expected.pick);
    EXPECT_EQ(table.cells[expected.pick.first][expected.pick.second], 0.0f);
    EXPECT_EQ(channels, expected.channels);
    // Only that one cell changes.
    NcclCostTable rest = table;
    rest.cells[expected.pick.first][expected.pick.second] =
        untouched.cells[expected.pick.first][expected.pick.second];
    EXPECT_TRUE(same_cells(rest, untouched));
  }
  // At 64 KiB NCCL's own pick is another cell: the marking is what decided.
  EXPECT_NE(nccl_pick(NcclCostTable(65536)), std::make_pair(kAlgoRing, kProtoLl128));
}

// ---- profile v3: a section per communicator shape ---------------------------------------------

TEST_F(TunerPlugin, AV3ProfileServesEachCommunicatorTheSectionOfItsShape) {
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n-v3.yaml")).c_str(), 1);
  struct Shape {
    std::size_t ranks, nodes;
    std::pair<int, int> pick;
    const char* said;
  };
  for (const Shape& shape :
       {Shape{16, 2, {kAlgoRing, kProtoLl128}, "for 2 nodes, 16 ranks"},
        Shape{2, 2, {kAlgoTree, kProtoSimple}, "for 2 nodes, 2 ranks, its rail: 2 nodes x 1 rank section"},
        Shape{8, 1, {kAlgoNvls, kProtoSimple}, "for 1 node, 8 ranks, its node: 1 node x 8 ranks section"}}) {
    SCOPED_TRACE(shape.said);
    void* context = nullptr;
    init_v5(shape.ranks, shape.nodes, &context);
    EXPECT_EQ(nccl_pick(call_on(context, 65536)), shape.pick);
    EXPECT_TRUE(logged(NCCL_LOG_INFO, shape.said)) << all_log();
    EXPECT_EQ(v5_->finalize(context), ncclSuccess);
  }
  // A shape nobody measured (4 ranks on each of 2 nodes) keeps NCCL's choices, and the line names
  // the shapes the profile has.
  init_v5(8, 2);
  expect_nccls_choices();
  EXPECT_TRUE(logged(NCCL_LOG_INFO,
                     "tuned for 8 GPUs per node, this communicator has 2 nodes, 8 ranks (its shapes: world: 2 "
                     "nodes x 8 ranks; rail: 2 nodes x 1 rank; node: 1 node x 8 ranks); NCCL's own choices stand"))
      << all_log();
}

// ---- pair mode: the worker's control block --------------------------------------------------

TEST_F(TunerPlugin, PairModeForcesThePairOverTheProfileAndCountsIt) {
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  init_v5(16, 2);
  auto* control = static_cast<NcclTuneControl*>(dlsym(library_, kTunerControlSymbol));
  ASSERT_NE(control, nullptr);
  EXPECT_EQ(control->version, kTunerControlVersion);
  *control = {kTunerControlVersion, 1, kAlgoTree, kProtoSimple, 0, 0, 0, 0, 0, {}};
  // At 64 KiB the profile says Ring/LL128 and NCCL's own pick is neither: the pair decides.
  const NcclCostTable table = call(65536);
  EXPECT_EQ(nccl_pick(table), std::make_pair(kAlgoTree, kProtoSimple));
  EXPECT_EQ(channels, 0);  // the profile's channels are not applied either
  EXPECT_EQ(control->forced, 1u);
  EXPECT_EQ(control->unavailable, 0u);
  // A pair NCCL's table holds ignored is never forced: NCCL's own choice runs, counted.
  NcclCostTable no_nvls(65536);
  for (int p = 0; p < kNumProtocols; ++p) no_nvls.cells[kAlgoNvls][p] = kAlgoProtoIgnore;
  control->algorithm = kAlgoNvls;
  EXPECT_TRUE(same_cells(call(65536, ncclFuncAllReduce, kNumAlgorithms, &no_nvls), no_nvls));
  EXPECT_EQ(control->unavailable, 1u);
  // So is a cell beyond the table NCCL passes.
  control->algorithm = kNumAlgorithms;
  EXPECT_TRUE(same_cells(call(65536), NcclCostTable(65536)));
  EXPECT_EQ(control->unavailable, 2u);
  EXPECT_EQ(control->forced, 1u);
  // Inactive, the profile serves again.
  control->active = 0;
  EXPECT_EQ(nccl_pick(call(65536)), std::make_pair(kAlgoRing, kProtoLl128));
  EXPECT_EQ(control->forced, 1u);
}

TEST_F(TunerPlugin, PairModeWorksWithoutAProfile) {
  init_v5(16, 2);  // no profile anywhere: the context serves nothing, the control still forces
  auto* control = static_cast<NcclTuneControl*>(dlsym(library_, kTunerControlSymbol));
  ASSERT_NE(control, nullptr);
  *control = {kTunerControlVersion, 1, kAlgoRing, kProtoLl, 0, 0, 0, 0, 0, {}};
  EXPECT_EQ(nccl_pick(call(std::size_t{1} << 30)), std::make_pair(kAlgoRing, kProtoLl));
  EXPECT_EQ(control->forced, 1u);
  control->active = 0;
}

// ---- service counting: what the confirmation reads --------------------------------------------

TEST_F(TunerPlugin, ServiceCountingCountsServedAndDeclinedCallsAndKeepsThePluginsReason) {
  auto* control = static_cast<NcclTuneControl*>(dlsym(library_, kTunerControlSymbol));
  ASSERT_NE(control, nullptr);
  *control = {kTunerControlVersion, 0, 0, 0, 0, 0, 1, 0, 0, {}};
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  init_v5(16, 2);
  call(65536);  // Ring/LL128 marked
  call(8);      // Tree/LL marked
  EXPECT_EQ(control->served, 2u);
  EXPECT_EQ(control->declined, 0u);
  call(65536, ncclFuncAllGather);  // a collective the profile did not tune claims nothing
  EXPECT_EQ(control->served + control->declined, 2u);
  NcclCostTable no_nvls(std::size_t{1} << 30);  // the range's NVLS/Simple is not in NCCL's table
  for (int p = 0; p < kNumProtocols; ++p) no_nvls.cells[kAlgoNvls][p] = kAlgoProtoIgnore;
  call(std::size_t{1} << 30, ncclFuncAllReduce, kNumAlgorithms, &no_nvls);
  EXPECT_EQ(control->served, 2u);
  EXPECT_EQ(control->declined, 1u);
  EXPECT_NE(std::string(control->declined_why).find("NVLS/Simple is not available"), std::string::npos)
      << control->declined_why;
  *control = {kTunerControlVersion, 0, 0, 0, 0, 0, 0, 0, 0, {}};
}

TEST_F(TunerPlugin, ServiceCountingDeclinesEveryCallOfACommunicatorWithoutAProfileAndSaysWhy) {
  auto* control = static_cast<NcclTuneControl*>(dlsym(library_, kTunerControlSymbol));
  ASSERT_NE(control, nullptr);
  *control = {kTunerControlVersion, 0, 0, 0, 0, 0, 1, 0, 0, {}};
  // 8 GPUs per node in the profile, 2 ranks on each of 2 nodes here: the plugin declines.
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  init_v5(4, 2);
  const NcclCostTable untouched(65536);
  EXPECT_TRUE(same_cells(call(65536), untouched));
  call(8);
  EXPECT_EQ(control->served, 0u);
  EXPECT_EQ(control->declined, 2u);
  EXPECT_NE(std::string(control->declined_why).find("tuned for 8 GPUs per node"), std::string::npos)
      << control->declined_why;
  *control = {kTunerControlVersion, 0, 0, 0, 0, 0, 0, 0, 0, {}};
}

TEST_F(TunerPlugin, WithoutServiceCountingAJobsCallsLeaveTheControlBlockAlone) {
  auto* control = static_cast<NcclTuneControl*>(dlsym(library_, kTunerControlSymbol));
  ASSERT_NE(control, nullptr);
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  init_v5(4, 2);
  call(65536);
  EXPECT_EQ(control->declined, 0u);
  EXPECT_STREQ(control->declined_why, "");
}

TEST_F(TunerPlugin, NeverMarksACellNcclCannotRun) {
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  init_v5(16, 2);
  NcclCostTable no_nvls(std::size_t{1} << 30);  // NVLS off: NCCL ignores the NVLS rows
  for (int p = 0; p < kNumProtocols; ++p)
    no_nvls.cells[kAlgoNvls][p] = no_nvls.cells[kAlgoNvlsTree][p] = kAlgoProtoIgnore;
  const NcclCostTable before = no_nvls;
  const NcclCostTable after = call(std::size_t{1} << 30, ncclFuncAllReduce, kNumAlgorithms, &no_nvls);
  EXPECT_TRUE(same_cells(after, before));
  EXPECT_EQ(after.cells[kAlgoNvls][kProtoSimple], kAlgoProtoIgnore);
  EXPECT_EQ(channels, 0);
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "NVLS/Simple is not available")) << all_log();
}

TEST_F(TunerPlugin, LeavesNcclsChoiceForListsEmptyChoicesOtherCollectivesAndUncoveredSizes) {
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  init_v5(16, 2);
  // algo "NVLS,Ring": NCCL picks among them.
  EXPECT_TRUE(same_cells(call(1048576), NcclCostTable(1048576)));
  EXPECT_EQ(channels, 0);
  // algo and proto empty, 16 channels measured: only the channel count is set.
  EXPECT_TRUE(same_cells(call(16777216), NcclCostTable(16777216)));
  EXPECT_EQ(channels, 16);
  // all_gather is not measured by the tuner.
  EXPECT_TRUE(same_cells(call(8, ncclFuncAllGather), NcclCostTable(8)));
  EXPECT_EQ(channels, 0);
  // Beyond the last range.
  const std::size_t beyond = (std::size_t{16} << 30) + 1;
  EXPECT_TRUE(same_cells(call(beyond), NcclCostTable(beyond)));
  EXPECT_EQ(channels, 0);
}

TEST_F(TunerPlugin, RespectsATableWithFewerAlgorithms) {
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  init_v5(16, 2);
  // A table of 4 algorithms has no NVLS row: the NVLS cell is outside it and must not be written.
  const NcclCostTable big = call(std::size_t{1} << 30, ncclFuncAllReduce, 4);
  EXPECT_TRUE(same_cells(big, NcclCostTable(std::size_t{1} << 30)));
  const NcclCostTable small = call(8, ncclFuncAllReduce, 4);
  EXPECT_EQ(nccl_pick(small, 4), std::make_pair(kAlgoTree, kProtoLl));
  EXPECT_EQ(small.cells[kAlgoTree][kProtoLl], 0.0f);
}

TEST_F(TunerPlugin, TheV4TableWorksTheSame) {
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  void* context = nullptr;
  ASSERT_EQ(v4_->init(16, 2, capture_nccl_log, &context), ncclSuccess);
  ASSERT_NE(context, nullptr);
  NcclCostTable table(65536);
  int v4_channels = 0;
  EXPECT_EQ(v4_->getCollInfo(context, ncclFuncAllReduce, 65536, 1, table.as_nccl_passes_it(), kNumAlgorithms,
                             kNumProtocols, 0, &v4_channels),
            ncclSuccess);
  EXPECT_EQ(nccl_pick(table), std::make_pair(kAlgoRing, kProtoLl128));
  EXPECT_EQ(v4_channels, 24);
  EXPECT_EQ(v4_->destroy(context), ncclSuccess);
}

// ---- fail-open --------------------------------------------------------------------------------

TEST_F(TunerPlugin, WithoutAProfileChangesNothing) {
  init_v5(16, 2);
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "no-node.yaml does not exist")) << all_log();
  EXPECT_FALSE(logged(NCCL_LOG_WARN, "")) << all_log();
  expect_nccls_choices();
}

TEST_F(TunerPlugin, ANamedConfigThatDoesNotExistIsAWarning) {
  setenv("NCCLTUNE_CONFIG", (scratch() / "no-config.yaml").c_str(), 1);
  init_v5(16, 2);
  EXPECT_TRUE(logged(NCCL_LOG_WARN, "no-config.yaml: no such file")) << all_log();
  expect_nccls_choices();
}

TEST_F(TunerPlugin, ABrokenProfileIsOneWarningAndNcclsChoice) {
  // broken.yaml sets NCCL_ALGO to a shell command substitution: refused as a whole, ranges too.
  for (const auto& [bad, field] : {std::pair{fixture("plugin/broken.yaml"), std::string("env.NCCL_ALGO")},
                                   std::pair{scratch() / "missing.yaml", std::string()}}) {
    SCOPED_TRACE(bad);
    g_logged.clear();
    setenv("NCCLTUNE_PROFILE", bad.c_str(), 1);
    init_v5(16, 2);
    EXPECT_TRUE(logged(NCCL_LOG_WARN, bad.string())) << all_log();
    EXPECT_TRUE(logged(NCCL_LOG_WARN, field)) << all_log();
    EXPECT_EQ(count_logged(NCCL_LOG_WARN, ""), 1) << all_log();
    expect_nccls_choices();
    finalize();
  }
}

// A profile `show` refuses (cut short, a misspelled algorithm, a variable NCCL does not read) is
// not served, named or from the store: one warning naming its file and line, NCCL's own choices.
TEST_F(TunerPlugin, AProfileShowRefusesIsOneWarningAndNcclsChoice) {
  make_store();  // the config and node state; NCCLTUNE_PROFILES names each case's store
  for (const char* bad : {"torn", "misspelled-algo", "unknown-variable"}) {
    const fs::path file = fixture(std::string("profiles/refused/") + bad + "-2n.yaml");
    for (const bool named : {false, true}) {
      SCOPED_TRACE(std::string(bad) + (named ? ", named" : ", in the store"));
      g_logged.clear();
      // A store of its own: the plugin keeps what it found per place for the life of the process.
      const fs::path store = scratch() / (std::string("store-") + bad);
      fs::create_directories(store / kPluginNodeTypeKey);
      fs::copy_file(file, store / kPluginNodeTypeKey / "2n.yaml", fs::copy_options::overwrite_existing);
      chmod((store / kPluginNodeTypeKey / "2n.yaml").c_str(), 0644);
      for (const fs::path& directory : {store, store / kPluginNodeTypeKey}) chmod(directory.c_str(), 0755);
      setenv("NCCLTUNE_PROFILES", store.c_str(), 1);
      if (named)
        setenv("NCCLTUNE_PROFILE", file.c_str(), 1);
      else
        unsetenv("NCCLTUNE_PROFILE");
      init_v5(16, 2);
      EXPECT_TRUE(logged(NCCL_LOG_WARN, "2n.yaml:")) << all_log();
      EXPECT_EQ(count_logged(NCCL_LOG_WARN, ""), 1) << all_log();
      expect_nccls_choices();
      finalize();
      unsetenv("NCCLTUNE_PROFILE");
      unsetenv("NCCLTUNE_PROFILES");
    }
  }
}

TEST_F(TunerPlugin, ANullLoggerIsAllowed) {
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/broken.yaml")).c_str(), 1);
  ASSERT_EQ(v5_->init(&context_, 1, 16, 2, nullptr, nullptr, nullptr), ncclSuccess);
  EXPECT_TRUE(same_cells(call(8), NcclCostTable(8)));
}

// ---- the store --------------------------------------------------------------------------------

TEST_F(TunerPlugin, FindsTheProfileInTheStoreByNodeTypeAndNodeCount) {
  const fs::path store = make_store();
  init_v5(16, 2);
  EXPECT_TRUE(logged(NCCL_LOG_INFO, (store / kPluginNodeTypeKey / "2n.yaml").string())) << all_log();
  EXPECT_EQ(nccl_pick(call(65536)), std::make_pair(kAlgoRing, kProtoLl128));
  EXPECT_EQ(channels, 24);
}

TEST_F(TunerPlugin, NcclTuneProfilesOverridesTheConfiguredStore) {
  const fs::path store = make_store();
  write_file(scratch() / "nccltune.yaml", "env:\n  store: /nonexistent/store\n");
  setenv("NCCLTUNE_PROFILES", store.c_str(), 1);
  init_v5(16, 2);
  EXPECT_EQ(nccl_pick(call(65536)), std::make_pair(kAlgoRing, kProtoLl128));
}

// A profile measured on full nodes of 8 says nothing about a communicator with another number
// of ranks per node: a tensor-parallel group inside a node, a pipeline stage across nodes.
TEST_F(TunerPlugin, AStoreProfileIsUsedOnlyWithItsGpusPerNode) {
  make_store();
  struct Case {
    std::size_t ranks, nodes;
    bool used;
    const char* note;
  };
  for (const Case& c :
       {Case{16, 2, true, "2n.yaml for 2 nodes, 16 ranks"},
        // One node: only a one-node profile stands for it, and the store has none.
        Case{8, 1, false, "no profile for h100-80gb-hbm3.8gpu.nvswitch.8xib400.pix.nccl2.28 in "},
        Case{8, 2, false, "this communicator has 2 nodes, 8 ranks"},
        Case{2, 2, false, "this communicator has 2 nodes, 2 ranks"}}) {
    SCOPED_TRACE(c.note);
    g_logged.clear();
    init_v5(c.ranks, c.nodes);
    EXPECT_FALSE(logged(NCCL_LOG_WARN, "")) << all_log();
    if (c.used) {
      EXPECT_EQ(count_logged(NCCL_LOG_INFO, "using"), 1) << all_log();
      EXPECT_TRUE(logged(NCCL_LOG_INFO, c.note)) << all_log();
      EXPECT_EQ(nccl_pick(call(65536)), std::make_pair(kAlgoRing, kProtoLl128));
      EXPECT_EQ(channels, 24);
    } else {
      EXPECT_EQ(g_logged.size(), 1u) << all_log();
      const std::string note = c.note;
      EXPECT_TRUE(
          logged(NCCL_LOG_INFO, note.starts_with("no profile") ? note : "tuned for 8 GPUs per node, " + note))
          << all_log();
      expect_nccls_choices();
    }
    finalize();
  }
}

// Communicators of node counts the store has no profile for (serving rule, node_count_rule.h).
// Above the largest measured count the per-size choices are withheld: a ring that won at 2 nodes
// may lose to NCCL's trees at 4. Between two counts they stand where both agree.
TEST_F(TunerPlugin, AtNodeCountsNotTunedForOnlyChoicesBothSidesAgreeOnStand) {
  const fs::path store = make_store();
  init_v5(32, 4);
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "2n.yaml for 4 nodes, 32 ranks")) << all_log();
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "withheld (NCCL's own choice stands)")) << all_log();
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "above the largest measured node count (2)")) << all_log();
  expect_nccls_choices();
  finalize();

  // 8n.yaml: the same choices as 2n.yaml but NVLS,Ring from 1 MiB where 2n.yaml has it too, and
  // Tree/LL128 at 64K-1M where 2n.yaml has Ring/LL128.
  const auto replaced = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  const std::string agreeing =
      replaced(read_file(fixture("plugin/h100-2n.yaml")), "nodes: 2, gpus_per_node: 8, ranks: 16",
               "nodes: 8, gpus_per_node: 8, ranks: 64");
  const std::string text = replaced(agreeing, "algo: Ring, proto: LL128", "algo: Tree, proto: LL128");
  for (const auto& [eight, agree] : {std::pair{agreeing, true}, std::pair{text, false}}) {
    SCOPED_TRACE(agree ? "2 and 8 nodes agree" : "2 and 8 nodes disagree at 64K-1M");
    write_file(store / kPluginNodeTypeKey / "8n.yaml", eight);
    chmod((store / kPluginNodeTypeKey / "8n.yaml").c_str(), 0644);
    g_logged.clear();
    dlclose(library_);  // a fresh per-process lookup for the new store
    library_ = dlopen(NCCLTUNE_TUNER_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library_, nullptr) << dlerror();
    v5_ = static_cast<const ncclTuner_v5_t*>(dlsym(library_, kTunerV5Symbol));
    init_v5(32, 4);
    EXPECT_TRUE(logged(NCCL_LOG_INFO, "8n.yaml")) << all_log();
    EXPECT_FALSE(logged(NCCL_LOG_WARN, "")) << all_log();
    if (agree) {
      EXPECT_EQ(nccl_pick(call(65536)), std::make_pair(kAlgoRing, kProtoLl128));
      EXPECT_EQ(channels, 24);
    } else {
      EXPECT_TRUE(same_cells(call(65536), NcclCostTable(65536)));
      EXPECT_TRUE(logged(NCCL_LOG_INFO, "withheld")) << all_log();
    }
    // Where they agree the choice stands either way: Tree/LL below 64K.
    EXPECT_EQ(nccl_pick(call(8)), std::make_pair(kAlgoTree, kProtoLl));
    finalize();
  }
}

TEST_F(TunerPlugin, ANamedProfileIsUsedOnlyWithItsGpusPerNode) {
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  init_v5(4, 1);  // a tensor-parallel group of 4
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "not using")) << all_log();
  EXPECT_FALSE(logged(NCCL_LOG_WARN, "")) << all_log();
  expect_nccls_choices();
  finalize();

  // One full node: the file is named, but a 2-node choice never stands for one node.
  g_logged.clear();
  init_v5(8, 1);
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "for 1 node, 8 ranks, tuned for 2 nodes")) << all_log();
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "withheld")) << all_log();
  expect_nccls_choices();
}

// A file copied to the wrong place in the store would tune communicators it was not measured for.
TEST_F(TunerPlugin, RefusesAStoreProfileFiledUnderAnotherKeyOrNodeCount) {
  const fs::path store = make_store();
  fs::copy_file(fixture("plugin/h100-2n.yaml"), store / kPluginNodeTypeKey / "4n.yaml");
  chmod((store / kPluginNodeTypeKey / "4n.yaml").c_str(), 0644);
  init_v5(32, 4);
  EXPECT_TRUE(logged(NCCL_LOG_WARN, "4n.yaml: shape.nodes 2 does not match its file name")) << all_log();
  EXPECT_EQ(count_logged(NCCL_LOG_WARN, ""), 1) << all_log();
  expect_nccls_choices();
  finalize();

  std::string text = read_file(fixture("plugin/h100-2n.yaml"));
  text.replace(text.find(kPluginNodeTypeKey), std::strlen(kPluginNodeTypeKey), "a100-other-key");
  write_file(store / kPluginNodeTypeKey / "2n.yaml", text);
  g_logged.clear();
  init_v5(16, 2);
  EXPECT_TRUE(logged(NCCL_LOG_WARN, "shape.key 'a100-other-key' does not match its directory")) << all_log();
  EXPECT_EQ(count_logged(NCCL_LOG_WARN, ""), 1) << all_log();
  expect_nccls_choices();
}

TEST_F(TunerPlugin, RefusesAStoreOthersCanWrite) {
  const fs::path store = make_store();
  chmod((store / kPluginNodeTypeKey).c_str(), 0777);
  init_v5(16, 2);
  EXPECT_TRUE(logged(NCCL_LOG_WARN, kPluginNodeTypeKey)) << all_log();
  expect_nccls_choices();
  finalize();
  // The next communicator of the shape repeats it as INFO: one warning per process and shape.
  g_logged.clear();
  init_v5(16, 2);
  EXPECT_FALSE(logged(NCCL_LOG_WARN, "")) << all_log();
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "as found for an earlier communicator of this shape")) << all_log();
  expect_nccls_choices();
}

// ---- one lookup per process and communicator shape --------------------------------------------

TEST_F(TunerPlugin, LooksUpEachCommunicatorShapeOncePerProcess) {
  const fs::path store = make_store();
  init_v5(16, 2);
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "using")) << all_log();
  finalize();

  // Gone from the store (or on a stuck server): a communicator of the same shape does not look.
  fs::remove(store / kPluginNodeTypeKey / "2n.yaml");
  g_logged.clear();
  init_v5(16, 2);
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "2n.yaml for 2 nodes, 16 ranks (as found for an earlier communicator"))
      << all_log();
  EXPECT_EQ(nccl_pick(call(65536)), std::make_pair(kAlgoRing, kProtoLl128));
  finalize();

  // Another shape does.
  g_logged.clear();
  init_v5(32, 4);
  EXPECT_TRUE(logged(NCCL_LOG_INFO, "no profile for")) << all_log();
  EXPECT_FALSE(logged(NCCL_LOG_INFO, "as found for an earlier")) << all_log();
  expect_nccls_choices();
}

TEST_F(TunerPlugin, CommunicatorsInitialisedAtOnceShareOneLookup) {
  make_store();
  constexpr int kThreads = 8;
  std::array<void*, kThreads> contexts{};
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (void*& context : contexts)
    threads.emplace_back([&, context_out = &context] {
      start.arrive_and_wait();
      init_v5(16, 2, context_out);
    });
  for (std::thread& thread : threads) thread.join();

  EXPECT_EQ(count_logged(NCCL_LOG_INFO, "using"), kThreads) << all_log();
  EXPECT_EQ(count_logged(NCCL_LOG_INFO, "as found for an earlier communicator"), kThreads - 1) << all_log();
  for (void* context : contexts) {
    ASSERT_NE(context, nullptr);
    EXPECT_EQ(nccl_pick(call_on(context, 65536)), std::make_pair(kAlgoRing, kProtoLl128));
    EXPECT_EQ(channels, 24);
    EXPECT_EQ(v5_->finalize(context), ncclSuccess);
  }
}

TEST_F(TunerPlugin, LogsThroughNcclsTuningSubsystem) {
  setenv("NCCLTUNE_PROFILE", (fixture("plugin/h100-2n.yaml")).c_str(), 1);
  init_v5(16, 2);
  call(65536);
  call(65537);  // same range: reported once
  ASSERT_FALSE(g_logged.empty());
  int range_lines = 0;
  for (const LoggedLine& line : g_logged) {
    EXPECT_EQ(line.flags & NCCL_TUNING, static_cast<unsigned long>(NCCL_TUNING));
    if (line.text.find("65536..1048575 bytes: Ring/LL128, 24 channels") != std::string::npos) ++range_lines;
  }
  EXPECT_EQ(range_lines, 1) << all_log();
}

// ---- the pure choice --------------------------------------------------------------------------

TEST(CostTableChoice, MapsNcclNamesToNccl228Indices) {
  EXPECT_EQ(nccl_algorithm_index("Tree"), 0);
  EXPECT_EQ(nccl_algorithm_index("ring"), 1);
  EXPECT_EQ(nccl_algorithm_index("CollnetDirect"), 2);
  EXPECT_EQ(nccl_algorithm_index("CollNetChain"), 3);
  EXPECT_EQ(nccl_algorithm_index("NVLS"), 4);
  EXPECT_EQ(nccl_algorithm_index("nvlstree"), 5);
  EXPECT_EQ(nccl_algorithm_index("PAT"), 6);
  EXPECT_EQ(nccl_protocol_index("LL"), 0);
  EXPECT_EQ(nccl_protocol_index("ll128"), 1);
  EXPECT_EQ(nccl_protocol_index("Simple"), 2);
  for (const char* not_one : {"", "Ring,Tree", "^Tree", "CollNet", "Rings"})
    EXPECT_EQ(nccl_algorithm_index(not_one), std::nullopt) << not_one;
  EXPECT_EQ(nccl_protocol_index("LL,LL128"), std::nullopt);
  EXPECT_EQ(nccl_algorithm_name(5), "NVLSTree");
  EXPECT_EQ(nccl_protocol_name(3), "?");
}

TEST(CostTableChoice, AnAlgorithmWithoutAProtocolIsLeftToNccl) {
  const std::vector<SizeChoice> per_size = {{0, 100, "Ring", "", 8}};
  const NcclCostTable table(8);
  const ResolvedRanges ranges = resolve_ranges(&per_size, {nccl_algorithm_index, nccl_protocol_index});
  ASSERT_EQ(ranges.cells.size(), 1u);
  EXPECT_EQ(ranges.cells[0].algorithm, std::optional<int>(kAlgoRing));
  EXPECT_EQ(ranges.cells[0].protocol, std::nullopt);
  const CostTableChoice choice =
      choose_cost_table_cell(ranges, 8, CostTable{&table.cells[0][0], kNumAlgorithms, kNumProtocols});
  EXPECT_EQ(choice.outcome, ChoiceOutcome::left_to_nccl);
  EXPECT_EQ(choice.channels, 0);
  EXPECT_EQ(choice.range, std::optional<std::size_t>(0));
}

}  // namespace
}  // namespace nccltune
