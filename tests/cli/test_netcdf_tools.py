#!/usr/bin/env python3
"""Grid output that netCDF tools read (docs/output.md, "Grid models").

For each grid model, a tiny run on 1 and on 2 ranks:

1. `ncdump -h` (Debian's netcdf-bin) prints named dimensions (time and the
   axes; never a `phony_dim`) and nothing on stderr;
2. xarray (Debian's python3-xarray) opens the root group with the h5netcdf
   engine (python3-h5netcdf) without a warning: the fields have dimensions
   (time, [z,] y, x) (euler2d: (time, z, x)) and coordinates, the
   coordinates are the cell centres, time decodes to the frames' times;
   /diagnostics opens as a group with its own time; the netcdf4 engine
   (python3-netcdf4) reads the same fields and coordinates;
3. every `units` attribute of the grid output parses in UDUNITS
   (`udunits2`, Debian's udunits-bin);
4. compliance-checker (PyPI, in a venv cached under the build folder;
   skipped with a message where PyPI cannot be reached) finds no
   high-priority failure of CF-1.10 in a diffusion and an euler2d file;
   the current xarray, h5netcdf, h5py and netCDF4 from PyPI (another cached
   venv, skipped alike) pass the checks of 2 on every grid model;
5. a restarted run, and a restart of a file in the layout before CF,
   keep all of this.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import importlib.util
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

for module in ("xarray", "h5netcdf", "netCDF4"):
    if importlib.util.find_spec(module) is None:  # pragma: no cover - environment problem
        sys.exit(f"needs python3-xarray, python3-h5netcdf and python3-netcdf4 (no {module})")

# The smallest runs with two frames or more; (dims of a field, its name).
MODELS = {
    "diffusion": (["--set", "diffusion.nx=6", "--set", "diffusion.ny=5", "--set", "diffusion.nz=4",
                   "--set", "diffusion.sim_time=0.01", "--set", "diffusion.output_interval=0.005"],
                  ("time", "z", "y", "x"), "u"),
    "shallow_water": (["--set", "shallow_water.nx=8", "--set", "shallow_water.ny=6",
                       "--set", "shallow_water.sim_time=600", "--set", "shallow_water.output_interval=300"],
                      ("time", "y", "x"), "h"),
    "euler2d": (["--set", "euler2d.nx=10", "--set", "euler2d.nz=6",
                 "--set", "euler2d.sim_time=20", "--set", "euler2d.output_interval=10"],
                ("time", "z", "x"), "theta"),
}
INPUTS = {"diffusion": ("diffusion", "gaussian.toml"), "shallow_water": ("shallow_water", "gaussian.toml"),
          "euler2d": ("euler2d", "thermal.toml")}
EPOCH = np.datetime64("1970-01-01T00:00:00", "ns")
# What xarray must see in a grid file, run in a child process by the
# Python under test (Debian's, or a venv's with PyPI's current xarray):
# argv = path, an npz of what h5py reads, the field, its dims. Warnings
# are errors; prints the xarray version it used.
XARRAY_CHECK = r"""
import sys, warnings
import numpy as np
import xarray as xr
path, expected, field, dims = sys.argv[1], np.load(sys.argv[2]), sys.argv[3], tuple(sys.argv[4].split(","))
epoch = np.datetime64("1970-01-01T00:00:00", "ns")
warnings.simplefilter("error")
with xr.open_dataset(path, engine="h5netcdf") as ds:
    fields = [n for n, v in ds.data_vars.items() if v.ndim > 1]
    assert field in fields, fields
    for name in fields:
        assert ds[name].dims == dims, (name, ds[name].dims)
    assert sorted(ds.coords) == sorted(dims), list(ds.coords)
    assert ds.attrs["Conventions"] == "CF-1.10", ds.attrs
    for a in expected["axes"]:
        np.testing.assert_allclose(ds[a].values, expected["centre_" + a], rtol=1e-15, atol=0)
        assert ds[a].attrs["units"] == "m", ds[a].attrs
    assert ds.time.dtype == np.dtype("datetime64[ns]"), ds.time.dtype
    seconds = (ds.time.values - epoch) / np.timedelta64(1, "s")
    np.testing.assert_allclose(seconds, expected["times"], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(ds[field].values[-1], expected["frame"])
with xr.open_dataset(path, engine="h5netcdf", decode_times=False) as ds:
    np.testing.assert_array_equal(ds.time.values, expected["times"])
with xr.open_dataset(path, engine="h5netcdf", group="diagnostics") as ds:
    assert list(ds.coords) == ["time"], list(ds.coords)
    assert all(v.dims == ("time",) for v in ds.data_vars.values())
    assert len(ds.time) == len(expected["diag_times"])
# netCDF-C reads the same dimensions (only what the grid output holds:
# other root datasets are not this check's).
warnings.resetwarnings()
with xr.open_dataset(path, engine="netcdf4", decode_times=False) as ds:
    assert ds[field].dims == dims, ds[field].dims
    np.testing.assert_array_equal(ds.time.values, expected["times"])
    np.testing.assert_array_equal(ds[field].values[-1], expected["frame"])
print("xarray", xr.__version__)
"""
# Current releases from PyPI, each in a venv of its own kept between runs
# beside the binary: compliance-checker, and xarray with both engines (no
# system packages: PyPI's numpy, pandas, h5py and netCDF4 too).
PYPI_VENVS = {"compliance-checker": ("compliance-checker-venv", ["compliance-checker"]),
              "xarray": ("xarray-venv", ["xarray", "h5netcdf", "h5py", "netCDF4"])}


def tool(name, package):
    path = shutil.which(name)
    if path is None:
        raise AssertionError(f"{name} not found: install Debian's {package} (scripts/test does)")
    return path


def pypi_venv(which):
    """The bin folder of PYPI_VENVS[which], installed on first use; (None,
    why) when PyPI cannot be reached. The file `installed`, written last,
    lists the packages of a completed install: an interrupted one, or one
    of another list, is made again."""
    name, packages = PYPI_VENVS[which]
    venv = os.path.join(os.path.dirname(sc.STRATA_BIN), name)
    done = os.path.join(venv, "installed")
    if os.path.exists(done):
        with open(done, encoding="utf-8") as f:
            if f.read().split() == packages:
                return os.path.join(venv, "bin"), ""
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True)
    res = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--quiet", "--timeout", "20", *packages],
                         capture_output=True, text=True, timeout=900)
    if res.returncode != 0:
        shutil.rmtree(venv, ignore_errors=True)
        return None, res.stderr.strip().splitlines()[-1:] or ["pip failed"]
    with open(done, "w", encoding="utf-8") as f:
        f.write(" ".join(packages) + "\n")
    return os.path.join(venv, "bin"), ""


class NetcdfTools(sc.StrataTestCase):

    def run_model(self, model, ranks):
        folder, name = INPUTS[model]
        out = f"{model}-{ranks}.h5"
        self.run_ok(os.path.join(sc.SOURCE_DIR, "inputs", folder, name), "-o", out, *MODELS[model][0],
                    ranks=ranks)
        return self.path(out)

    def check_ncdump(self, path, dims):
        res = subprocess.run([tool("ncdump", "netcdf-bin"), "-h", path], capture_output=True, text=True)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(res.stderr, "", "ncdump printed on stderr")
        # The grid output: the root group and /diagnostics (the tables of
        # /performance are not its part).
        groups = re.split(r"\n(?=group: )", res.stdout)   # the root's groups: no indent
        grid_output = [groups[0]] + [g for g in groups if g.startswith("group: diagnostics {")]
        self.assertEqual(len(grid_output), 2, res.stdout)
        for text in grid_output:
            self.assertNotIn("phony_dim", text)
        header = res.stdout.split("variables:")[0]
        for d in dims:
            self.assertRegex(header, rf"\n\s*{d} = ", f"ncdump shows no dimension {d}:\n{res.stdout}")
        self.assertIn(f"({', '.join(dims)})", res.stdout)
        self.assertIn(':Conventions = "CF-1.10"', res.stdout)

    def check_xarray(self, path, dims, field, python=None):
        """XARRAY_CHECK on `path`, by `python` (default: this one, Debian's
        xarray) in a child process: a failure there is an assertion here."""
        with h5py.File(path, "r") as f:
            axes = sc.grid_axes(f)
            attrs = f["grid"].attrs
            expected = self.path(os.path.basename(path) + ".expected.npz")
            np.savez(expected, times=f["time"][()], frame=f[field][-1], diag_times=f["diagnostics/time"][()],
                     axes=np.array(axes),
                     **{"centre_" + a: float(np.atleast_1d(attrs["origin"])[i])
                        + (np.arange(int(attrs["n" + a])) + 0.5) * float(attrs["d" + a])
                        for i, a in enumerate(axes)})
        self.assertGreaterEqual(len(np.load(expected)["times"]), 2)
        res = subprocess.run([python or sys.executable, "-c", XARRAY_CHECK, path, expected, field, ",".join(dims)],
                             capture_output=True, text=True, timeout=sc.TIMEOUT_S)
        self.assertEqual(res.returncode, 0, f"xarray ({python or 'Debian'}) on {path}:\n{res.stdout}{res.stderr}")
        self.assertIn("xarray ", res.stdout)
        return res.stdout.strip()

    def check_units(self, path):
        udunits = tool("udunits2", "udunits-bin")
        units = set()
        with h5py.File(path, "r") as f:
            def visit(name, obj):
                if name.split("/")[0] in ("timers", "performance", "health"):
                    return   # tables, not the grid output
                if "units" in obj.attrs:
                    units.add(sc.as_str(obj.attrs["units"]))
            f.visititems(visit)
        self.assertIn("m", units)
        for u in sorted(units):
            res = subprocess.run([udunits, "-H", u, "-W", ""], capture_output=True, text=True)
            self.assertEqual(res.returncode, 0, f"udunits2 cannot read {u!r}: {res.stderr}")
            self.assertNotIn("Don't recognize", res.stdout + res.stderr, u)

    def test_netcdf_tools_read_every_grid_model(self):
        for model, (_, dims, field) in MODELS.items():
            for ranks in (None, 2):
                with self.subTest(model=model, ranks=ranks or 1):
                    path = self.run_model(model, ranks)
                    self.check_ncdump(path, dims)
                    self.check_xarray(path, dims, field)
                    self.check_units(path)
                    sc.check_xdmf(path[:-3] + ".xmf")

    def test_current_pypi_xarray_reads_every_grid_model(self):
        # The same checks by the newest xarray, h5netcdf and netCDF4 that
        # PyPI has (Debian 12's xarray is from 2023).
        bin_dir, why = pypi_venv("xarray")
        if bin_dir is None:
            self.skipTest(f"xarray could not be installed from PyPI (unreachable?): {why}")
        for model, (_, dims, field) in MODELS.items():
            with self.subTest(model=model):
                used = self.check_xarray(self.run_model(model, 2), dims, field, os.path.join(bin_dir, "python"))
                print(f"{model}: {used} (PyPI)", file=sys.stderr)

    def test_a_restarted_run_keeps_its_dimensions(self):
        # Stopped after step 3 of euler2d's 6 (a frame every 2 steps), then
        # continued on the other number of ranks: the series truncated to
        # the checkpoint and grown again keep their dimension scales.
        args, dims, field = MODELS["euler2d"]
        args = args + ["--set", "euler2d.output_interval=6"]
        thermal = os.path.join(sc.SOURCE_DIR, "inputs", "euler2d", "thermal.toml")
        res = self.strata("run", thermal, "-o", "run.h5", *args, ranks=2, env=sc.signal_at(3, signal.SIGTERM))
        self.assertExit(res, 75)
        self.run_ok(thermal, "-o", "run.h5", "--restart", *args)
        self.run_ok(thermal, "-o", "ref.h5", *args)
        self.check_ncdump(self.path("run.h5"), dims)
        self.check_xarray(self.path("run.h5"), dims, field)
        with h5py.File(self.path("run.h5"), "r") as f, h5py.File(self.path("ref.h5"), "r") as ref:
            self.assertEqual(sc.as_str(f.attrs["status"]), "complete")
            np.testing.assert_array_equal(f["time"][()], ref["time"][()])
            self.assertGreater(len(f["time"]), 2)
        sc.check_xdmf(self.path("run.xmf"))

    def test_a_file_of_the_earlier_layout_is_continued_in_the_new_one(self):
        # A stopped run's file rewritten as strata wrote grid files before
        # CF (fields and time in /fields, coordinates in /grid, no scales):
        # --restart moves its frames to the root and ends bitwise equal to
        # an uninterrupted run, readable by the tools.
        args, dims, field = MODELS["euler2d"]
        args = args + ["--set", "euler2d.output_interval=6"]
        thermal = os.path.join(sc.SOURCE_DIR, "inputs", "euler2d", "thermal.toml")
        res = self.strata("run", thermal, "-o", "run.h5", *args, env=sc.signal_at(3, signal.SIGTERM))
        self.assertExit(res, 75)
        with h5py.File(self.path("run.h5"), "r+") as f:
            self.assertGreater(len(f["time"]), 1)
            series = ["time"] + sc.field_names(f) + ["diagnostics/" + n for n in f["diagnostics"]]
            axes = sc.grid_axes(f)
            for name in series + axes:   # no scales: their attributes gone
                for key in ("DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME", "axis", "standard_name"):
                    if key in f[name].attrs:
                        del f[name].attrs[key]
            f["time"].attrs["units"] = "s"
            for name in ["time"] + sc.field_names(f):
                f.move(name, "fields/" + name)
            for a in axes:
                f.move(a, "grid/" + a)
            del f.attrs["Conventions"]
        self.run_ok(thermal, "-o", "run.h5", "--restart", *args)
        self.run_ok(thermal, "-o", "ref.h5", *args)
        with h5py.File(self.path("run.h5"), "r") as f, h5py.File(self.path("ref.h5"), "r") as ref:
            self.assertEqual(sc.as_str(f.attrs["status"]), "complete")
            self.assertNotIn("fields", f)
            self.assertEqual(list(f["grid"]), [])
            mine, theirs = sc.grid_series(f), sc.grid_series(ref)
            self.assertEqual(sorted(mine), sorted(theirs))
            for name, ds in theirs.items():
                self.assertEqual(mine[name][()].tobytes(), ds[()].tobytes(), name)
        self.check_ncdump(self.path("run.h5"), dims)
        self.check_xarray(self.path("run.h5"), dims, field)

    def test_compliance_checker_finds_no_high_priority_failure(self):
        bin_dir, why = pypi_venv("compliance-checker")
        if bin_dir is None:
            self.skipTest(f"compliance-checker could not be installed from PyPI (unreachable?): {why}")
        exe = os.path.join(bin_dir, "compliance-checker")
        for model in ("diffusion", "euler2d"):
            with self.subTest(model=model):
                path = self.run_model(model, 2)
                # The checker wants a netCDF file's name to end in .nc.
                nc = path[:-3] + ".nc"
                os.symlink(path, nc)
                report = self.path(model + ".json")
                res = subprocess.run([exe, "-t", "cf:1.10", "-f", "json", "-o", report, nc],
                                     capture_output=True, text=True, timeout=300)
                self.assertTrue(os.path.exists(report), res.stdout + res.stderr)
                with open(report, encoding="utf-8") as f:
                    result = json.load(f)["cf:1.10"]
                failed = [(r["name"], r["msgs"]) for r in result["high_priorities"] if r["value"][0] != r["value"][1]]
                self.assertEqual(failed, [], f"{model}: high-priority CF failures")


if __name__ == "__main__":
    unittest.main(verbosity=2)
