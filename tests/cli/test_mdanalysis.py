#!/usr/bin/env python3
"""MDAnalysis reads md's H5MD output through the recipe of docs/output.md:

    u = mda.Universe("out.h5", topology_format="MINIMAL", format="H5MD", n_atoms=N,
                     convert_units=False, to_guess=())

An md run of 256 atoms (fcc 4^3), 4 steps, a frame and a thermo row every
2 steps (3 frames) loads with 3 frames; at each, the positions and
velocities are h5py's (as float32, MDAnalysis' precision, bit for bit),
the box is [L, L, L, 90, 90, 90] with L the file's edges, step and time
are the file's, and ts.data["temperature"] is the frame's thermo row.

MDAnalysis comes from PyPI: a virtual environment under the build folder
(venv-mdanalysis beside the strata binary; python3 -m venv
--system-site-packages, so Debian's h5py, which MDAnalysis' H5MD reader
needs, is used), made once and kept between runs. Where it is not there
yet and PyPI cannot be reached, the test is skipped (exit 77) with a
message saying so.
"""

import os
import shutil
import subprocess
import sys
import unittest
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402
from test_md import md_input  # noqa: E402

VENV = os.path.join(os.path.dirname(sc.STRATA_BIN), "venv-mdanalysis")
VENV_PYTHON = os.path.join(VENV, "bin", "python")
PYPI = "https://pypi.org/simple/mdanalysis/"
SKIPPED = 77

# Runs in the virtual environment: the recipe, then every frame into an npz.
READ = """
import sys
import h5py
import MDAnalysis as mda
import numpy as np

path, out = sys.argv[1], sys.argv[2]
n = h5py.File(path, "r")["particles/all/id"].shape[0]
u = mda.Universe(path, topology_format="MINIMAL", format="H5MD", n_atoms=n, convert_units=False, to_guess=())
frames = [(ts.positions.copy(), ts.velocities.copy(), ts.dimensions.copy(), ts.data["step"], ts.time,
           ts.data["temperature"]) for ts in u.trajectory]
np.savez(out, n_atoms=u.atoms.n_atoms, positions=[f[0] for f in frames], velocities=[f[1] for f in frames],
         dimensions=[f[2] for f in frames], step=[f[3] for f in frames], time=[f[4] for f in frames],
         temperature=[f[5] for f in frames])
"""


def venv_ready():
    return os.path.exists(VENV_PYTHON) and subprocess.run(
        [VENV_PYTHON, "-c", "import MDAnalysis, h5py"], capture_output=True).returncode == 0


def pypi_reachable():
    try:
        with urllib.request.urlopen(PYPI, timeout=15):
            return True
    except OSError:
        return False


def make_venv():
    """The virtual environment, built under a temporary name and renamed:
    an interrupted install leaves nothing that looks ready."""
    tmp = VENV + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", tmp], check=True)
    subprocess.run([os.path.join(tmp, "bin", "python"), "-m", "pip", "install", "--quiet", "MDAnalysis"],
                   check=True, timeout=1200)
    shutil.rmtree(VENV, ignore_errors=True)
    os.replace(tmp, VENV)


class MDAnalysisReads(sc.StrataTestCase):

    def test_md_output_loads_in_mdanalysis(self):
        self.write("md.toml", md_input(cells=4, steps=4, thermo_every=2, output_every=2))
        self.run_ok("md.toml", "-o", "md.h5")
        res = subprocess.run([VENV_PYTHON, "-c", READ, self.path("md.h5"), self.path("mda.npz")],
                             capture_output=True, text=True, timeout=sc.TIMEOUT_S)
        self.assertEqual(res.returncode, 0, f"MDAnalysis failed:\n{res.stderr}")
        got = np.load(self.path("mda.npz"))
        f = self.open("md.h5")
        position = f["particles/all/position"]
        self.assertEqual(int(got["n_atoms"]), 256)
        self.assertEqual(len(got["positions"]), 3)
        self.assertEqual(position["value"].shape[0], 3)
        edges = f["particles/all/box/edges/value"][()]
        for k in range(3):
            self.assertTrue(np.array_equal(got["positions"][k], position["value"][k].astype(np.float32)), k)
            velocity = f["particles/all/velocity/value"][k].astype(np.float32)
            self.assertTrue(np.array_equal(got["velocities"][k], velocity), k)
            self.assertTrue(np.allclose(got["dimensions"][k], [*edges[k], 90, 90, 90], rtol=1e-6), got["dimensions"][k])
            self.assertEqual(int(got["step"][k]), int(position["step"][k]))
            self.assertAlmostEqual(float(got["time"][k]), float(position["time"][k]), places=5)
            self.assertEqual(float(got["temperature"][k]), float(f["observables/temperature/value"][k]))


def main():
    if not venv_ready():
        if not pypi_reachable():
            print(f"skipped: MDAnalysis is not installed in {VENV} and PyPI ({PYPI}) cannot be reached to "
                  "install it", file=sys.stderr)
            sys.exit(SKIPPED)
        make_venv()
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
