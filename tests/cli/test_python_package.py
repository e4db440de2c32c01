#!/usr/bin/env python3
"""The Python reader (python/, `import strata`) as a user installs it.

`pip install ./python` into a fresh virtual environment (with the system's
site packages, so numpy, h5py, pandas, xarray and h5netcdf come from Debian
and nothing is downloaded: --no-index --no-build-isolation --no-deps). That
environment's Python then:

- imports strata from the environment, not from the checkout;
- reads one small output per family and checks each reader against h5py:
  a grid's fields and coordinates (xarray), its diagnostics, a pricing
  summary and a sweep summary (pandas, strings decoded), a run's timers,
  status and configuration, an md trajectory (arrays) and observables;
- runs every plot script (scripts/plot) on those outputs: they read through
  the installed package and draw their figures.
"""

import os
import shutil
import subprocess
import unittest

import strata_cli as sc

PLOT_DIR = os.path.join(sc.SOURCE_DIR, "scripts", "plot")

RUNS = {
    "heat": ("diffusion/gaussian.toml", ["diffusion.nx=6", "diffusion.ny=5", "diffusion.nz=4",
                                         "diffusion.sim_time=0.05", "diffusion.output_interval=0.025"]),
    "bubble": ("euler2d/thermal.toml", ["euler2d.nx=10", "euler2d.nz=6", "euler2d.sim_time=20"]),
    "pricing": ("quickstart.toml", ["pricing.paths=2048", 'pricing.greeks=["delta"]']),
    "liquid": ("md/lj_liquid.toml", ["md.cells=[2, 2, 2]", "md.steps=20", "md.thermo_every=10",
                                     "md.output_every=10"]),
}

SWEEP = """\
[run]
model = "pricing"
seed = 42

[pricing]
paths = 512

[[pricing.asset]]
name = "A"
spot = 100.0
vol = 0.2

[[pricing.instrument]]
name = "call"
option = "call"
strike = 100.0
maturity = 1.0
assets = ["A"]

[sweep]
mode = "grid"
"pricing.asset.0.vol" = [0.1, 0.2]
"pricing.instrument.0.strike" = [90.0, 110.0]
output_dir = "sweep"
"""

# Runs in the environment's Python: each reader against h5py; prints "ok".
CHECK = r"""
import os, sys
import h5py, numpy as np
import h5netcdf, pandas, xarray   # the package's dependencies
import strata

venv = sys.argv[1]
assert os.path.realpath(strata.__file__).startswith(os.path.realpath(venv)), strata.__file__

def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)

# Grids: fields with named dimensions and coordinates, diagnostics by time.
for name, dims in (("heat.h5", ("time", "z", "y", "x")), ("bubble.h5", ("time", "z", "x"))):
    run = strata.open_run(name)
    assert run.complete and run.model in ("diffusion", "euler2d"), run
    ds = strata.fields(name, decode_times=False)
    with h5py.File(name, "r") as f:
        fields = [v for v in ds.data_vars if ds[v].dims == dims]
        assert fields, (name, ds)
        for v in fields:
            np.testing.assert_array_equal(ds[v].values, f[v][()])
        for axis in dims[1:]:
            np.testing.assert_array_equal(ds[axis].values, f[axis][()])
        np.testing.assert_array_equal(ds["time"].values, f["time"][()])
        diag = strata.diagnostics(name, decode_times=False)
        np.testing.assert_array_equal(diag["time"].values, f["diagnostics/time"][()])
    timers = strata.timers(name)
    assert "compute" in list(timers.index) + list(timers.get("phase", [])), timers

# Pricing: the summary as a DataFrame, one row per instrument, strings decoded.
summary = strata.pricing_summary("pricing.h5")
with h5py.File("pricing.h5", "r") as f:
    names = sorted(k for k in f["pricing"] if k != "summary")
    got = sorted(summary.index if summary.index.name == "name" else summary["name"])
    assert got == names, (got, names)
    for inst in names:
        row = summary.loc[inst] if summary.index.name == "name" else summary[summary["name"] == inst].iloc[0]
        assert row["price"] == f["pricing"][inst]["price"][()], inst
        assert row["stderr"] == f["pricing"][inst]["stderr"][()], inst
    assert summary.attrs["units"].get("paths") == "1", summary.attrs
assert strata.open_run("pricing.h5").config["pricing"]["paths"] == 2048

# Sweep: one row per point.
sweep = strata.sweep_summary("sweep/summary.h5")
assert len(sweep) == 4 and list(sweep.columns[:3]) == ["pricing.asset.0.vol", "pricing.instrument.0.strike",
                                                     "status"], sweep.columns

# Particles: the trajectory as arrays, observables by step.
traj = strata.trajectory("liquid.h5")
with h5py.File("liquid.h5", "r") as f:
    pos = f["particles/all/position/value"][()]
    np.testing.assert_array_equal(traj.position, pos)
    np.testing.assert_array_equal(traj.velocity, f["particles/all/velocity/value"][()])
    assert traj.box.shape == (pos.shape[0], 3) and (traj.box > 0).all(), traj.box
    obs = strata.observables("liquid.h5")
    np.testing.assert_array_equal(obs["kinetic_energy"].values, f["observables/kinetic_energy/value"][()])
    assert list(obs.index) == list(f["observables/kinetic_energy/step"][()])

# A file of the wrong kind is one clear error naming it.
try:
    strata.trajectory("heat.h5")
except strata.OutputError as err:
    assert "heat.h5" in str(err), err
else:
    raise AssertionError("a grid file read as a trajectory")
print("ok")
"""


class PythonPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sc.check_binary()
        cls.tmp = sc.make_tmpdir("python_package")
        cls.data = os.path.join(cls.tmp, "data")
        os.makedirs(cls.data)
        sc.make_outputs(cls.data, RUNS, SWEEP)
        # A fresh environment; the system's packages are its dependencies.
        cls.venv = os.path.join(cls.tmp, "venv")
        subprocess.run([sc.PYTHON, "-m", "venv", "--system-site-packages", cls.venv], check=True, timeout=300)
        cls.python = os.path.join(cls.venv, "bin", "python")
        # --no-deps: Debian's h5py is a distribution of another name
        # (h5py.-debian-h5py-serial), which pip's resolver does not take
        # for h5py; CHECK imports every dependency instead.
        # A copy of python/: setuptools writes its build files beside the sources.
        source = os.path.join(cls.tmp, "python")
        shutil.copytree(os.path.join(sc.SOURCE_DIR, "python"), source,
                        ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
        cls.install = subprocess.run(
            [cls.python, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-deps", "--quiet",
             source],
            cwd=cls.tmp, capture_output=True, text=True, timeout=300, check=False)

    @classmethod
    def tearDownClass(cls):
        sc.remove_tmpdir(cls.tmp)

    def venv_python(self, *args, cwd=None):
        return sc.run_command([self.python, *args], cwd or self.data, env={"STRATA_PLOT_DEBUG": "1"})

    def test_install_and_read(self):
        self.assertEqual(self.install.returncode, 0, self.install.stdout + self.install.stderr)
        res = self.venv_python("-c", CHECK, self.venv)
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(res.stdout.strip().splitlines()[-1], "ok", res.describe())

    def test_plot_scripts_read_through_the_package(self):
        self.assertEqual(self.install.returncode, 0, self.install.stdout + self.install.stderr)
        # The scripts' shared module takes the installed package.
        res = self.venv_python("-c", f"import sys; sys.path.insert(0, {PLOT_DIR!r}); import plot_common; "
                                     "print(plot_common.strata.__file__)")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertTrue(os.path.realpath(res.stdout.strip()).startswith(os.path.realpath(self.venv)),
                        res.describe())
        for script, data in (("fields", "heat.h5"), ("fields", "bubble.h5"), ("particles", "liquid.h5"),
                             ("pricing", "pricing.h5"), ("sweep", "sweep/summary.h5")):
            out = os.path.join(self.tmp, "png", script + "-" + os.path.basename(data))
            extra = ["--greeks"] if script == "pricing" else []
            res = self.venv_python(os.path.join(PLOT_DIR, script + ".py"), data, "-o", out, *extra)
            self.assertEqual(res.returncode, 0, res.describe())
            self.assertTrue(sc.files_under(out, ".png"), f"{script} drew nothing{res.describe()}")


if __name__ == "__main__":
    unittest.main()
