#include "base/yaml_error.h"

#include <yaml-cpp/depthguard.h>

namespace nccltune {

std::string yaml_error(const std::string& where, const YAML::Exception& error) {
  const int line = error.mark.is_null() ? 1 : error.mark.line + 1;
  // yaml-cpp 0.7 reports too-deep nesting with a misleading message.
  const bool too_deep = dynamic_cast<const YAML::DeepRecursion*>(&error) != nullptr;
  return where + ":" + std::to_string(line) +
         ": invalid YAML: " + (too_deep ? "nested too deeply" : error.msg);
}

}  // namespace nccltune
