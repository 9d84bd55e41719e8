// An optional as JSON: its value, or null when it has none (the schemas' rule: what a source
// cannot know is null, never invented). Header-only, like nlohmann/json itself.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace nccltune {

template <class Json = nlohmann::ordered_json, class T>
Json optional_to_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

}  // namespace nccltune
