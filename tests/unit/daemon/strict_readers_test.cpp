// Every reader of a YAML file that crosses a trust boundary goes through base/strict_yaml.h: an
// alias bomb, a second document, a tag and an unknown key are each refused with one line naming
// the file and the line, and a valid document of each kind still reads.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "daemon/daemon_config.h"
#include "fake_model.h"
#include "node/env_config.h"
#include "node/node_state.h"
#include "profile/profile.h"
#include "search/search_space.h"
#include "test_files.h"
#include "topology/checks.h"
#include "topology/nvml_facts.h"
#include "topology/sources/topology_reader.h"

using namespace nccltune;
using namespace nccltune::test_support;

namespace {

struct Reader {
  std::string name;
  std::string valid;  // a valid document: a map at the top
  // The reader's error for `text` read from a file or text named `origin`; "" when it accepts it.
  std::function<std::string(const std::string& text, const std::string& origin)> error_of;
};

template <class T>
std::string error(const Result<T>& result) {
  return result ? std::string() : result.error();
}

// File readers get the text as a file under `dir`.
std::filesystem::path written(const std::filesystem::path& file, const std::string& text) {
  write_file(file, text);
  return file;
}

std::vector<Reader> readers(const TempDir& dir) {
  NodeState state;
  state.host = "node01";
  state.scanned_at = "2026-11-29T12:00:00Z";
  state.node_type_key = "h100.8gpu.nccl2.28";
  return {
      {"profile", "schema: nccltune/profile/v1\nshape: {key: k, nodes: 1}\nenv: {}\n",
       [](const std::string& text, const std::string& origin) { return error(parse_profile(text, origin)); }},
      {"node state", render_node_state(state),
       [](const std::string& text, const std::string& origin) {
         return error(parse_node_state(text, origin));
       }},
      {"env config", "env:\n  store: /shared/profiles\n",
       [](const std::string& text, const std::string& origin) {
         return error(parse_env_config(text, origin));
       }},
      {"daemon config", "daemon:\n  interval: 5m\n",
       [](const std::string& text, const std::string& origin) {
         return error(parse_daemon_config(text, origin));
       }},
      {"search space", "schema: nccltune/search-space/v1\nknobs: [{name: NCCL_ALGO, values: [Ring]}]\n",
       [](const std::string& text, const std::string& origin) {
         return error(parse_search_space(text, origin));
       }},
      {"fake model", "schema: nccltune/fake-model/v1\nalgos: {Ring: {Simple: {lat_us: 1, busbw_gbps: 1}}}\n",
       [](const std::string& text, const std::string& origin) {
         return error(fake::parse_fake_model(text, origin));
       }},
      {"check --expect", "gpus: 8\n",
       [&dir](const std::string& text, const std::string&) {
         return error(read_expectation(written(dir / "expect.yaml", text)));
       }},
      {"snapshot nvml.yaml", "gpus: [{index: 0, pci: \"0000:18:00.0\"}]\n",
       [&dir](const std::string& text, const std::string&) {
         return error(read_nvml_yaml(written(dir / "nvml.yaml", text)));
       }},
      {"snapshot meta.yaml", "schema: nccltune/snapshot/v1\nhost: node01\n",
       [&dir](const std::string& text, const std::string&) {
         write_file(dir / "snapshot" / "nvml.yaml", "gpus: []\n");
         write_file(dir / "snapshot" / "meta.yaml", text);
         return error(read_node_topology({TopologySource::Kind::snapshot, (dir / "snapshot").string()}, {}));
       }},
  };
}

}  // namespace

TEST(StrictReaders, RefuseAliasBombsSecondDocumentsTagsAndUnknownKeys) {
  TempDir dir("strict-readers");
  const std::string bomb =
      "lol1: &a [x, x, x, x, x, x, x, x, x]\nlol2: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
      "lol3: [*b, *b, *b, *b, *b, *b, *b, *b]\n";
  for (const Reader& reader : readers(dir)) {
    SCOPED_TRACE(reader.name);
    ASSERT_EQ(reader.error_of(reader.valid, "file.yaml"), "") << "the valid document";
    const int next_line = 1 + static_cast<int>(std::count(reader.valid.begin(), reader.valid.end(), '\n'));
    const struct {
      std::string what, text, expected;
    } cases[] = {
        {"alias bomb", reader.valid + bomb,
         ":" + std::to_string(next_line) + ": anchors (&name) are not allowed"},
        {"second document", reader.valid + "---\n" + reader.valid, ": more than one YAML document"},
        {"tag", reader.valid + "binary: !!binary aGVsbG8=\n",
         ":" + std::to_string(next_line) + ": explicit tags (tag:yaml.org,2002:binary) are not allowed"},
        {"unknown key", reader.valid + "no_such_key: 1\n",
         ":" + std::to_string(next_line) + ": unknown key 'no_such_key'"},
    };
    for (const auto& c : cases) {
      const std::string message = reader.error_of(c.text, "file.yaml");
      EXPECT_NE(message.find(c.expected), std::string::npos) << c.what << ": " << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << c.what << ": one line";
    }
  }
}

TEST(StrictReaders, OneBooleanGrammar) {
  for (const char* yes : {"true", "True", "TRUE"}) {
    Result<DaemonConfig> config =
        parse_daemon_config(std::string("daemon:\n  nccl_conf: {manage: ") + yes + "}\n", "c");
    ASSERT_TRUE(config) << config.error();
    EXPECT_TRUE(config->manage_nccl_conf) << yes;
    const std::string profile =
        std::string("schema: nccltune/profile/v1\nshape: {key: k, nodes: 1, nvswitch: ") + yes +
        "}\nenv: {}\n";
    ASSERT_TRUE(parse_profile(profile, "p")) << yes;
    EXPECT_TRUE(parse_profile(profile, "p")->shape.nvswitch) << yes;
  }
  for (const char* not_a_boolean : {"yes", "on", "1", "\"true\""}) {
    EXPECT_FALSE(
        parse_daemon_config(std::string("daemon:\n  nccl_conf: {manage: ") + not_a_boolean + "}\n", "c"))
        << not_a_boolean;
    EXPECT_FALSE(
        parse_profile(std::string("schema: nccltune/profile/v1\nshape: {key: k, nodes: 1, nvswitch: ") +
                          not_a_boolean + "}\nenv: {}\n",
                      "p"))
        << not_a_boolean;
  }
}
