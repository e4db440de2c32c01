#include "models/shallow_water/initial_state.hpp"

#include <algorithm>
#include <cmath>

#include "engine/runtime/format.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/stop_request.hpp"

namespace strata::shallow_water {

InitialState::InitialState(const Params& p) : p_(p) {
  switch (p.initial) {
    case Initial::gaussian:
      if (p.H + std::min(0.0, p.gaussian_amplitude) <= 0) {
        problem_key_ = "shallow_water.gaussian_amplitude";
        problem_ = format("a dip of %.6g m in a layer %.6g m deep leaves a negative depth", -p.gaussian_amplitude, p.H);
      }
      break;
    case Initial::dam_break:
      break;
    case Initial::zonal_jet:
    case Initial::barotropic_instability:
      balance_jet();
      if (problem_.empty() && p.initial == Initial::barotropic_instability &&
          *std::min_element(jet_h_.begin(), jet_h_.end()) + std::min(0.0, p.perturbation_amplitude) <= 0) {
        problem_key_ = "shallow_water.perturbation_amplitude";
        problem_ = "the perturbation leaves a negative depth in the jet";
      }
      break;
    case Initial::vortex: {
      // h = H - (a E + b E^2) / g with E = exp(-r^2 / (2 R^2)) in (0, 1]:
      // convex in E, so the deepest dip is at E = 1 (the centre) or none.
      const double f = p.coriolis(p.centre_y * p.ly), V = p.vortex_speed, R = p.vortex_radius;
      const double a = f * V * R * std::sqrt(std::exp(1.0)), b = 0.5 * V * V * std::exp(1.0);
      if (p.H - std::max(0.0, a + b) / p.g <= 0) {
        problem_key_ = "shallow_water.vortex_speed";
        problem_ = format("gradient-wind balance of a %.6g m s-1 vortex needs a dip deeper than the layer (H = %.6g m)",
                          V, p.H);
      }
      break;
    }
  }
}

// The jet u_j = U exp(-((y_j - y_c)/w)^2) on the rows and h_j such that the
// scheme's v tendency vanishes on every interior v face j (1..ny-1) of the
// x-uniform state (v = 0): there q and the flux averages are those of
// the one column, so kernels::stencil::ShallowWaterRhs::dv reduces to
//   g (h_j - h_{j-1}) + (K_j - K_{j-1}) = -Z (h_{j-1} u_{j-1} + h_j u_j) / (h_{j-1} + h_j),
//   Z = dy f_j - (u_j - u_{j-1}),  K = u^2 / 2,
// (f_j at the face) a quadratic in h_j, marched up from h_0; h_0 is then
// shifted until the mean depth is H. Walls in y close the channel; the
// tendencies of h and u vanish for any x-uniform state with v = 0.
void InitialState::balance_jet() {
  const index_t ny = p_.ny;
  const double dy = p_.dy(), g = p_.g, yc = p_.centre_y * p_.ly;
  jet_u_.resize(static_cast<std::size_t>(ny));
  jet_h_.resize(static_cast<std::size_t>(ny));
  for (index_t j = 0; j < ny; ++j) {
    const double s = (y_centre(j) - yc) / p_.jet_width;
    jet_u_.at(j) = p_.jet_speed * std::exp(-s * s);
  }
  const kernels::stencil::CoriolisRows f{p_.f0, p_.beta, -0.5 * p_.ly, dy, 0};
  double h0 = p_.H;
  for (int pass = 0; pass < 8; ++pass) {
    jet_h_[0] = h0;
    for (index_t j = 1; j < ny; ++j) {
      const auto J = static_cast<std::size_t>(j);
      const double a = jet_h_[J - 1], u0 = jet_u_[J - 1], u1 = jet_u_[J];
      const double dK = 0.5 * (u1 * u1 - u0 * u0);
      const double Z = dy * f.at(j) - (u1 - u0);
      // g x^2 + (dK + Z u1) x + a (dK + Z u0 - g a) = 0, the root near a.
      const double B = dK + Z * u1, C = a * (dK + Z * u0 - g * a);
      const double disc = B * B - 4 * g * C;
      double x = disc >= 0 ? (-B + std::sqrt(disc)) / (2 * g) : -1;
      for (int newton = 0; newton < 3 && x > 0; ++newton) {
        const double F = g * (x - a) + dK + Z * (a * u0 + x * u1) / (a + x);
        const double dF = g + Z * a * (u1 - u0) / ((a + x) * (a + x));
        x -= F / dF;
      }
      if (!(x > 0)) {
        problem_key_ = "shallow_water.jet_speed";
        problem_ = format(
            "a jet of %.6g m s-1 in geostrophic balance needs a negative depth somewhere in a layer "
            "%.6g m deep on average; lower jet_speed or raise H",
            p_.jet_speed, p_.H);
        return;
      }
      jet_h_[J] = x;
    }
    double mean = 0;
    for (double h : jet_h_) mean += h;
    mean /= static_cast<double>(ny);
    h0 += p_.H - mean;
  }
  // The last pass defines the profile (h0 shifted once more is not used).
}

double InitialState::h(index_t I, index_t J) const {
  const double x = x_centre(I), y = y_centre(J);
  const double xc = p_.centre_x * p_.lx, yc = p_.centre_y * p_.ly;
  switch (p_.initial) {
    case Initial::gaussian: {
      const double w = p_.gaussian_width;
      return p_.H + p_.gaussian_amplitude * std::exp(-((x - xc) * (x - xc) + (y - yc) * (y - yc)) / (2 * w * w));
    }
    case Initial::dam_break:
      return x < xc ? p_.dam_h_left : p_.dam_h_right;
    case Initial::zonal_jet:
      return jet_h_.at(J);
    case Initial::barotropic_instability: {
      const double sx = (x - xc) / p_.jet_width, sy = (y - yc) / p_.jet_width;
      return jet_h_.at(J) + p_.perturbation_amplitude * std::exp(-sx * sx - sy * sy);
    }
    case Initial::vortex: {
      const double R = p_.vortex_radius, V = p_.vortex_speed, f = p_.coriolis(yc);
      const double E = std::exp(-((x - xc) * (x - xc) + (y - yc) * (y - yc)) / (2 * R * R));
      return p_.H - (f * V * R * std::sqrt(std::exp(1.0)) * E + 0.5 * V * V * std::exp(1.0) * E * E) / p_.g;
    }
  }
  return p_.H;
}

double InitialState::u(index_t I, index_t J) const {
  if (I == 0 || I == p_.nx) {
    if (p_.boundary_x == Boundary::wall) return 0;
    I = 0;
  }
  switch (p_.initial) {
    case Initial::zonal_jet:
    case Initial::barotropic_instability:
      return jet_u_.at(J);
    case Initial::vortex: {
      const double x = static_cast<double>(I) * p_.dx(), y = y_centre(J);
      const double dx = x - p_.centre_x * p_.lx, dy = y - p_.centre_y * p_.ly, R = p_.vortex_radius;
      return -p_.vortex_speed * dy / R * std::exp(0.5 * (1 - (dx * dx + dy * dy) / (R * R)));
    }
    default:
      return 0;
  }
}

double InitialState::v(index_t I, index_t J) const {
  if (J == 0 || J == p_.ny) {
    if (p_.boundary_y == Boundary::wall) return 0;
    J = 0;
  }
  if (p_.initial != Initial::vortex) return 0;
  const double x = x_centre(I), y = static_cast<double>(J) * p_.dy();
  const double dx = x - p_.centre_x * p_.lx, dy = y - p_.centre_y * p_.ly, R = p_.vortex_radius;
  return p_.vortex_speed * dx / R * std::exp(0.5 * (1 - (dx * dx + dy * dy) / (R * R)));
}

double InitialState::rate(const CourantCoefficients& c, index_t I, index_t J) const {
  return kernels::stencil::courant_rate(c, h(I, J), u(I, J), u(I + 1, J), v(I, J), v(I, J + 1));
}

CourantCoefficients courant_coefficients(const Params& p, double dt) {
  CourantCoefficients c;
  c.rdx = p.nx > 1 ? 1 / p.dx() : 0;
  c.rdy = p.ny > 1 ? 1 / p.dy() : 0;
  c.viscous = CourantCoefficients::kViscous * p.viscosity * (c.rdx * c.rdx + c.rdy * c.rdy);
  c.g = p.g;
  c.dt = dt;
  return c;
}

double initial_dt(const Params& p, const InitialState& s, const grid::Grid& g) {
  const CourantCoefficients c = courant_coefficients(p, 1.0);
  const auto st = g.start(), n = g.count();
  double fastest = 0;
  // O(cells): a signal is looked for once a row (stopped_during_setup).
  for (index_t j = 0; j < n[1] && stop_signal() == 0; ++j)
    for (index_t i = 0; i < n[0]; ++i) fastest = std::max(fastest, s.rate(c, st[0] + i, st[1] + j));
  fastest = g.mpi().max(fastest);
  if (g.mpi().any(stop_signal() != 0)) throw stopped_during_setup("the initial time step's scan of every cell");
  return p.cfl / fastest;
}

double sampled_dt(const Params& p, const InitialState& s, index_t* sampled) {
  const CourantCoefficients c = courant_coefficients(p, 1.0);
  const index_t mx = std::min(p.nx, kSampleSide), my = std::min(p.ny, kSampleSide);
  double fastest = 0;
  // Evenly spread rows and columns, the first and the last among them.
  const auto at = [](index_t k, index_t m, index_t n) { return m > 1 ? k * (n - 1) / (m - 1) : index_t{0}; };
  for (index_t b = 0; b < my; ++b)
    for (index_t a = 0; a < mx; ++a) fastest = std::max(fastest, s.rate(c, at(a, mx, p.nx), at(b, my, p.ny)));
  if (sampled != nullptr) *sampled = mx * my;
  return p.cfl / fastest;
}

}  // namespace strata::shallow_water
