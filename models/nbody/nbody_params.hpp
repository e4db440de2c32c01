// The [nbody] input table: schema and typed parameters.
#pragma once

#include <cmath>
#include <cstdint>

#include "engine/particles/h5md_output.hpp"
#include "engine/runtime/step_count.hpp"
#include "models/nbody/initial_state.hpp"

namespace strata {
class Config;
class Schema;
}  // namespace strata

namespace strata::nbody {

struct Params {
  InitialSpec initial;
  double G = 1, softening = 0.01, dt = 1.0 / 128;
  std::int64_t steps_key = 0;   // nbody.steps; 0: from t_end
  double t_end_key = 1;
  std::int64_t diag_every = 16, output_every = 128;
  bool virialize = true;

  double eps2() const { return softening * softening; }
  std::int64_t steps() const {
    if (steps_key > 0) return steps_key;
    return step_count(t_end_key, dt).value_or(0);   // read_params refuses more than kMaxSteps
  }
  // The model time at the end: steps * dt, or t_end (the last step shortened to meet it).
  double t_end() const { return steps_key > 0 ? static_cast<double>(steps_key) * dt : t_end_key; }
  // N-body units (G = 1 by default): every quantity is dimensionless; G
  // (nbody.G) and the total mass M = 1 fix the unit of time for the
  // input's unit of length.
  particles::Units units() const;
};

void declare_schema(Schema& s);
// Throws InputError (via Config::fail) naming the key for inconsistent input.
Params read_params(const Config& c);

}  // namespace strata::nbody
