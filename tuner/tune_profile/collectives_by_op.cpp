#include "tune_profile/collectives_by_op.h"

namespace nccltune {

namespace {

// Both constnesses alike: `P` is Profile or const Profile.
template <typename P, typename Entry>
std::map<ShapedOp, Entry*> collectives_by_op_of(P& profile) {
  std::map<ShapedOp, Entry*> ops;
  for (auto& [name, collective] : profile.collectives) ops[{name, CommRole::world}] = &collective;
  // A tune writes one section per role; of a file with two (a rail of fewer nodes beside the
  // profile's), the first stands.
  for (auto& section : profile.shapes)
    for (auto& [name, collective] : section.collectives) ops.try_emplace({name, section.role}, &collective);
  return ops;
}

}  // namespace

std::map<ShapedOp, CollectiveProfile*> collectives_by_op(Profile& profile) {
  return collectives_by_op_of<Profile, CollectiveProfile>(profile);
}

std::map<ShapedOp, const CollectiveProfile*> collectives_by_op(const Profile& profile) {
  return collectives_by_op_of<const Profile, const CollectiveProfile>(profile);
}

}  // namespace nccltune
