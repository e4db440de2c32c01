// The Longstaff-Schwartz regression's solver (models/pricing/least_squares.hpp)
// and basis (kernels/pricing/exercise_basis.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "kernels/pricing/exercise_basis.hpp"
#include "models/pricing/least_squares.hpp"

using strata::pricing::solve_normal_equations;

namespace {

// A = Phi^T Phi and b = Phi^T y of the rows of phi (m columns).
void normal_equations(const std::vector<std::vector<double>>& phi, const std::vector<double>& y, int m,
                      std::vector<double>& a, std::vector<double>& b) {
  a.assign(static_cast<std::size_t>(m * m), 0.0);
  b.assign(static_cast<std::size_t>(m), 0.0);
  for (std::size_t r = 0; r < phi.size(); ++r) {
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < m; ++j)
        a[static_cast<std::size_t>(i * m + j)] +=
            phi[r][static_cast<std::size_t>(i)] * phi[r][static_cast<std::size_t>(j)];
      b[static_cast<std::size_t>(i)] += phi[r][static_cast<std::size_t>(i)] * y[r];
    }
  }
}

double fitted(const std::vector<double>& row, const std::vector<double>& beta) {
  double s = 0.0;
  for (std::size_t i = 0; i < beta.size(); ++i) s += row[i] * beta[i];
  return s;
}

}  // namespace

TEST_CASE("least squares: a full-rank fit recovers exact coefficients", "[lsm]") {
  // y = 2 - 3x + 0.5x^2 on 7 points: the residual is zero, so beta is exact
  // up to rounding amplified by the condition number (~1e3 here).
  std::vector<std::vector<double>> phi;
  std::vector<double> y;
  for (int k = 0; k < 7; ++k) {
    const double x = 0.5 + 0.15 * k;
    phi.push_back({1.0, x, x * x});
    y.push_back(2.0 - 3.0 * x + 0.5 * x * x);
  }
  std::vector<double> a, b;
  normal_equations(phi, y, 3, a, b);
  const auto fit = solve_normal_equations(a, b, 3);
  CHECK(fit.rank == 3);
  CHECK(fit.beta[0] == Approx(2.0).margin(1e-9));
  CHECK(fit.beta[1] == Approx(-3.0).margin(1e-9));
  CHECK(fit.beta[2] == Approx(0.5).margin(1e-9));
}

TEST_CASE("least squares: a rank-deficient basis gives the projection, rank counted", "[lsm]") {
  // Columns 1, x, 1 + x: rank 2. Any least-squares solution has the same
  // fitted values, here y = 1 + 2x exactly (the projection of y onto the
  // column space), whereas the unregularised normal equations are singular.
  std::vector<std::vector<double>> phi;
  std::vector<double> y;
  for (int k = 0; k < 5; ++k) {
    const double x = 0.8 + 0.1 * k;
    phi.push_back({1.0, x, 1.0 + x});
    y.push_back(1.0 + 2.0 * x);
  }
  std::vector<double> a, b;
  normal_equations(phi, y, 3, a, b);
  const auto fit = solve_normal_equations(a, b, 3);
  CHECK(fit.rank == 2);
  for (std::size_t r = 0; r < phi.size(); ++r) CHECK(fitted(phi[r], fit.beta) == Approx(y[r]).margin(1e-10));
  // The solution is finite and modest: the null direction (1, 1, -1) was dropped.
  for (double v : fit.beta) CHECK(std::fabs(v) < 10.0);
}

TEST_CASE("least squares: a column without data gets a zero coefficient", "[lsm]") {
  // The third basis function is zero on every path (no in-the-money path
  // reaches it): its coefficient is 0, the others fit y = 3 - x.
  std::vector<std::vector<double>> phi;
  std::vector<double> y;
  for (int k = 0; k < 4; ++k) {
    const double x = k;
    phi.push_back({1.0, x, 0.0});
    y.push_back(3.0 - x);
  }
  std::vector<double> a, b;
  normal_equations(phi, y, 3, a, b);
  const auto fit = solve_normal_equations(a, b, 3);
  CHECK(fit.rank == 2);
  CHECK(fit.beta[0] == Approx(3.0).margin(1e-12));
  CHECK(fit.beta[1] == Approx(-1.0).margin(1e-12));
  CHECK(fit.beta[2] == 0.0);
  // No data at all: nothing to fit, every coefficient 0.
  const auto none = solve_normal_equations(std::vector<double>(9, 0.0), std::vector<double>(3, 0.0), 3);
  CHECK(none.rank == 0);
  for (double v : none.beta) CHECK(v == 0.0);
}

TEST_CASE("least squares: ill-conditioned monomials near x = 1 stay finite and fit", "[lsm]") {
  // 1, x, ..., x^d on [0.8, 1.2] fitted to exp(-x). Degree 4: the scaled
  // normal matrix's smallest eigenvalue is above the 1e-12 cut, every
  // direction is kept and the fit is the least-squares one, whose error is
  // the degree-5 Taylor term 0.2^5/5! e^-0.8 ~ 1.2e-6 at most. Degree 8: the
  // normal matrix's condition number is far beyond 1e16, directions are
  // dropped, and the fit must stay within the degree-4 bound's order (1e-5):
  // what is dropped carries no more than the rounding could corrupt.
  for (int degree : {4, 8}) {
    const int m = degree + 1;
    std::vector<std::vector<double>> phi;
    std::vector<double> y;
    for (int k = 0; k <= 200; ++k) {
      const double x = 0.8 + 0.002 * k;
      std::vector<double> row(static_cast<std::size_t>(m));
      strata::kernels::pricing::exercise_basis(false, degree, x, row.data());
      phi.push_back(row);
      y.push_back(std::exp(-x));
    }
    std::vector<double> a, b;
    normal_equations(phi, y, m, a, b);
    const auto fit = solve_normal_equations(a, b, m);
    INFO("degree " << degree << ", rank " << fit.rank);
    if (degree == 4) CHECK(fit.rank == m);
    if (degree == 8) CHECK(fit.rank < m);
    const double bound = degree == 4 ? 2e-6 : 1e-5;
    for (std::size_t r = 0; r < phi.size(); ++r) CHECK(fitted(phi[r], fit.beta) == Approx(y[r]).margin(bound));
  }
}

TEST_CASE("exercise basis: Laguerre polynomials by their closed forms", "[lsm]") {
  // L_2 = 1 - 2x + x^2/2, L_3 = 1 - 3x + 3x^2/2 - x^3/6 (A&S 22.3.9).
  double phi[4];
  for (double x : {0.0, 0.7, 1.3, 4.0}) {
    strata::kernels::pricing::exercise_basis(true, 3, x, phi);
    CHECK(phi[0] == 1.0);
    CHECK(phi[1] == Approx(1.0 - x));
    CHECK(phi[2] == Approx(1.0 - 2.0 * x + 0.5 * x * x).margin(1e-14));
    CHECK(phi[3] == Approx(1.0 - 3.0 * x + 1.5 * x * x - x * x * x / 6.0).margin(1e-14));
  }
}
