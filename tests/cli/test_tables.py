#!/usr/bin/env python3
"""strata's tables read as netCDF: /pricing/summary, /timers and a sweep's
/summary are groups of one 1-D dataset per column along one dimension (the
first column, an HDF5 dimension scale), strings variable-length UTF-8.

1. xarray opens each group with both its netCDF engines (netcdf4, the
   netCDF C library; h5netcdf, h5py), without a crash or a warning, and
   the group's DataFrame has one row per instrument, phase or point,
   indexed by the row key, its strings decoded, and equal column by column
   to what h5py reads.
2. ncdump prints each group (header and data): its dimension, string and
   numeric variables, and the `units` attributes.

Each engine runs in a child process: a netCDF library that cannot read a
file may abort the process (netCDF 4.9.0 does on fixed-length strings),
which must fail this test, not end it. Needs Debian's python3-xarray,
python3-netcdf4, python3-h5netcdf, python3-pandas and netcdf-bin. Sizes:
2000 paths, a 12^3 diffusion run of a few steps, a sweep of 2 points.
"""

import json
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
import numpy as np  # noqa: E402

PRICING = sc.one_call_input(seed=3, paths=2000, rate=0.03, maturity=0.5) + """
[[pricing.instrument]]
name = "put-95.b"
option = "put"
strike = 95.0
maturity = 1.0
assets = ["A"]
"""

DIFFUSION = """[run]
model = "diffusion"
output = "grid.h5"

[diffusion]
nx = 12
ny = 12
nz = 12
sim_time = 0.01
output_interval = 0.0
"""

SWEEP = sc.one_call_input(seed=5, paths=2000, rate=0.03, maturity=0.5) + """
[sweep]
mode = "zip"
"pricing.asset.0.vol" = [0.1, 0.2]
output_dir = "out/sw"
"""

# A child: opens one group with one engine, every warning an error, and
# prints the DataFrame as JSON (index and columns, NaN as null).
READER = r"""
import json, sys, warnings
warnings.simplefilter("error")
import xarray as xr
path, group, engine = sys.argv[1:]
with xr.open_dataset(path, group=group, engine=engine) as ds:
    units = {k: str(v.attrs["units"]) for k, v in ds.variables.items() if "units" in v.attrs}
    df = ds.to_dataframe()
def plain(v):
    v = v.item() if hasattr(v, "item") else v
    return None if isinstance(v, float) and v != v else v
print(json.dumps({"index_name": df.index.name, "index": [plain(v) for v in df.index],
                  "columns": {c: [plain(v) for v in df[c]] for c in df.columns}, "units": units}))
"""


def missing_tools():
    try:
        import xarray  # noqa: F401
        import netCDF4  # noqa: F401
        import h5netcdf  # noqa: F401
        import pandas  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed (Debian: python3-xarray python3-netcdf4 python3-h5netcdf python3-pandas)"
    if shutil.which("ncdump") is None:
        return "ncdump is not installed (Debian: netcdf-bin)"
    return None


def h5py_columns(f, group):
    """{column: list} as h5py reads them, strings decoded, NaN as None."""
    out = {}
    for name, ds in f[group].items():
        values = [sc.as_str(v) if isinstance(v, (bytes, str)) else v.item() for v in ds[()]]
        out[name] = [None if isinstance(v, float) and v != v else v for v in values]
    return out


@unittest.skipIf(missing_tools(), missing_tools())
class Tables(sc.StrataTestCase):

    def check_group(self, name, group, key, rows):
        with h5py.File(self.path(name), "r") as f:
            want = h5py_columns(f, group)
            want_units = {c: sc.as_str(ds.attrs["units"]) for c, ds in f[group].items() if "units" in ds.attrs}
        self.assertEqual(len(want[key]), rows, want[key])
        for engine in ("netcdf4", "h5netcdf"):
            with self.subTest(file=name, group=group, engine=engine):
                res = sc.run_command([sys.executable, "-c", READER, self.path(name), group, engine], self.tmp)
                self.assertEqual(res.returncode, 0, f"xarray ({engine}) on {name}:/{group}:{res.describe()}")
                got = json.loads(res.stdout)
                self.assertEqual(got["index_name"], key)
                self.assertEqual(got["index"], want[key])
                self.assertEqual(sorted(got["columns"]), sorted(c for c in want if c != key))
                for column, values in got["columns"].items():
                    self.assertEqual(values, want[column], f"{engine}: {group}/{column}")
                self.assertEqual(got["units"], want_units)
        res = sc.run_command(["ncdump", "-g", group.split("/")[-1], self.path(name)], self.tmp)
        self.assertEqual(res.returncode, 0, f"ncdump on {name}:{res.describe()}")
        self.assertIn(f"{key} = {rows} ;", res.stdout, res.describe())
        for column, units in want_units.items():
            self.assertRegex(res.stdout, rf'{re.escape(column)}:units = "{re.escape(units)}" ;', column)
        return want

    def test_pricing_summary(self):
        self.write("p.toml", PRICING)
        self.run_ok("p.toml", "-o", "p.h5")
        want = self.check_group("p.h5", "pricing/summary", "name", 2)
        self.assertEqual(want["name"], ["probe_call", "put-95.b"])
        self.assertEqual(want["option"], ["call", "put"])

    def test_grid_timers(self):
        self.write("g.toml", DIFFUSION)
        self.run_ok("g.toml")
        with h5py.File(self.path("grid.h5"), "r") as f:
            phases = len(f["timers/phase"])
        want = self.check_group("grid.h5", "timers", "phase", phases)
        self.assertIn("compute", want["phase"])
        self.assertTrue(all(np.isfinite(v) for v in want["max"]))

    def test_sweep_summary(self):
        self.write("sweep.toml", SWEEP)
        self.assertExit(self.strata("sweep", "sweep.toml", "--all"), 0)
        self.assertExit(self.strata("sweep", "sweep.toml", "--collect", "summary.h5"), 0)
        want = self.check_group("summary.h5", "summary", "index", 2)
        self.assertEqual(want["status"], ["done", "done"])
        self.assertEqual(want["pricing.asset.0.vol"], [0.1, 0.2])


if __name__ == "__main__":
    unittest.main()
