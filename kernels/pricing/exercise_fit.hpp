// The Longstaff-Schwartz fit of one American on the run's device: the
// backward induction over its exercise dates, where the regression paths'
// states (exercise_states.hpp) already are. Per date f, from the last but
// one down to the first:
//
//   FitDate       a thread a sample: its realised cash flow brought up to
//                 date f + 1 (the intrinsic value at the last date; later,
//                 exercise where the policy fitted at f + 1 says so), then
//                 its terms of date f's normal equations (basis x basis,
//                 the upper triangle: the matrix is symmetric, and
//                 phi_a phi_b is phi_b phi_a to the bit; basis x cash
//                 flow; zeros out of the money);
//   FitLaneSums   each lane's terms over its samples, in order
//                 (sample_blocks.hpp's lanes: lane l of block b takes
//                 samples b*kSamplesPerBlock + l, + kLanes, ...);
//   FitLaneTree   each block's lanes by the fixed pairwise tree, so a
//                 block's sums depend on its samples alone, never on ranks
//                 or launches.
//
// The host then adds the blocks over ranks (TreeSum) and solves the small
// system (least_squares.hpp) for the date's coefficients, which the next
// date's FitDate takes by value. A date is three launches and one
// read-back of the blocks' sums; the states and cash flows never leave the
// device. A term is stored, so rounded on its own before it is added (never
// contracted into the sum): the host and a GPU add the same terms.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/work.hpp"
#include "kernels/pricing/exercise_basis.hpp"
#include "kernels/pricing/sample_blocks.hpp"

namespace strata::kernels::pricing {

// Terms of a date's normal equations at degree d (m = d + 1 basis
// functions): the matrix's upper triangle, m (m + 1) / 2, and the m of the
// right-hand side.
STRATA_HD inline int fit_width(int degree) { return (degree + 1) * (degree + 2) / 2 + degree + 1; }

// The American's policy and what a date reads and writes: sample s's term
// k at terms[k * local + s], the products phi_a phi_b (a <= b) in row order,
// then phi_a y.
struct FitDate {
  const double* states;        // [date column][local sample]: column `column` + f is date f's underlying
  int column = 0;
  int date = 0;                // f: the date whose sums this launch makes
  std::int64_t local = 0;      // this rank's regression samples (its blocks from the first)
  double* cash = nullptr;      // [local sample]: realised cash flow, discounted to time 0
  double* terms = nullptr;     // [term][local sample]
  bool call = false;
  bool laguerre = false;
  int degree = 0;
  double strike = 0;
  double discount_next = 0;    // e^{-r t} at date f + 1
  double discount = 0;         // at date f
  bool first = false;          // f + 1 is the last date: its cash flow is the intrinsic value
  double beta[kMaxExerciseDegree + 1] = {};   // date f + 1's policy (unless first)

  STRATA_HD int width() const { return fit_width(degree); }
  STRATA_HD double intrinsic(double s) const {
    const double v = call ? s - strike : strike - s;
    return v > 0.0 ? v : 0.0;
  }

  // A sample's states at f + 1 and f read, its cash flow read and
  // written, its terms written.
  Work work(std::int64_t n) const {
    const double m = degree + 1, real = sizeof(double);
    return Work{static_cast<double>(n) * (2 * real + 2 * real + width() * real),
                static_cast<double>(n) * (2 * width() + 4 * m + 12), 0};
  }

  STRATA_HD void operator()(std::int64_t s) const {
    const int m = degree + 1, w = width();
    const double* u = states + static_cast<std::int64_t>(column + date) * local + s;
    // Date f + 1's exercise under its policy (the last date: always).
    const double next = u[local], value = intrinsic(next);
    if (first) {
      cash[s] = discount_next * value;
    } else if (value > 0.0 && value >= continuation_value(laguerre, degree, beta, next / strike)) {
      cash[s] = discount_next * value;
    }
    // Date f's terms over the paths in the money there.
    const double us = u[0];
    if (!(intrinsic(us) > 0.0)) {
      for (int k = 0; k < w; ++k) terms[k * local + s] = 0.0;
      return;
    }
    double phi[kMaxExerciseDegree + 1];
    exercise_basis(laguerre, degree, us / strike, phi);
    const double y = cash[s] / discount;   // continuation realised, in date-f money
    int k = 0;
    for (int a = 0; a < m; ++a) {
      for (int b = a; b < m; ++b) terms[k++ * local + s] = phi[a] * phi[b];
    }
    for (int a = 0; a < m; ++a) terms[(k + a) * local + s] = phi[a] * y;
  }
};

// Each lane's terms of a date over its samples, in order: index j = term *
// n_lanes + lane (consecutive lanes read consecutive samples), into
// lanes[lane][width]. A sample out of the money adds its zeros, which
// leaves a sum as it was.
struct FitLaneSums {
  const double* terms;         // [term][local sample]
  double* lanes;               // [lane][width]
  std::int64_t local = 0;
  std::int64_t n_lanes = 0;    // the rank's blocks * kLanes
  int width = 0;

  // Each term of each sample read and added once, each lane's sum written.
  Work work(std::int64_t n) const {
    const double terms_read = static_cast<double>(local) * width;
    return Work{(terms_read + static_cast<double>(n)) * static_cast<double>(sizeof(double)), terms_read, 0};
  }

  STRATA_HD void operator()(std::int64_t j) const {
    const std::int64_t k = j / n_lanes, i = j % n_lanes, block = i / kLanes;
    std::int64_t end = (block + 1) * kSamplesPerBlock;
    if (end > local) end = local;
    const double* t = terms + k * local;
    double sum = 0.0;
    for (std::int64_t s = block * kSamplesPerBlock + i % kLanes; s < end; s += kLanes) sum += t[s];
    lanes[i * width + k] = sum;
  }
};

// Each block's lane sums ([lane][width]) by the pairwise tree of
// sample_blocks.hpp, into blocks[block][width]: index j = block * width + k.
struct FitLaneTree {
  double* lanes;
  double* blocks;
  int width;

  STRATA_HD void operator()(std::int64_t j) const {
    const std::int64_t block = j / width, k = j % width;
    lane_tree(lanes + block * kLanes * width + k, width, 0, blocks + j, 1);
  }
};

}  // namespace strata::kernels::pricing
