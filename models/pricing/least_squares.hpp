// Least squares from normal equations, stable for a rank-deficient basis:
// the Longstaff-Schwartz regression's small (degree + 1)^2 system.
#pragma once

#include <vector>

namespace strata::pricing {

// Directions of the scaled normal matrix with an eigenvalue below this
// fraction of the largest are dropped. The normal matrix squares the basis
// matrix's condition number, and its rounding perturbs each eigenvalue by
// about m eps lambda_max (m <= 9: ~1e-15 of lambda_max); 1e-12 keeps a
// margin of 10^3 above that noise, so a kept direction's eigenvalue has at
// least 3 correct digits (a dropped one: a singular value of the scaled
// basis matrix below 1e-6 of the largest).
inline constexpr double kLeastSquaresRelTol = 1e-12;

struct LeastSquaresFit {
  std::vector<double> beta;  // m coefficients (0 for a basis function with no data)
  int rank = 0;              // directions kept
};

// Minimises |Phi beta - y|^2 given A = Phi^T Phi (m x m, row-major,
// symmetric) and b = Phi^T y. The columns are first scaled to a unit
// diagonal (a zero column is left out), then the scaled matrix is
// diagonalised by cyclic Jacobi rotations (Golub and Van Loan, Matrix
// Computations, 4th ed., sec. 8.5; for a symmetric positive semi-definite
// matrix this is its SVD) and inverted on the kept directions only: the
// pseudo-inverse solution in scaled coordinates. Its fitted values Phi beta
// are the least-squares projection whatever the rank. Deterministic: the
// same input gives the same bits on every rank.
LeastSquaresFit solve_normal_equations(const std::vector<double>& a, const std::vector<double>& b, int m,
                                       double rel_tol = kLeastSquaresRelTol);

}  // namespace strata::pricing
