// md's analytic self-checks for `strata validate`.
#pragma once

#include <vector>

#include "engine/runtime/model.hpp"

namespace strata::md {

std::vector<CheckResult> self_checks(RunContext& ctx);

}  // namespace strata::md
