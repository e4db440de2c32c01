// The [euler2d] table: miniWeather's test cases, the parameters read from
// the input, the grid they make, and the schema.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/grid/grid.hpp"
#include "engine/runtime/step_count.hpp"
#include "kernels/stencil/euler2d.hpp"

namespace strata {
class Config;
class Schema;
}  // namespace strata

namespace strata::euler2d {

namespace k = kernels::stencil::euler2d;
using grid::Boundary;
using grid::Box;
using grid::Field;
using grid::GridSpec;
using grid::index_t;

// miniWeather's data specifications, plus `hydrostatic`: thermal's
// atmosphere without its bubble, a balanced state that must stay at rest.
enum class Case { thermal, collision, gravity_waves, density_current, injection, hydrostatic };
inline const std::vector<std::string> kCaseNames = {"thermal",         "collision", "gravity_waves",
                                                    "density_current", "injection", "hydrostatic"};

struct Params {
  Case c = Case::thermal;
  index_t nx = 100, nz = 50;
  double sim_time = 1000;
  double output_interval = 10;
  double cfl = 1.5;
  double hv_beta = 0.05;
  grid::Decomposition decomposition{{0, 0, 0}, "euler2d.decomposition", ""};

  std::string case_name() const { return kCaseNames[static_cast<std::size_t>(c)]; }
  double dx() const { return k::kXLen / static_cast<double>(nx); }
  double dz() const { return k::kZLen / static_cast<double>(nz); }
  // miniWeather: dt = min(dx, dz) / max_speed * cfl, max_speed = 450 m/s.
  double dt() const { return std::min(dx(), dz()) / k::kMaxSpeed * cfl; }
  // read_params refuses a span of more than kMaxSteps steps.
  std::int64_t steps() const { return step_count(sim_time, dt()).value_or(0); }

  GridSpec spec() const {
    GridSpec s;
    s.dims = 2;
    s.n = {nx, nz, 1};
    s.d = {dx(), dz(), 1};
    s.origin = {0, 0, 0};
    s.boundary[0] = {Boundary::periodic, Boundary::periodic};
    s.boundary[1] = {Boundary::wall, Boundary::wall};
    s.halo = k::kHalo;
    s.decomposition = decomposition;
    s.axes = "xz";
    return s;
  }
};

// Reads and checks [euler2d]; throws InputError naming the key.
Params read_params(const Config& c);
void declare_schema(Schema& s);

}  // namespace strata::euler2d
