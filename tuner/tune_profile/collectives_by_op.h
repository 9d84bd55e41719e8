// A profile's collectives on every communicator it measured, keyed by ShapedOp: the world's
// (Profile::collectives) and each section's (Profile::shapes). What reads or changes them all
// alike (the tuner plugin's confirmation, tune's checks) walks them so, in ShapedOp's order.
#pragma once

#include <map>

#include "profile/profile.h"

namespace nccltune {

std::map<ShapedOp, CollectiveProfile*> collectives_by_op(Profile& profile);
std::map<ShapedOp, const CollectiveProfile*> collectives_by_op(const Profile& profile);

}  // namespace nccltune
