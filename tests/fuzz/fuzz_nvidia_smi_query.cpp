// Feeds arbitrary bytes to parse_nvidia_smi_query (the text of `nvidia-smi -q`, read by
// `--from nvidia-smi-q:FILE` and a snapshot's nvidia-smi-q.txt) and, when it parses, to what
// `topo` and `check` do with the result: the merge into a topology, the table, the checks and
// their text, the NCCL topology XML. Asserts only what the sanitizers and a clean return assert.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "topology/check_render.h"
#include "topology/checks.h"
#include "topology/nccl_topo_xml.h"
#include "topology/nvidia_smi_query.h"
#include "topology/sources/topology_reader.h"
#include "topology/topology_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto query = nccltune::parse_nvidia_smi_query(text, "fuzz.txt");
  if (!query) return 0;
  nccltune::TopologyInputs inputs;
  inputs.host = "fuzz";
  inputs.nvidia_smi_query = std::move(query.value());
  const nccltune::NodeTopology topology = nccltune::merge_topology(inputs);
  (void)nccltune::render_topology_table(topology);
  auto report = nccltune::check_node(topology, nccltune::Expectation{});
  (void)nccltune::render_check_text(topology, report);
  (void)nccltune::nccl_topo_xml(topology);
  return 0;
}
