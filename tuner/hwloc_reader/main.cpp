// nccltune-hwloc-xml FILE: loads an hwloc XML export with libhwloc and prints what nccltune reads
// from it as one JSON object on stdout: {"inventory": ...} or {"error": "FILE: ..."}. It exists so
// that a crash inside libhwloc on a damaged file (seen on edited fixtures: segfaults in
// hwloc_bitmap_or and compare_first) ends this process, not `nccltune topo`, `report` or the
// daemon; read_hwloc_xml (hwloc_xml_child.cpp) runs it.
#include <sys/resource.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "base/atomic_file.h"
#include "topology/sources/hwloc_source.h"
#include "topology/sources/pci_inventory_json.h"

#if defined(__SANITIZE_ADDRESS__)
#define NCCLTUNE_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NCCLTUNE_UNDER_ASAN 1
#endif
#endif

namespace {

// No core file from a crash on a hostile input, and bounded CPU time. Memory is bounded too,
// except under AddressSanitizer, which reserves terabytes of address space for its shadow.
void limit_resources() {
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  const rlimit cpu{60, 60};
  setrlimit(RLIMIT_CPU, &cpu);
#ifndef NCCLTUNE_UNDER_ASAN
  const rlimit memory{rlim_t{4} << 30, rlim_t{4} << 30};
  setrlimit(RLIMIT_AS, &memory);
#endif
}

int answer(const nlohmann::json& object) {
  std::cout << object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return object.contains("error") ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: nccltune-hwloc-xml FILE (run by nccltune to read hwloc XML exports)\n");
    return 2;
  }
  limit_resources();
  const std::string file = argv[1];
  const nccltune::Result<std::string> xml = nccltune::read_text_file(file, nccltune::kMaxSnapshotBytes);
  if (!xml) return answer({{"error", xml.error()}});
  const nccltune::Result<nccltune::PciInventory> inventory = nccltune::read_hwloc_xml_in_process(*xml);
  if (!inventory) return answer({{"error", file + ": " + inventory.error()}});
  return answer({{"inventory", nccltune::pci_inventory_to_json(*inventory)}});
}
