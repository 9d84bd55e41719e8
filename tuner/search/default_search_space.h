// configs/search-space.yaml, built into the binary so `tune` needs no installed file.
#pragma once

#include <string_view>

namespace nccltune {

std::string_view default_search_space_yaml();

}  // namespace nccltune
