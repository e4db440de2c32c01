#include "models/md/params.hpp"

#include <cmath>

#include "engine/config/config.hpp"
#include "engine/config/schema.hpp"

namespace strata::md {

double Params::lattice_constant() const { return std::cbrt(4.0 / density); }

void declare_schema(Schema& s) {
  const Range positive{0.0, {}, true};
  s.real("md.epsilon", 1.0, "epsilon", positive, "depth of the Lennard-Jones well");
  s.real("md.sigma", 1.0, "sigma", positive, "Lennard-Jones length: U(sigma) = 0");
  s.real("md.cutoff", 2.5, "sigma", positive, "pair cutoff r_c (absolute distance, as LAMMPS's pair_style lj/cut)");
  s.boolean("md.shift", true,
            "shift the energy to 0 at the cutoff (LAMMPS's pair_modify shift yes); forces are the same either way");
  s.real("md.skin", 0.3, "sigma", Range{0.0, {}},
         "neighbour-list skin: lists hold pairs within cutoff + skin and are rebuilt when an atom has moved more "
         "than skin/2 since the last build (checked every step)");
  s.real("md.dt", 0.005, "tau", positive, "time step (tau = sigma sqrt(m / epsilon))");
  s.integer("md.steps", 100, "steps", Range{1.0, {}}, "time steps to run").restart_safe = true;
  s.integer("md.thermo_every", 10, "steps", Range{1.0, {}},
            "steps between thermo rows (printed as LAMMPS's thermo_style one, stored in /observables); the last "
            "step always has one");
  s.integer("md.output_every", 0, "steps", Range{0.0, {}},
            "steps between trajectory frames in /particles (0: the first and the last frame only)");
  s.choice("md.thermostat", "none", {"none", "langevin"},
           "none: NVE (velocity Verlet); langevin: f += -v/damp + sqrt(2 T / (damp dt)) xi, xi from Philox keyed "
           "by (run.seed, atom id, step)");
  s.real("md.temperature", 1.44, "epsilon/k_B", positive,
         "fcc: the initial temperature (velocities rescaled to exactly this, 3N-3 degrees of freedom); langevin: "
         "the bath temperature");
  s.real("md.damp", 1.0, "tau", positive, "langevin: damping time (friction m/damp)");
  s.choice("md.initial", "fcc", {"fcc", "file"},
           "fcc: a face-centred cubic lattice of cells^3 unit cells at density, Maxwell-Boltzmann velocities; "
           "file: positions, velocities, ids and box from the H5MD file initial_file");
  s.real("md.density", 0.8442, "sigma^-3", positive, "fcc: number density (LAMMPS's lattice fcc RHO)");
  s.integer_list("md.cells", {5, 5, 5}, Range{1.0, 4096.0},
                 "fcc: unit cells along x, y, z ([nx, ny, nz]; 4 atoms each)");
  s.string("md.initial_file", std::string(),
           "file: an H5MD file (/particles/all/position/value and velocity/value at initial_frame; box/edges; "
           "optional id); scripts/convert/lammps_to_h5md.py makes one from a LAMMPS dump");
  s.integer("md.initial_frame", -1, "frame", Range{},
            "file: the frame of initial_file to start from: 0, 1, ... from the first, -1 (the last), -2, ... from "
            "the end; the run prints the frame, step and time it read");
}

Params read_params(const Config& c) {
  Params p;
  p.epsilon = c.real("md.epsilon");
  p.sigma = c.real("md.sigma");
  p.cutoff = c.real("md.cutoff");
  p.shift = c.boolean("md.shift");
  p.skin = c.real("md.skin");
  p.dt = c.real("md.dt");
  p.steps = c.integer("md.steps");
  p.thermo_every = c.integer("md.thermo_every");
  p.output_every = c.integer("md.output_every");
  p.thermostat = c.string("md.thermostat") == "langevin" ? Thermostat::langevin : Thermostat::none;
  p.temperature = c.real("md.temperature");
  p.damp = c.real("md.damp");
  p.initial = c.string("md.initial") == "file" ? Initial::file : Initial::fcc;
  p.density = c.real("md.density");
  p.seed = static_cast<std::uint64_t>(c.integer("run.seed"));
  const auto cells = c.integers("md.cells");
  if (cells.size() != 3) c.fail("md.cells", "needs three counts [nx, ny, nz]");
  p.cells = {cells[0], cells[1], cells[2]};
  if (p.initial == Initial::file) {
    p.initial_file = c.string("md.initial_file");
    if (p.initial_file.empty()) c.fail("md.initial_file", "initial = \"file\" needs md.initial_file");
    p.initial_frame = c.integer("md.initial_frame");
  }
  return p;
}

}  // namespace strata::md
