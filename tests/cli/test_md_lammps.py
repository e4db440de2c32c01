#!/usr/bin/env python3
"""strata's md against LAMMPS (Debian's `lammps`, /usr/bin/lmp), started
from the very same positions and velocities: LAMMPS builds bench/in.lj's
system (fcc 0.8442, velocity create 1.44, lj/cut 2.5 shifted, neighbor 0.3
bin, every 1 delay 0 check yes, fix nve), writes it with write_dump at full
precision and runs 100 steps printing thermo_style one every 10 steps with
15 digits; scripts/convert/lammps_to_h5md.py turns the dump into the H5MD
file strata starts from (initial = "file"); strata's /observables must
match LAMMPS's columns.

Tolerance: both codes evaluate the same pairs (exact neighbour lists: no
pair within the cutoff is ever missed) with the same formulas, differing
only in summation order and in whether ghost positions are images, so the
trajectories differ by round-off (1e-16) amplified by the chaos over
t = 0.5 (at most e^(10 * 0.5) = 150): 1e-13 or so. LAMMPS prints 15
significant digits (5e-16 relative). The required figure is 1e-7 relative;
the test checks it, relative to max(|value|, 1) for the pressure, which
crosses zero.

Skipped (exit 77) where `lmp` is not on PATH: LAMMPS is a benchmark and
test-only peer, never needed to build or test strata.
"""

import os
import shutil
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

CONVERT = os.path.join(sc.SOURCE_DIR, "scripts", "convert", "lammps_to_h5md.py")

LAMMPS_INPUT = """units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 {cells} 0 {cells} 0 {cells}
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
pair_modify shift yes
neighbor 0.3 bin
neigh_modify every 1 delay 0 check yes
fix 1 all nve
write_dump all custom start.dump id x y z vx vy vz modify format float %.17g
thermo 10
thermo_modify format float %.17g
run 100
"""

STRATA_INPUT = """[run]
model = "md"
output = "out/run.h5"

[md]
initial = "file"
initial_file = "start.h5"
epsilon = 1.0
sigma = 1.0
cutoff = 2.5
shift = true
skin = 0.3
dt = 0.005
steps = 100
thermo_every = 10
"""

# LAMMPS's thermo_style one columns and strata's observables.
COLUMNS = {"Temp": "temperature", "E_pair": "potential_energy", "TotEng": "total_energy", "Press": "pressure"}


def lammps_thermo(log):
    """The thermo table of a LAMMPS log: {column: array}."""
    header, rows = None, []
    with open(log, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if words[:1] == ["Step"]:
                header = words
                continue
            if header is not None:
                if line.startswith("Loop time"):
                    break
                rows.append([float(w) for w in words])
    table = np.array(rows)
    return {name: table[:, k] for k, name in enumerate(header)}


class MdLammpsTest(sc.StrataTestCase):

    def test_thermo_matches_lammps(self):
        lmp = shutil.which("lmp")
        self.assertIsNotNone(lmp)
        for ranks in (1, 2):
            with self.subTest(ranks=ranks):
                self.write("in.lj", LAMMPS_INPUT.format(cells=5))
                res = sc.run_command([lmp, "-in", "in.lj", "-log", "log.lammps", "-screen", "none"], self.tmp)
                self.assertExit(res, 0)
                ref = lammps_thermo(self.path("log.lammps"))
                self.assertEqual(list(ref["Step"]), list(range(0, 101, 10)))
                res = sc.run_command([sc.PYTHON, CONVERT, "start.dump", "start.h5"], self.tmp)
                self.assertExit(res, 0)
                self.write("md.toml", STRATA_INPUT)
                res = self.strata("run", "md.toml", "--overwrite", ranks=ranks)
                self.assertExit(res, 0)
                with h5py.File(self.path("out/run.h5"), "r") as f:
                    self.assertEqual(list(f["observables/temperature/step"][()]), list(range(0, 101, 10)))
                    worst = 0.0
                    for column, name in COLUMNS.items():
                        ours = f[f"observables/{name}/value"][()]
                        err = np.abs(ours - ref[column]) / np.maximum(np.abs(ref[column]), 1.0)
                        worst = max(worst, float(err.max()))
                        self.assertLessEqual(float(err.max()), 1e-7, f"{column} on {ranks} rank(s)")
                print(f"\n  strata on {ranks} rank(s) vs lmp: worst relative difference {worst:.2e}",
                      file=sys.stderr)


if __name__ == "__main__":
    if shutil.which("lmp") is None:
        print("lmp (Debian's lammps) is not on PATH: skipped", file=sys.stderr)
        sys.exit(77)
    sc.main()
