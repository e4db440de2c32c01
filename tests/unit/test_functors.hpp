// Functors the backend tests launch, and their kernel list
// (engine/backend/parallel.hpp).
#pragma once

#include <cstdint>

#include "engine/backend/parallel.hpp"
#include "kernels/core/exact_sum.hpp"
#include "kernels/core/hd.hpp"

namespace strata::test {

// 1 / (i + 1): sums to the harmonic numbers.
struct Harmonic {
  STRATA_HD double operator()(std::int64_t i) const { return 1.0 / static_cast<double>(i + 1); }
};

// i, except a NaN at index `at`.
struct NaNAt {
  std::int64_t at;
  STRATA_HD double operator()(std::int64_t i) const { return i == at ? __builtin_nan("") : static_cast<double>(i); }
};

}  // namespace strata::test

#define STRATA_TEST_KERNELS(M, Real)                                  \
  STRATA_ONCE(Real, STRATA_REDUCE(M, double, strata::Plus, strata::test::Harmonic) \
                        STRATA_REDUCE(M, double, strata::kernels::MaxOp, strata::test::NaNAt))
STRATA_DECLARE_KERNELS(STRATA_TEST_KERNELS)
