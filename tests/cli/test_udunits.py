#!/usr/bin/env python3
"""Every unit strata writes is one UDUNITS-2 (the units library of netCDF
and CF tools) understands.

Runs one example input of each model family at a tiny size (quickstart
with a synthetic GPU sampled into /health, the Greeks example, diffusion,
shallow_water, euler2d, nbody, md) and a sweep of 2 points with its
summary, collects every `units` attribute (and any left in the old
`<column>_units` form) of every object in every file, and asks `udunits2`
(Debian's udunits-bin) to parse each one. Where a unit has a plain meaning
the test checks the conversion too: bandwidth to byte/s, counts to 1,
years to seconds. Where UDUNITS has no unit (money, 1/sqrt(year)) strata
leaves `units` out (docs/output.md). The one exception: md's H5MD elements
name its Lennard-Jones reduced units (a file whose /h5md/modules/units
system is `lj`), which UDUNITS cannot have; they must be those units.
"""

import os
import re
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

ROOT = os.environ.get("STRATA_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))

# (example input, overrides that make it tiny, extra environment)
EXAMPLES = [
    ("inputs/quickstart.toml", ["pricing.paths=4096", "health.device_every_seconds=0.05"],
     {"STRATA_TEST_FAKE_NVML": "1"}),
    ("inputs/pricing/greeks.toml", ["pricing.paths=2048"], {}),
    ("inputs/diffusion/gaussian.toml", ["diffusion.nx=8", "diffusion.ny=8", "diffusion.nz=8",
                                        "diffusion.sim_time=0.01"], {}),
    ("inputs/shallow_water/gaussian.toml", ["shallow_water.nx=16", "shallow_water.ny=16",
                                            "shallow_water.sim_time=3600.0"], {}),
    ("inputs/euler2d/thermal.toml", ["euler2d.nx=20", "euler2d.nz=10", "euler2d.sim_time=10.0"], {}),
    ("inputs/nbody/plummer.toml", ["nbody.n=32", "nbody.t_end=0.0625"], {}),
    ("inputs/md/lj_liquid.toml", ["md.cells=[3, 3, 3]", "md.steps=4", "md.thermo_every=2",
                                  "md.output_every=2"], {}),
]

SWEEP = sc.one_call_input(seed=5, paths=2000, rate=0.03, maturity=0.5) + """
[sweep]
mode = "zip"
"pricing.asset.0.vol" = [0.1, 0.2]
"pricing.instrument.0.maturity" = [0.5, 1.0]
output_dir = "out/sw"
"""

# md's reduced units, allowed on the H5MD elements of an `lj` file only.
LJ_UNITS = {"sigma", "tau", "epsilon", "sigma/tau", "epsilon/k_B", "epsilon/sigma^3", "m sigma/tau"}
H5MD_ELEMENTS = ("particles/", "observables/")

# Units with a plain meaning, and what UDUNITS must convert them to.
CONVERSIONS = {"Gbyte/s": ("byte/s", "1e+09"), "byte": ("bit", "8"), "1": ("count", "1"),
               "years": ("s", "3.15569e+07"), "s-1": ("Hz", "1"), "1e9 s-1": ("s-1", "1e+09")}


def units_of(path):
    """{unit: [object:attribute, ...]} of every units attribute in the file."""
    found = {}

    def collect(name, obj):
        for attr, value in obj.attrs.items():
            if attr == "units" or attr.endswith("_units"):
                found.setdefault(sc.as_str(value), []).append(f"{os.path.basename(path)}:/{name}:{attr}")

    with h5py.File(path, "r") as f:
        collect("", f)
        f.visititems(collect)
        lj = "h5md/modules/units" in f and sc.as_str(f["h5md/modules/units"].attrs.get("system", "")) == "lj"
    if lj:
        elements = tuple("/" + e for e in H5MD_ELEMENTS)
        for unit in LJ_UNITS:
            kept = [w for w in found.pop(unit, []) if not w.split(":")[1].startswith(elements)]
            if kept:
                found[unit] = kept
    return found


def udunits(unit, want=""):
    res = subprocess.run(["udunits2", "-H", unit, "-W", want], stdin=subprocess.DEVNULL, capture_output=True,
                         text=True, timeout=30, check=False)
    return res.returncode, res.stdout + res.stderr


@unittest.skipIf(shutil.which("udunits2") is None, "udunits2 is not installed (Debian: udunits-bin)")
class Udunits(sc.StrataTestCase):

    def test_every_unit_written_parses(self):
        found = {}
        for k, (example, overrides, env) in enumerate(EXAMPLES):
            out = f"out{k}.h5"
            args = [a for o in overrides for a in ("--set", o)]
            self.run_ok(os.path.join(ROOT, example), "-o", out, *args, env=env)
            for unit, where in units_of(self.path(out)).items():
                found.setdefault(unit, []).extend(where)
        self.write("sweep.toml", SWEEP)
        self.assertExit(self.strata("sweep", "sweep.toml", "--all"), 0)
        self.assertExit(self.strata("sweep", "sweep.toml", "--collect", "summary.h5"), 0)
        for unit, where in units_of(self.path("summary.h5")).items():
            found.setdefault(unit, []).extend(where)
        # What the runs wrote: the health table, performance figures, timers.
        for must in ("byte", "s", "%", "degC", "Gbyte/s"):
            self.assertIn(must, found, sorted(found))
        for unit, where in sorted(found.items()):
            with self.subTest(unit=unit):
                rc, text = udunits(unit)
                self.assertTrue(rc == 0 and "Don't recognize" not in text,
                                f"UDUNITS does not read {unit!r} (in {where[:3]}): {text.strip()}")
                if unit in CONVERSIONS:
                    to, factor = CONVERSIONS[unit]
                    rc, text = udunits(unit, to)
                    self.assertRegex(text, rf"= {re.escape(factor)} {re.escape(to)}\n",
                                     f"{unit} -> {to}")
        self.assertFalse([w for ws in found.values() for w in ws if not w.endswith(":units")],
                         "units attributes in the old <column>_units form")


if __name__ == "__main__":
    unittest.main()
