// The initial states of the shallow_water model, evaluated on the host in
// double precision at global indices (so every decomposition starts from
// the same bits), and the time step they give.
#pragma once

#include <string>
#include <vector>

#include "kernels/stencil/shallow_water.hpp"
#include "models/shallow_water/params.hpp"

namespace strata::shallow_water {

using kernels::stencil::CourantCoefficients;

class InitialState {
 public:
  explicit InitialState(const Params& p);

  // Depth of cell (I, J); velocity on the west face of cell (I, J), I in
  // [0, nx]; on its south face, J in [0, ny]. Global indices. A wall face
  // gives 0; face nx (ny) of a periodic axis is face 0.
  double h(index_t I, index_t J) const;
  double u(index_t I, index_t J) const;
  double v(index_t I, index_t J) const;

  // Why the state cannot be built (it would need a negative depth) and the
  // key to change; both empty when it can.
  const std::string& problem() const { return problem_; }
  const std::string& problem_key() const { return problem_key_; }

  // Courant rate of cell (I, J) in s-1 (kernels::stencil::courant_rate).
  double rate(const CourantCoefficients& c, index_t I, index_t J) const;

 private:
  void balance_jet();
  double x_centre(index_t I) const { return (static_cast<double>(I) + 0.5) * p_.dx(); }
  double y_centre(index_t J) const { return (static_cast<double>(J) + 0.5) * p_.dy(); }

  Params p_;
  std::vector<double> jet_h_, jet_u_;  // per row: the discretely balanced jet
  std::string problem_, problem_key_;
};

// The Courant coefficients of a grid with time step dt (dt = 1 gives rates).
CourantCoefficients courant_coefficients(const Params& p, double dt);

// dt = cfl / (largest Courant rate of the initial state), over this rank's
// cells, then the maximum over ranks (exact in any order): the same number
// for every decomposition. Collective over `g`'s ranks.
double initial_dt(const Params& p, const InitialState& s, const grid::Grid& g);

// The same formula over a lattice of at most kSampleSide x kSampleSide
// cells, local and cheap (input checks, the dry run's plan): every cell
// when the grid is no larger, so then equal to initial_dt; otherwise an
// upper bound of it (a maximum over fewer cells). `sampled`: the cells
// looked at.
inline constexpr index_t kSampleSide = 256;
double sampled_dt(const Params& p, const InitialState& s, index_t* sampled = nullptr);

}  // namespace strata::shallow_water
