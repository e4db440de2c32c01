#!/usr/bin/env python3
"""The shape counts of a run (/performance/shape, docs/gpu.md) and the cost
model that reads them (scripts/gpu/cost-model):

- every finished run writes, per timer phase, its launches, waits,
  transfers, allocations and launch sizes with their declared work, as the
  CUDA backend would make them, on whatever backend ran;
- the counts follow the run's structure, not its speed: a diffusion run of
  twice the steps launches exactly twice as many step kernels, with the
  same sizes, and a run slowed by a test delay counts the same;
- a phase that waited but launched nothing writes empty launch-size arrays
  (a collective write of nothing once failed in MPI-IO);
- the cost model reads any such file and predicts a time that grows with
  the work once a launch has more threads than the device holds resident
  (below that, a launch takes about one thread's time whatever its size).

The per-family budgets (what a step may launch and wait for) are in
test_shape_grids.py and test_shape_particles.py.
"""

import os
import re
import subprocess
import sys

import h5py
import numpy as np

import strata_cli as sc

COST_MODEL = os.path.join(sc.SOURCE_DIR, "scripts", "gpu", "cost-model")
DIFFUSION = os.path.join(sc.SOURCE_DIR, "inputs", "diffusion", "benchmark.toml")


def shape(path):
    with h5py.File(path, "r") as f:
        out = {}
        for phase, g in f["performance/shape"].items():
            out[phase] = {k: np.asarray(v[()]) for k, v in g.items()}
        return out


class ShapeCounts(sc.StrataTestCase):

    def diffusion(self, name, n, steps, env=None):
        dt = 1e-4
        res = self.strata("run", DIFFUSION, "-o", name, "--set", f"diffusion.nx={n}", "--set", f"diffusion.ny={n}",
                          "--set", f"diffusion.nz={n}", "--set", f"diffusion.dt={dt}",
                          "--set", f"diffusion.sim_time={steps * dt}", "--set", "run.async_output=false", env=env)
        self.assertExit(res, 0)
        return shape(self.path(name))

    def test_counts_follow_the_steps_not_the_speed(self):
        a = self.diffusion("a.h5", 24, 4)
        b = self.diffusion("b.h5", 24, 8)
        slow = self.diffusion("slow.h5", 24, 4, env={"STRATA_TEST_STEP_DELAY_MS": "50"})
        ca, cb = a["compute"], b["compute"]
        self.assertGreater(int(ca["launches"]), 0)
        # Every step launches the same, and the first also copies the
        # periodic halos once (the steps write them themselves after it).
        self.assertEqual(int(cb["launches"]) - int(ca["launches"]), int(ca["launches"]) - 1)
        # A grid step waits only before output (the last step here): as many
        # waits in 8 steps as in 4.
        self.assertEqual(int(cb["waits"]), int(ca["waits"]))
        np.testing.assert_array_equal(ca["size_threads"], cb["size_threads"])
        once = ca["size_launches"] - (cb["size_launches"] - ca["size_launches"])
        self.assertEqual(int(once.sum()), 1)
        every = once == 0
        np.testing.assert_array_equal(2 * ca["size_launches"][every], cb["size_launches"][every])
        np.testing.assert_allclose(2 * ca["size_device_bytes"][every], cb["size_device_bytes"][every])
        for key in ("launches", "waits", "bytes_to_host", "bytes_to_device", "size_threads", "size_launches"):
            np.testing.assert_array_equal(slow["compute"][key], ca[key], err_msg=key)
        # The heat step's declared traffic: u read once, out written, 8 bytes
        # a value, and the y halo rows it writes (a value read and one
        # written each); its box launch's threads: rows of 24 cells in
        # blocks 32 wide (8 rows a block, 3 blocks along y), a thread a cell
        # at this size.
        cells, halo_rows = 24 ** 3, 2 * 24 * 24
        self.assertIn(32 * 24 * 24, list(ca["size_threads"]))
        k = list(ca["size_threads"]).index(32 * 24 * 24)
        self.assertEqual(ca["size_device_bytes"][k], 16.0 * (cells + halo_rows) * ca["size_launches"][k])

    def test_a_phase_without_launches_writes_empty_sizes(self):
        counts = self.diffusion("c.h5", 12, 2)
        empty = [p for p, c in counts.items() if int(c["launches"]) == 0]
        for phase in empty:
            self.assertEqual(counts[phase]["size_threads"].shape, (0,), phase)
        with h5py.File(self.path("c.h5"), "r") as f:
            self.assertEqual(f.attrs["status"].decode() if isinstance(f.attrs["status"], bytes)
                             else f.attrs["status"], "complete")

    def test_the_cost_model_reads_any_run_and_scales_with_the_work(self):
        self.diffusion("small.h5", 16, 3)
        self.diffusion("large.h5", 96, 3)
        r = subprocess.run([sys.executable, COST_MODEL, self.path("small.h5"), self.path("large.h5")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        predicted = [float(x) for x in re.findall(r"predicted compute on .*?: ([0-9.e+-]+) ms", r.stdout)]
        self.assertEqual(len(predicted), 2, r.stdout)
        self.assertGreater(predicted[0], 0)
        self.assertGreater(predicted[1], predicted[0])
        self.assertIn("achieved_bandwidth: predicted", r.stdout)


if __name__ == "__main__":
    sc.main()
