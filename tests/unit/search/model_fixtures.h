// What the strategy's model tests share: the rank count they answer at, the fake-GPU models of
// tests/fixtures/models, and the sizes of the final grid.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dgx_shape.h"
#include "fake_model.h"
#include "search/default_search_space.h"
#include "search/search_space.h"
#include "search/strategy.h"

namespace nccltune::test_support {

inline constexpr int kNodes = 2;
inline constexpr int kRanks = 16;  // 2 nodes x 8 GPUs, as the strategy benchmark

// tests/fixtures/models/<name> as a communicator of kNodes nodes runs it (model_for_nodes: its
// `nodes` entry, and NCCL's rules for that count, NVLS off); a model that does not load fails the test.
inline fake::FakeModel load_model(const std::string& name) {
  Result<fake::FakeModel> model = fake::load_fake_model(std::string(NCCLTUNE_FIXTURES) + "/models/" + name);
  EXPECT_TRUE(model.ok()) << model.error();
  return model.ok() ? fake::model_for_nodes(*model, kNodes, kRanks / kNodes) : fake::FakeModel{};
}

// The shipped search space as tune prunes it for kNodes DGX H100 nodes tuning all_reduce.
inline const SearchSpace& two_node_space() {
  static const SearchSpace space = [] {
    Result<SearchSpace> parsed = parse_search_space(default_search_space_yaml(), "configs/search-space.yaml");
    EXPECT_TRUE(parsed.ok()) << parsed.error();
    return parsed.ok() ? prune(*parsed, dgx_h100_facts(kNodes, {"all_reduce"})) : SearchSpace{};
  }();
  return space;
}

inline std::vector<std::uint64_t> final_sizes() {
  return grid_sizes(StrategyOptions{}.final_grid);
}

}  // namespace nccltune::test_support
