// Feeds arbitrary bytes to parse_nvidia_smi_topo (the text of `nvidia-smi topo -m`, read by
// `--from nvidia-smi:FILE`) and, when it parses, to what `topo` and `check` do with the result:
// the table, the checks and their text, the NCCL topology XML. Asserts only what the sanitizers
// and a clean return assert; JSON output is left out on purpose (it refuses invalid UTF-8).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "topology/check_render.h"
#include "topology/checks.h"
#include "topology/nccl_topo_xml.h"
#include "topology/nvidia_smi_topo.h"
#include "topology/topology_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto topology = nccltune::parse_nvidia_smi_topo(text, "fuzz.txt");
  if (!topology) return 0;
  (void)nccltune::render_topology_table(*topology);
  auto report = nccltune::check_node(*topology, nccltune::Expectation{});
  (void)nccltune::render_check_text(*topology, report);
  (void)nccltune::nccl_topo_xml(*topology);
  return 0;
}
