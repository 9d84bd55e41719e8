// The machine-readable forms of a NodeTopology: JSON (`nccltune/topology/v1`) and the same
// document as YAML. One data model, several renderers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "topology/node_topology.h"

namespace nccltune {

nlohmann::ordered_json topology_to_json(const NodeTopology& topology);

// Renders any JSON document as block-style YAML (strings quoted, nulls as null).
std::string json_to_yaml(const nlohmann::ordered_json& document);

}  // namespace nccltune
