// Functors the backend tests launch; instantiated for CUDA in
// test_functors_cuda.cu.
#pragma once

#include <cstdint>

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
