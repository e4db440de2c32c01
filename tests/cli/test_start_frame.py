#!/usr/bin/env python3
"""Starting md and nbody from another run's H5MD output (`initial = "file"`):
which frame is read.

1. By default the last frame (a continuation of the run that wrote the
   file): the new run's step-0 frame equals the source's last frame bit
   for bit, atom by atom (matched by id), and the run prints the frame, its
   step and its time.
2. `md.initial_frame` picks another, counted from the first (0, 1, ...) or
   from the end (-1, -2, ...); a frame outside the file exits 2 naming the
   key and the frame count, before any output exists.
3. nbody reads frames the same way (`nbody.initial_frame`).
Sizes are the smallest that have several frames: 256 atoms (4^3 fcc cells),
20 steps with a frame every 10; 40 bodies.
"""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

ONE_THREAD = {"OMP_NUM_THREADS": "1"}


def md_input(output, extra=""):
    return f"""[run]
model = "md"
output = "{output}"

[md]
cells = [4, 4, 4]
steps = 20
thermo_every = 10
output_every = 10
{extra}
"""


def by_id(f, frame):
    """Positions and velocities of one frame, rows in ascending id order."""
    ids = f["particles/all/id"][()]
    order = np.argsort(ids, kind="stable")
    return (f["particles/all/position/value"][frame][order], f["particles/all/velocity/value"][frame][order])


class StartFrame(sc.StrataTestCase):

    def setUp(self):
        super().setUp()
        self.write("source.toml", md_input("source.h5"))
        self.run_ok("source.toml", env=ONE_THREAD)
        with h5py.File(self.path("source.h5"), "r") as f:
            self.assertEqual(list(f["particles/all/position/step"][()]), [0, 10, 20])

    def start_from(self, name, frame=None, code=0):
        extra = 'initial = "file"\ninitial_file = "source.h5"'
        if frame is not None:
            extra += f"\ninitial_frame = {frame}"
        self.write(name + ".toml", md_input(name + ".h5", extra))
        res = self.strata("run", name + ".toml", env=ONE_THREAD)
        self.assertExit(res, code)
        return res

    def assertStartsAt(self, name, source_frame):
        with h5py.File(self.path("source.h5"), "r") as a, h5py.File(self.path(name + ".h5"), "r") as b:
            want, got = by_id(a, source_frame), by_id(b, 0)
            for label, x, y in zip(("position", "velocity"), want, got):
                self.assertTrue(np.array_equal(x, y), f"{name}: step-0 {label}s are not source frame {source_frame}")

    def test_default_is_the_last_frame_and_says_so(self):
        res = self.start_from("next")
        self.assertStartsAt("next", 2)
        self.assertInOutput("initial state from frame 2 of 3 (the last; step 20, time 0.1) of source.h5",
                            res.stdout, res, "stdout")

    def test_an_explicit_frame_from_either_end(self):
        res = self.start_from("first", 0)
        self.assertStartsAt("first", 0)
        self.assertInOutput("frame 0 of 3 (counting from 0; step 0, time 0) of source.h5", res.stdout, res, "stdout")
        res = self.start_from("middle", -2)
        self.assertStartsAt("middle", 1)
        self.assertInOutput("frame 1 of 3 (counting from 0; step 10, time 0.05)", res.stdout, res, "stdout")

    def test_a_frame_outside_the_file_is_bad_input(self):
        for frame in (3, -4):
            with self.subTest(frame=frame):
                res = self.start_from("bad", frame, code=2)
                self.assertInOutput(f"md.initial_frame = {frame}", res.stderr, res)
                self.assertInOutput('"source.h5" /particles/all/position/value holds 3 frame(s)', res.stderr, res)
                self.assertFalse(os.path.exists(self.path("bad.h5")))

    def test_nbody_reads_the_last_frame_too(self):
        keys = ('[run]\nmodel = "nbody"\noutput = "{0}.h5"\n\n[nbody]\ndt = 0.0078125\nsteps = 4\n'
                'diag_every = 2\noutput_every = 2\n')
        self.write("a.toml", keys.format("a") + "n = 40\n")
        self.run_ok("a.toml", env=ONE_THREAD)
        self.write("b.toml", keys.format("b") + 'initial = "file"\ninitial_file = "a.h5"\n')
        res = self.run_ok("b.toml", env=ONE_THREAD)
        self.assertInOutput("nbody: initial state from frame 2 of 3 (the last; step 4", res.stdout, res, "stdout")
        with h5py.File(self.path("a.h5"), "r") as a, h5py.File(self.path("b.h5"), "r") as b:
            for element in ("position", "velocity"):
                self.assertTrue(np.array_equal(a["particles/all"][element]["value"][-1],
                                               b["particles/all"][element]["value"][0]), element)


if __name__ == "__main__":
    unittest.main()
