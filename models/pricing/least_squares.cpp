#include "models/pricing/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace strata::pricing {

LeastSquaresFit solve_normal_equations(const std::vector<double>& a, const std::vector<double>& b, int m,
                                       double rel_tol) {
  const auto n = static_cast<std::size_t>(m);
  LeastSquaresFit fit;
  fit.beta.assign(n, 0.0);
  // Scale: s_i = 1 / sqrt(A_ii), so the scaled matrix has a unit diagonal.
  std::vector<double> scale(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double d = a[i * n + i];
    if (d > 0.0 && std::isfinite(d)) scale[i] = 1.0 / std::sqrt(d);
  }
  std::vector<double> s(n * n), v(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    v[i * n + i] = 1.0;
    for (std::size_t j = 0; j < n; ++j) s[i * n + j] = scale[i] * a[i * n + j] * scale[j];
  }
  // Cyclic Jacobi: rotate away each off-diagonal entry in turn until none is
  // left above the rounding of the diagonal.
  for (int sweep = 0; sweep < 64; ++sweep) {
    double off = 0.0, diag = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      diag += s[i * n + i] * s[i * n + i];
      for (std::size_t j = i + 1; j < n; ++j) off += s[i * n + j] * s[i * n + j];
    }
    if (off <= 1e-32 * diag) break;
    for (std::size_t p = 0; p < n; ++p) {
      for (std::size_t q = p + 1; q < n; ++q) {
        const double apq = s[p * n + q];
        if (apq == 0.0) continue;
        // Golub-Van Loan Algorithm 8.5.1 (symmetric Schur decomposition).
        const double tau = (s[q * n + q] - s[p * n + p]) / (2.0 * apq);
        const double t = (tau >= 0.0 ? 1.0 : -1.0) / (std::fabs(tau) + std::sqrt(1.0 + tau * tau));
        const double c = 1.0 / std::sqrt(1.0 + t * t), sn = t * c;
        for (std::size_t k = 0; k < n; ++k) {  // S <- S J (columns p, q)
          const double skp = s[k * n + p], skq = s[k * n + q];
          s[k * n + p] = c * skp - sn * skq;
          s[k * n + q] = sn * skp + c * skq;
        }
        for (std::size_t k = 0; k < n; ++k) {  // S <- J^T S (rows p, q)
          const double spk = s[p * n + k], sqk = s[q * n + k];
          s[p * n + k] = c * spk - sn * sqk;
          s[q * n + k] = sn * spk + c * sqk;
        }
        for (std::size_t k = 0; k < n; ++k) {  // V <- V J
          const double vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = c * vkp - sn * vkq;
          v[k * n + q] = sn * vkp + c * vkq;
        }
      }
    }
  }
  double lambda_max = 0.0;
  for (std::size_t i = 0; i < n; ++i) lambda_max = std::max(lambda_max, s[i * n + i]);
  if (!(lambda_max > 0.0)) return fit;
  // gamma = sum over kept k of v_k (v_k . b_s) / lambda_k, b_s = scale * b;
  // beta = scale * gamma.
  std::vector<double> gamma(n, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    const double lambda = s[k * n + k];
    if (!(lambda > rel_tol * lambda_max)) continue;
    ++fit.rank;
    double proj = 0.0;
    for (std::size_t i = 0; i < n; ++i) proj += v[i * n + k] * scale[i] * b[i];
    for (std::size_t i = 0; i < n; ++i) gamma[i] += v[i * n + k] * proj / lambda;
  }
  for (std::size_t i = 0; i < n; ++i) fit.beta[i] = scale[i] * gamma[i];
  return fit;
}

}  // namespace strata::pricing
