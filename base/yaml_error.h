// One-line messages for yaml-cpp's exceptions: "file:line: invalid YAML: ...".
#pragma once

#include <yaml-cpp/exceptions.h>

#include <string>

namespace nccltune {

std::string yaml_error(const std::string& where, const YAML::Exception& error);

}  // namespace nccltune
