// Regression basis of the Longstaff-Schwartz exercise policy: functions of
// the normalised underlying x = U / K (U: the asset, or the weighted
// average of a basket), up to degree d.
//
//   laguerre: L_0..L_d, the plain Laguerre polynomials by the recurrence
//             L_0 = 1, L_1 = 1 - x, (n + 1) L_{n+1} = (2n + 1 - x) L_n - n L_{n-1}
//             (Abramowitz and Stegun 22.7.12), without the exp(-x/2) weight
//             of Longstaff and Schwartz (2001) eq. (3): near x = 1 the weight
//             is almost constant, and without it the span is that of the
//             monomials, so both bases fit the same continuation value and
//             differ only in conditioning;
//   monomial: 1, x, ..., x^d.
//
// The fit itself (models/pricing/longstaff_schwartz.cpp) runs on the host
// in double; the pricing pass evaluates the continuation on each path.
#pragma once

#include "kernels/core/hd.hpp"

namespace strata::kernels::pricing {

inline constexpr int kMaxExerciseDegree = 8;

STRATA_HD inline void exercise_basis(bool laguerre, int degree, double x, double* phi) {
  phi[0] = 1.0;
  if (degree >= 1) phi[1] = laguerre ? 1.0 - x : x;
  for (int n = 1; n < degree; ++n) {
    phi[n + 1] = laguerre ? ((2.0 * n + 1.0 - x) * phi[n] - n * phi[n - 1]) / (n + 1.0) : phi[n] * x;
  }
}

// The fitted continuation value sum_j beta_j phi_j(x).
STRATA_HD inline double continuation_value(bool laguerre, int degree, const double* beta, double x) {
  double phi[kMaxExerciseDegree + 1];
  exercise_basis(laguerre, degree, x, phi);
  double c = 0.0;
  for (int j = 0; j <= degree; ++j) c += beta[j] * phi[j];
  return c;
}

}  // namespace strata::kernels::pricing
