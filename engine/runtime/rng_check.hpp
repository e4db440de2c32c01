// Engine self-checks for `strata validate`: the Philox4x32-10 known-answer
// vectors, computed by a kernel on the chosen backend.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/runtime/model.hpp"

namespace strata {

std::vector<CheckResult> rng_self_checks(const Device& device);

}  // namespace strata
