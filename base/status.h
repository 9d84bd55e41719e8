// Status: the Result of a fallible step that returns nothing but success or a one-line error.
#pragma once

#include "base/result.h"

namespace nccltune {

struct Ok {};
using Status = Result<Ok>;

}  // namespace nccltune
