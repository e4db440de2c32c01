#include "models/nbody/nbody_params.hpp"

#include <filesystem>
#include <limits>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"
#include "engine/particles/h5md_input.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/format.hpp"

namespace strata::nbody {

void declare_schema(Schema& s) {
  s.choice("nbody.initial", "plummer", {"plummer", "uniform_sphere", "two_body", "collision", "file"},
           "initial conditions: plummer (Henon units, virial equilibrium), uniform_sphere (cold collapse), two_body "
           "(Kepler orbit), collision (two Plummer spheres), file (H5MD, nbody.initial_file)");
  s.integer("nbody.n", 2048, "", Range{2.0, 1e12}, "number of bodies (ignored for two_body and file)");
  s.real("nbody.G", 1.0, "1", Range{0.0, {}, true}, "gravitational constant (N-body units: 1)");
  s.real("nbody.softening", 0.01, "1", Range{0.0, {}},
         "Plummer softening length eps: pair potential -G m m' / sqrt(r^2 + eps^2)");
  s.real("nbody.dt", 1.0 / 128, "1", Range{0.0, {}, true}, "time step of the kick-drift-kick leapfrog");
  s.integer("nbody.steps", 0, "", Range{0.0, {}}, "steps to run; 0: run to nbody.t_end").restart_safe = true;
  s.real("nbody.t_end", 1.0, "1", Range{0.0, {}, true},
         "model time to run to when nbody.steps = 0 (the last step shortened to end there)")
      .restart_safe = true;
  s.integer("nbody.diag_every", 16, "", Range{1.0, {}},
            "steps between diagnostics rows (energies, momentum, angular momentum, virial ratio; also at the start "
            "and the end)");
  s.integer("nbody.output_every", 128, "", Range{0.0, {}},
            "steps between trajectory frames (also at the start and the end); 0: the first and last only");
  s.real("nbody.eccentricity", 0.5, "1", Range{0.0, 1.0, false, true}, "two_body: eccentricity of the Kepler orbit");
  s.real("nbody.semi_major_axis", 1.0, "1", Range{0.0, {}, true},
         "two_body: semi-major axis (the bodies start at apocentre, each of mass 1/2)");
  s.real("nbody.separation", 6.0, "1", Range{0.0, {}}, "collision: distance of the sphere centres along x");
  s.real("nbody.impact_parameter", 1.0, "1", Range{}, "collision: offset of the sphere centres along y");
  s.real("nbody.approach_speed", 0.5, "1", Range{}, "collision: relative speed of the spheres along x");
  s.boolean("nbody.virialize", true,
            "plummer: scale the velocities so that 2K/|W| = 1 exactly for the softened potential of the sample");
  s.string("nbody.initial_file", "",
           "file: H5MD file with /particles/all/position/value and velocity/value (at initial_frame), optional "
           "/particles/all/id and /particles/all/mass (default 1/N each)");
  s.integer("nbody.initial_frame", -1, "frame", Range{},
            "file: the frame of initial_file to start from: 0, 1, ... from the first, -1 (the last), -2, ... from "
            "the end; the run prints the frame, step and time it read");
}

particles::Units Params::units() const {
  return {"1", "1", "1", "1", "nbody",
          format("N-body units: G = %.17g, total mass M = 1; lengths in the input's unit r, time in "
                 "sqrt(r^3 / (G M)), velocities in sqrt(G M / r), energies in G M^2 / r",
                 G)};
}

Params read_params(const Config& c) {
  Params p;
  p.initial.kind = c.string("nbody.initial");
  p.initial.n = c.integer("nbody.n");
  p.initial.seed = static_cast<std::uint64_t>(c.integer("run.seed"));
  p.initial.G = p.G = c.real("nbody.G");
  p.initial.eccentricity = c.real("nbody.eccentricity");
  p.initial.semi_major_axis = c.real("nbody.semi_major_axis");
  p.initial.separation = c.real("nbody.separation");
  p.initial.impact_parameter = c.real("nbody.impact_parameter");
  p.initial.approach_speed = c.real("nbody.approach_speed");
  p.initial.file = c.string("nbody.initial_file");
  p.initial.file_frame = c.integer("nbody.initial_frame");
  p.softening = c.real("nbody.softening");
  p.dt = c.real("nbody.dt");
  p.steps_key = c.integer("nbody.steps");
  p.t_end_key = c.real("nbody.t_end");
  p.diag_every = c.integer("nbody.diag_every");
  p.output_every = c.integer("nbody.output_every");
  p.virialize = c.boolean("nbody.virialize");
  if (p.initial.kind == "file") {
    if (p.initial.file.empty()) c.fail("nbody.initial_file", "initial = \"file\" needs the H5MD file to start from");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p.initial.file, ec))
      c.fail("nbody.initial_file", "\"" + p.initial.file + "\": no such file");
    try {
      p.initial.file_n =
          particles::check_h5md(p.initial.file, "nbody.initial_file", {p.initial.file_frame, "nbody.initial_frame"});
    } catch (const InputError& e) {
      // A frame outside the file is the frame's fault, anything else the file's.
      const bool frame = std::string(e.what()).rfind("nbody.initial_frame", 0) == 0;
      c.fail(frame ? "nbody.initial_frame" : "nbody.initial_file", e.what());
    }
  }
  if (p.steps_key == 0 && !step_count(p.t_end_key, p.dt))
    c.fail("nbody.t_end", step_count_problem(p.t_end_key, p.dt, "nbody.dt"));
  if (static_cast<double>(p.steps_key) * p.dt > std::numeric_limits<double>::max())
    c.fail("nbody.steps", "steps * nbody.dt is not a finite model time");
  if (p.initial.kind == "collision" && p.initial.n < 4) c.fail("nbody.n", "collision needs at least 4 bodies");
  return p;
}

}  // namespace strata::nbody
