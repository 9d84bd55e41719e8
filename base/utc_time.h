// The one way nccltune writes a time: RFC 3339 in UTC to the second, "2026-11-29T12:00:00Z"
// (snapshot meta.yaml's date, a profile's provenance.date, node.yaml's scanned_at).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace nccltune {

std::string rfc3339_utc(std::chrono::system_clock::time_point time = std::chrono::system_clock::now());

// "2026-11-29T12:00:00Z" back to a time; nullopt for anything else.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339_utc(std::string_view text);

}  // namespace nccltune
