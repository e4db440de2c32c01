// The standard normal quantile Phi^{-1}(p): Wichura's algorithm AS 241
// (PPND16), "The percentage points of the normal distribution", Applied
// Statistics 37(3), 477-484 (1988). Three rational approximations of degree
// 7/7: in q = p - 1/2 for |q| <= 0.425, and in r = sqrt(-log(min(p, 1-p)))
// for r <= 5 and beyond; relative error about 1e-16 over the doubles.
//
// Quasi-Monte Carlo turns uniform points into normals by inversion (one
// uniform, one normal, so a point's low-discrepancy structure carries over,
// which Box-Muller's pairing would scramble). The coefficients are the
// paper's; tests/unit/test_sobol.cpp checks the transcription with the
// paper's hash sums (the sums of the coefficients' mantissas) and
// Phi(Phi^{-1}(p)) = p.
#pragma once

#include <cmath>

#include "kernels/core/hd.hpp"

namespace strata::rng {

// AS 241's coefficients: table 0..5 = the paper's A, B, C, D, E, F, term k
// = coefficient of x^k (B, D, F lead with 1). A table local to a STRATA_HD
// function, because a namespace-scope array is host memory to nvcc; static,
// so that a call the compiler does not inline reads it instead of building
// it on the stack (that copy was 3/4 of a Sobol' path's time on the host).
STRATA_HD inline double as241_coefficient(int table, int k) {
  static constexpr double t[6][8] = {
      // A: central region, |p - 1/2| <= 0.425. Paper's HASH SUM AB 55.8831928806149014439.
      {3.3871328727963666080e0, 1.3314166789178437745e+2, 1.9715909503065514427e+3, 1.3731693765509461125e+4,
       4.5921953931549871457e+4, 6.7265770927008700853e+4, 3.3430575583588128105e+4, 2.5090809287301226727e+3},
      // B
      {1.0, 4.2313330701600911252e+1, 6.8718700749205790830e+2, 5.3941960214247511077e+3,
       2.1213794301586595867e+4, 3.9307895800092710610e+4, 2.8729085735721942674e+4, 5.2264952788528545610e+3},
      // C: intermediate tails, r <= 5. HASH SUM CD 49.33206503301610289036.
      {1.42343711074968357734e0, 4.63033784615654529590e0, 5.76949722146069140550e0, 3.64784832476320460504e0,
       1.27045825245236838258e0, 2.41780725177450611770e-1, 2.27238449892691845833e-2, 7.74545014278341407640e-4},
      // D
      {1.0, 2.05319162663775882187e0, 1.67638483018380384940e0, 6.89767334985100004550e-1,
       1.48103976427480074590e-1, 1.51986665636164571966e-2, 5.47593808499534494600e-4, 1.05075007164441684324e-9},
      // E: far tails, r > 5 (p below about 1.4e-11). HASH SUM EF 47.52583317549289671629.
      {6.65790464350110377720e0, 5.46378491116411436990e0, 1.78482653991729133580e0, 2.96560571828504891230e-1,
       2.65321895265761230930e-2, 1.24266094738807843860e-3, 2.71155556874348757815e-5, 2.01033439929228813265e-7},
      // F
      {1.0, 5.99832206555887937690e-1, 1.36929880922735805310e-1, 1.48753612908506148525e-2,
       7.86869131145613259100e-4, 1.84631831751005468180e-5, 1.42151175831644588870e-7, 2.04426310338993978564e-15}};
  return t[table][k];
}

// The ratio of AS 241's polynomials `num` and num + 1 at x, by Horner's rule.
STRATA_HD inline double as241_ratio(int num, double x) {
  double n = as241_coefficient(num, 7), d = as241_coefficient(num + 1, 7);
  for (int k = 6; k >= 0; --k) {
    n = n * x + as241_coefficient(num, k);
    d = d * x + as241_coefficient(num + 1, k);
  }
  return n / d;
}

// Phi^{-1}(p) for p in (0, 1); p <= 0 gives -inf and p >= 1 gives +inf.
// In double whatever the model's precision: a float p is exact in double,
// and the quantile is rounded once at the end.
STRATA_HD inline double normal_quantile(double p) {
  const double q = p - 0.5;
  if (std::fabs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    return q * as241_ratio(0, r);
  }
  double r = q < 0 ? p : 1.0 - p;
  if (r <= 0) return q < 0 ? -INFINITY : INFINITY;
  r = std::sqrt(-std::log(r));
  double z;
  if (r <= 5.0) {
    r -= 1.6;
    z = as241_ratio(2, r);
  } else {
    r -= 5.0;
    z = as241_ratio(4, r);
  }
  return q < 0 ? -z : z;
}

}  // namespace strata::rng
