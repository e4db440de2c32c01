// Engine self-checks for `strata validate`: the Philox4x32-10 known-answer
// vectors, computed by a kernel on the chosen backend.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/runtime/model.hpp"
#include "kernels/core/hd.hpp"
#include "kernels/rng/philox.hpp"

namespace strata {

// Computes philox4x32_10(ctr[i], key[i]) into out[i]: the kernel the
// known-answer check runs on each backend.
struct PhiloxKatKernel {
  const rng::PhiloxCounter* ctr;
  const rng::PhiloxKey* key;
  rng::PhiloxCounter* out;
  STRATA_HD void operator()(std::int64_t i) const { out[i] = rng::philox4x32_10(ctr[i], key[i]); }
};

std::vector<CheckResult> rng_self_checks(const Device& device);

}  // namespace strata
