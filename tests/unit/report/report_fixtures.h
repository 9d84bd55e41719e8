// What the report tests share: fixtures read whole, and a count of a needle in rendered text.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "profile/profile.h"
#include "test_files.h"
#include "topology/sources/topology_reader.h"

namespace nccltune::test_support {

// tests/fixtures/report/<relative> as a profile; a profile that does not read fails the test.
inline Profile read_report_profile(const std::string& relative) {
  auto profile = read_profile(fixture("report/" + relative));
  EXPECT_TRUE(profile) << profile.error();
  return profile ? *profile : Profile{};
}

// The node snapshot tests/fixtures/nodes/<name>, read as `topo --from` reads it.
inline NodeTopology read_node_snapshot(const std::string& name) {
  auto source = parse_topology_source(fixture("nodes/" + name).string());
  EXPECT_TRUE(source) << source.error();
  auto topology = read_node_topology(*source, {});
  EXPECT_TRUE(topology) << topology.error();
  return topology ? *topology : NodeTopology{};
}

// How often `needle` occurs in `text`, overlaps included.
inline std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace nccltune::test_support
