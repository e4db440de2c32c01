// Philox4x32-10 of a batch of (counter, key) pairs: the kernel behind the
// known-answer check that `strata validate` runs on each backend.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/rng/philox.hpp"

namespace strata::rng {

struct PhiloxBatch {
  const PhiloxCounter* ctr;
  const PhiloxKey* key;
  PhiloxCounter* out;
  STRATA_HD void operator()(std::int64_t i) const { out[i] = philox4x32_10(ctr[i], key[i]); }
};

}  // namespace strata::rng
