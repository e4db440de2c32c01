#!/usr/bin/env python3
"""ParaView opens every family's OUT.xmf, with the reader it picks itself.

`pvpython` (Debian's python3-paraview, ParaView 5.11) opens each sidecar
with `OpenDataFile`, which picks the XDMF 3 reader (Xdmf3ReaderS) for .xmf,
and again with the older XDMF 2 reader picked by hand. At the first and the
last frame each must give the mesh (points and cells: a particle is a vertex
cell, or ParaView draws nothing), every array the sidecar names, and the
values of that frame in the HDF5 file: a grid's field cell by cell, the
particles' positions. Grids: diffusion (3-D), shallow_water (x-y),
euler2d (x-z), on 2 ranks; particles: nbody and md.

Skips (exit 77) where pvpython is not installed; scripts/test installs it.
"""

import json
import os
import shutil
import subprocess
import sys
import unittest

import strata_cli as sc

PVPYTHON = shutil.which("pvpython")

RUNS = {
    "diffusion": ("diffusion/gaussian.toml", ["diffusion.nx=6", "diffusion.ny=5", "diffusion.nz=4",
                                              "diffusion.sim_time=0.02"]),
    "shallow_water": ("shallow_water/gaussian.toml", ["shallow_water.nx=8", "shallow_water.ny=6"]),
    "euler2d": ("euler2d/thermal.toml", ["euler2d.nx=10", "euler2d.nz=6", "euler2d.sim_time=20"]),
    "nbody": ("nbody/plummer.toml", ["nbody.n=32", "nbody.t_end=0.0625"]),
    "md": ("md/lj_liquid.toml", ["md.cells=[2, 2, 2]", "md.steps=10", "md.output_every=5"]),
}

# Runs inside pvpython: prints one JSON line per file, reader and frame.
PROBE = r"""
import json, sys
from paraview.simple import OpenDataFile, XDMFReader, GetAnimationScene, servermanager
from vtk.numpy_interface import dataset_adapter as dsa

def first_block(data):
    if data.IsA("vtkMultiBlockDataSet"):
        it = data.NewIterator()
        it.InitTraversal()
        return it.GetCurrentDataObject()
    return data

for path in sys.argv[1:]:
    for reader_name, make in (("default", lambda: OpenDataFile(path)),
                              ("xdmf2", lambda: XDMFReader(FileNames=[path]))):
        reader = make()
        times = list(reader.TimestepValues or [])
        scene = GetAnimationScene()
        scene.UpdateAnimationUsingDataTimeSteps()
        for frame in sorted({0, len(times) - 1}):
            scene.AnimationTime = times[frame]
            reader.UpdatePipeline(times[frame])
            data = first_block(servermanager.Fetch(reader))
            wrapped = dsa.WrapDataObject(data)
            arrays = {}
            for where, store in (("point", wrapped.PointData), ("cell", wrapped.CellData)):
                for name in store.keys():
                    arrays[where + ":" + name] = [float(v) for v in store[name].ravel()]
            points = [float(v) for v in wrapped.Points.ravel()] if data.IsA("vtkPointSet") else []
            print(json.dumps({"file": path, "reader": reader.GetXMLName(), "asked": reader_name,
                              "frame": frame, "frames": len(times), "points": data.GetNumberOfPoints(),
                              "cells": data.GetNumberOfCells(), "arrays": arrays, "xyz": points}))
"""


@unittest.skipIf(PVPYTHON is None, "pvpython not installed (Debian: python3-paraview); scripts/test installs it")
class ParaViewOpens(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sc.check_binary()
        cls.tmp = sc.make_tmpdir("paraview")
        cls.files = {}
        for name, (inp, sets) in RUNS.items():
            args = ["run", os.path.join(sc.SOURCE_DIR, "inputs", inp), "-o", f"{name}.h5"]
            for s in sets:
                args += ["--set", s]
            ranks = 2 if name in ("diffusion", "shallow_water", "euler2d") else None
            res = sc.run_strata(args, cls.tmp, ranks=ranks)
            if res.returncode != 0:
                raise AssertionError(f"{name} run failed:{res.describe()}")
            cls.files[name] = os.path.join(cls.tmp, f"{name}.xmf")
        probe = os.path.join(cls.tmp, "probe.py")
        with open(probe, "w", encoding="utf-8") as f:
            f.write(PROBE)
        # From the files' own folder, as a user there types `paraview
        # ./NAME.xmf` (ParaView 5.11's XDMF 3 reader takes a bare NAME.xmf
        # for the folder of the data it names: docs/output.md).
        proc = subprocess.run([PVPYTHON, probe] + ["./" + os.path.basename(p) for p in cls.files.values()],
                              cwd=cls.tmp, capture_output=True, text=True, timeout=600, check=False)
        cls.rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        cls.log = proc.stdout[-4000:] + proc.stderr[-4000:]

    @classmethod
    def tearDownClass(cls):
        sc.remove_tmpdir(cls.tmp)

    def rows_of(self, name):
        rows = [r for r in self.rows if os.path.basename(r["file"]) == f"{name}.xmf"]
        self.assertEqual(len(rows), 4, f"{name}: expected 2 readers x 2 frames from pvpython:\n{self.log}")
        self.assertEqual({r["reader"] for r in rows if r["asked"] == "default"}, {"Xdmf3ReaderS"},
                         "ParaView's own choice for .xmf is the XDMF 3 reader")
        return rows

    def h5(self, name):
        f = sc.h5py.File(os.path.join(self.tmp, f"{name}.h5"), "r")
        self.addCleanup(f.close)
        return f

    def check_grid(self, name):
        f = self.h5(name)
        fields = sc.field_names(f)
        self.assertTrue(fields)
        for row in self.rows_of(name):
            what = f"{name} {row['asked']} frame {row['frame']}"
            cells = int(sc.np.prod(sc.grid_cells(f)))
            self.assertEqual(row["cells"], cells, what)
            for q in fields:
                self.assertIn("cell:" + q, row["arrays"], what)
                expected = f[q][row["frame"]].ravel()
                sc.np.testing.assert_array_equal(sc.np.array(row["arrays"]["cell:" + q]), expected, what + " " + q)

    def check_particles(self, name):
        f = self.h5(name)
        pos = f["particles/all/position/value"]
        n = pos.shape[1]
        for row in self.rows_of(name):
            what = f"{name} {row['asked']} frame {row['frame']}"
            self.assertEqual(row["points"], n, what)
            self.assertEqual(row["cells"], n, what + ": one vertex cell a particle")
            for a in ("point:velocity", "point:id"):
                self.assertIn(a, row["arrays"], what)
            sc.np.testing.assert_array_equal(sc.np.array(row["xyz"]), pos[row["frame"]].ravel(), what)

    def test_diffusion(self):
        self.check_grid("diffusion")

    def test_shallow_water(self):
        self.check_grid("shallow_water")

    def test_euler2d(self):
        self.check_grid("euler2d")

    def test_nbody(self):
        self.check_particles("nbody")

    def test_md(self):
        self.check_particles("md")


if __name__ == "__main__":
    if PVPYTHON is None:
        print("skipped: pvpython not installed (Debian: python3-paraview)", file=sys.stderr)
        sys.exit(77)
    unittest.main()
