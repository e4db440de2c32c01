#!/usr/bin/env python3
"""Units and authorship in the files, and limits beside printed figures.

1. H5MD outputs name their unit system in H5MD's units module
   (/h5md/modules/units, attribute `system`): "lj" for md, whose elements
   name the reduced units in CF's `units` (sigma, sigma/tau, tau; epsilon
   for energies) and carry no H5MD `unit` (H5MD's grammar has no reduced
   units), and "nbody" (G = M = 1) for nbody.
2. /h5md/author is run.author when given, else the user running strata:
   $USER, else $LOGNAME, else the account's name (the password database),
   so a batch job with neither variable still names its author.
3. A sweep summary gives each swept key the unit its schema declares and
   each result column the unit of its dataset (each column's `units`, in
   UDUNITS' spelling; none, and the words in `long_name`, where UDUNITS has
   no such unit).
4. euler2d and shallow_water print the Courant limit beside the largest
   Courant number.
Sizes are the smallest runs that write each file: 256 atoms for 2 steps,
20 bodies, 2 sweep points of 2000 paths, a 20 x 10 euler2d slice.
"""

import os
import pwd
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

MD = """[run]
model = "md"
output = "md.h5"
{run}
[md]
cells = [4, 4, 4]
steps = 2
thermo_every = 1
"""

NBODY = """[run]
model = "nbody"
output = "nbody.h5"

[nbody]
n = 20
steps = 2
diag_every = 1
"""


def attr(obj, name):
    return sc.as_str(obj.attrs[name])


class Units(sc.StrataTestCase):

    def test_md_names_lj_units_and_its_elements_carry_them(self):
        self.write("md.toml", MD.format(run=""))
        self.run_ok("md.toml")
        f = self.open("md.h5")
        self.assertEqual(attr(f["h5md/modules/units"], "system"), "lj")
        self.assertIn("sigma", attr(f["h5md/modules/units"], "description"))
        self.assertEqual(attr(f["particles/all/position/value"], "units"), "sigma")
        self.assertEqual(attr(f["particles/all/velocity/value"], "units"), "sigma/tau")
        self.assertEqual(attr(f["particles/all/position/time"], "units"), "tau")
        self.assertEqual(attr(f["particles/all/box/edges/value"], "units"), "sigma")
        self.assertEqual(attr(f["observables/total_energy/value"], "units"), "epsilon")
        self.assertEqual(attr(f["observables/temperature/value"], "units"), "epsilon/k_B")
        for path in ("particles/all/position/value", "particles/all/position/time", "observables/pressure/value"):
            self.assertNotIn("unit", f[path].attrs, path)

    def test_nbody_names_its_units(self):
        self.write("nbody.toml", NBODY)
        self.run_ok("nbody.toml")
        f = self.open("nbody.h5")
        units = f["h5md/modules/units"]
        self.assertEqual(attr(units, "system"), "nbody")
        self.assertIn("G = 1, total mass M = 1", attr(units, "description"))

    def test_author_from_the_key_the_environment_or_the_account(self):
        account = pwd.getpwuid(os.getuid()).pw_name
        env = {k: v for k, v in os.environ.items() if k not in ("USER", "LOGNAME")}
        cases = [("key", '\nauthor = "A. Scientist"\n', {"USER": "someone"}, "A. Scientist"),
                 ("user", "", {"USER": "someone", "LOGNAME": "other"}, "someone"),
                 ("logname", "", {"LOGNAME": "other"}, "other"),
                 ("account", "", {}, account)]
        for tag, run, extra, want in cases:
            with self.subTest(tag):
                self.write("md.toml", MD.format(run=run))
                res = self.strata("run", "md.toml", "--overwrite", env={**env, **extra})
                self.assertExit(res, 0)
                with h5py.File(self.path("md.h5"), "r") as f:
                    self.assertEqual(attr(f["h5md/author"], "name"), want)

    def test_sweep_summary_carries_units(self):
        self.write("sweep.toml", sc.one_call_input(seed=5, paths=2000, rate=0.03, maturity=0.5) + """
[sweep]
mode = "zip"
"pricing.asset.0.vol" = [0.1, 0.2]
"pricing.instrument.0.maturity" = [0.5, 1.0]
output_dir = "out/sw"
""")
        self.assertExit(self.strata("sweep", "sweep.toml", "--all"), 0)
        self.assertExit(self.strata("sweep", "sweep.toml", "--collect", "summary.h5"), 0)
        s = self.open("summary.h5")["summary"]
        # UDUNITS spellings; where UDUNITS has no unit (1/sqrt(year), money)
        # there is no units attribute and long_name keeps the words.
        self.assertEqual(attr(s["pricing.instrument.0.maturity"], "units"), "years")
        self.assertNotIn("units", s["pricing.asset.0.vol"].attrs)
        self.assertEqual(attr(s["pricing.asset.0.vol"], "long_name"), "pricing.asset.0.vol in 1/sqrt(year)")
        self.assertNotIn("units", s["pricing.probe_call.price"].attrs)
        self.assertEqual(attr(s["performance.compute_seconds"], "units"), "s")

    def test_courant_limits_printed(self):
        self.write("e.toml", '[run]\nmodel = "euler2d"\noutput = "e.h5"\n\n[euler2d]\nnx = 20\nnz = 10\n'
                             'sim_time = 20.0\noutput_interval = 0.0\ncfl = 1.2\n')
        res = self.run_ok("e.toml")
        self.assertRegex(res.stdout, r"max CFL = [0-9.]+ \(limit 1\.2 = euler2d\.cfl")
        self.write("s.toml", '[run]\nmodel = "shallow_water"\noutput = "s.h5"\n\n[shallow_water]\nnx = 16\n'
                             'ny = 16\nsim_time = 100.0\n')
        res = self.run_ok("s.toml")
        self.assertRegex(res.stdout, r"max_courant [0-9.]+ \(limit 0\.8660 = sqrt\(3\)/2\)")


if __name__ == "__main__":
    unittest.main()
