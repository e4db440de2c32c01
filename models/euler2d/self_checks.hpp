// euler2d's self-checks for `strata validate`: miniWeather's own test and
// the balanced atmosphere at rest.
#pragma once

#include <vector>

#include "engine/runtime/model.hpp"

namespace strata::euler2d {

std::vector<CheckResult> self_checks(RunContext& ctx);

}  // namespace strata::euler2d
