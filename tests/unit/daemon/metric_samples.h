// What the metrics tests share: a textfile's samples by name.
#pragma once

#include <map>
#include <sstream>
#include <string>

namespace nccltune::test_support {

// name{labels} -> value, for every sample line of a Prometheus textfile.
inline std::map<std::string, std::string> metric_samples(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    out[line.substr(0, space)] = line.substr(space + 1);
  }
  return out;
}

}  // namespace nccltune::test_support
