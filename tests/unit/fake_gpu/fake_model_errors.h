// What the fake model's tests share: the one-line error a model text gets.
#pragma once

#include <string>

#include "fake_model.h"

namespace nccltune::test_support {

// The parser's error for `text` (read as model.yaml), or "(parsed)" when it has none.
inline std::string fake_model_error(const std::string& text) {
  const Result<fake::FakeModel> model = fake::parse_fake_model(text, "model.yaml");
  return model.ok() ? "(parsed)" : model.error();
}

}  // namespace nccltune::test_support
