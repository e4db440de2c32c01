// The [md] table: its schema, and the parameters read from it and checked
// across keys (an input error names the key, exit 2). Everything is in LJ
// reduced units (lengths in sigma_ref, energies in epsilon_ref, masses of 1,
// k_B = 1), as LAMMPS's `units lj`.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace strata {
class Config;
class Schema;
}  // namespace strata

namespace strata::md {

enum class Thermostat { none, langevin };
enum class Initial { fcc, file };

struct Params {
  double epsilon = 1, sigma = 1, cutoff = 2.5;
  bool shift = true;
  double skin = 0.3;
  double dt = 0.005;
  std::int64_t steps = 100;
  std::int64_t thermo_every = 10, output_every = 0;
  Thermostat thermostat = Thermostat::none;
  double temperature = 1.44, damp = 1.0;
  Initial initial = Initial::fcc;
  double density = 0.8442;
  std::array<std::int64_t, 3> cells{5, 5, 5};
  std::string initial_file;
  std::int64_t initial_frame = -1;   // file: from 0, or from the end (-1: the last)
  std::uint64_t seed = 42;

  // fcc: the lattice constant (4 atoms per cubic cell) and the atom count.
  double lattice_constant() const;
  std::int64_t fcc_atoms() const { return 4 * cells[0] * cells[1] * cells[2]; }
  // Atoms farther apart than this never interact before the next rebuild.
  double ghost_cutoff() const { return cutoff + skin; }
};

void declare_schema(Schema& s);
// Reads and checks [md]; throws InputError naming the key.
Params read_params(const Config& c);

}  // namespace strata::md
