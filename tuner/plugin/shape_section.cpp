#include "plugin/shape_section.h"

namespace nccltune {

std::optional<ServedSection> section_for_communicator(const Profile& profile, const JobShape& job) {
  if (!job.gpus_per_node) return std::nullopt;
  for (const CommunicatorSection& section : profile.shapes) {
    if (section.ranks_per_node != *job.gpus_per_node) continue;
    if (section.nodes != job.nodes && !(section.nodes == 1 && job.nodes == 1)) continue;
    ServedSection served{profile, describe_section(section, profile.shape.mnnvl)};
    served.profile.collectives = section.collectives;
    served.profile.shapes.clear();
    return served;
  }
  return std::nullopt;
}

std::string measured_shapes_text(const Profile& profile) {
  const ProfileShape& shape = profile.shape;
  std::string text = describe_section({shape.nodes, shape.gpus_per_node, CommRole::world, {}}, shape.mnnvl);
  for (const CommunicatorSection& section : profile.shapes)
    text += "; " + describe_section(section, shape.mnnvl);
  return text;
}

}  // namespace nccltune
