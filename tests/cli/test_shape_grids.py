#!/usr/bin/env python3
"""What a grid model's step asks of a device (/performance/shape,
docs/gpu.md), counted on whatever backend runs the test:

- on one rank a step waits for the device only where the host reads the
  fields next (an output step) or after about 2^38 bytes of queued memory
  traffic: a small run whose only frames are the first and the last waits
  once in `compute`, at its last step, whatever its step count;
- a step moves nothing between host and device;
- every step launches the same kernels, the last (maybe shorter) one too,
  but diffusion's and shallow water's first, which also copy the periodic
  halos that their later steps write themselves;
- a step launches no more kernels than its budget: one box launch per
  stencil stage (euler2d: a fused flux-and-update kernel per Runge-Kutta
  stage), one launch for all the periodic copies of a halo exchange and
  one per axis for the walls; diffusion's step and euler2d's x sweep read
  across their periodic seams themselves, shallow water's stages write
  their outputs' periodic halos themselves, and euler2d's z sweep copies
  no x halo (before 2026-11-27: diffusion 4, shallow water 21, euler2d 36
  on these inputs; then diffusion 2, shallow water 6 and euler2d 15, then
  euler2d 12);
- the Runge-Kutta stages of shallow water and euler2d declare the bytes
  that their step must move and no more: each stage reads its input and
  the step's start state and writes its output, the first stage's input
  being the start state (24 values a cell a step in shallow water, 64 in
  euler2d). Until 2026-11-28 the first stages counted the start state
  apart: 27 and 72.

The counts are the run's structure, not its speed (test_shape_counts.py).
"""

import os

import h5py
import numpy as np

import strata_cli as sc


def inputs(name):
    return os.path.join(sc.SOURCE_DIR, "inputs", name, "benchmark.toml")


# (model, input, size settings, the key that sets the simulated span, a span
# of a few steps); every benchmark input writes the first and last frames only.
# Launches a step on one rank (docs/gpu.md, "Fewer launches a step"):
# diffusion: the heat step, which reads across its periodic seams and
# writes the halo rows of y itself (its first step copies the halos once
# more: FIRST_STEP); shallow water (periodic here; walls add one launch an
# axis): per SSP-RK3 stage the stage, which writes its output's periodic
# halos (6 launches a step until 2026-11-28; its first step copies the
# state's halos once: FIRST_STEP); euler2d: per
# Runge-Kutta stage of the x sweep the fused stage, which reads across the
# periodic seam, of the z sweep both walls' halo rows and the fused stage
# (a z sweep reads no x halo: 15 launches a step until 2026-11-27, 12
# until the x sweep read across its seam, 2026-11-28).
LAUNCH_BUDGET = {"diffusion": 1, "shallow_water": 3, "euler2d": 9}
FIRST_STEP = {"diffusion": 1, "shallow_water": 1, "euler2d": 0}
# The stage kernel of each Runge-Kutta model, and the values a step of it
# must move a cell (the models' bytes_per_cell_update()).
STAGES = {"shallow_water": ("ShallowWaterColumns<double>", 24), "euler2d": ("SweepStage<double", 64)}

CASES = [
    ("diffusion", ["diffusion.nx=24", "diffusion.ny=24", "diffusion.nz=24", "diffusion.dt=1e-4"],
     "diffusion.sim_time", 6e-4),
    ("shallow_water", ["shallow_water.nx=48", "shallow_water.ny=48"], "shallow_water.sim_time", 1500.0),
    ("euler2d", ["euler2d.nx=60", "euler2d.nz=30"], "euler2d.sim_time", 6.0),
]


class GridShape(sc.StrataTestCase):

    def run_model(self, name, model, sizes, span_key, span):
        args = ["run", inputs(model), "-o", name, "--set", "run.async_output=false", "--set", f"{span_key}={span}"]
        for s in sizes:
            args += ["--set", s]
        self.assertExit(self.strata(*args), 0)
        with h5py.File(self.path(name), "r") as f:
            steps = int(f["performance/steps"][()])
            c = {k: np.asarray(v[()]) for k, v in f["performance/shape/compute"].items()}
        return steps, c

    def test_a_step_waits_only_before_output(self):
        for model, sizes, span_key, span in CASES:
            with self.subTest(model=model):
                steps, c = self.run_model(f"{model}.h5", model, sizes, span_key, span)
                self.assertGreaterEqual(steps, 3, "the case should take several steps")
                self.assertEqual(int(c["waits"]), 1, f"{steps} steps")
                self.assertEqual(int(c["bytes_to_host"]), 0)
                self.assertEqual(int(c["bytes_to_device"]), 0)

    def test_every_step_launches_the_same(self):
        for model, sizes, span_key, span in CASES:
            with self.subTest(model=model):
                n1, a = self.run_model(f"{model}_a.h5", model, sizes, span_key, span)
                n2, b = self.run_model(f"{model}_b.h5", model, sizes, span_key, 2 * span)
                self.assertGreater(n2, n1)
                # The same launches a step (the last, maybe shorter, too).
                la, lb = int(a["launches"]) - FIRST_STEP[model], int(b["launches"]) - FIRST_STEP[model]
                self.assertEqual(la % n1, 0)
                self.assertEqual(la * n2, lb * n1)

    def test_launches_per_step_within_budget(self):
        for model, sizes, span_key, span in CASES:
            with self.subTest(model=model):
                steps, c = self.run_model(f"{model}_budget.h5", model, sizes, span_key, span)
                per_step = (int(c["launches"]) - FIRST_STEP[model]) / steps
                self.assertLessEqual(per_step, LAUNCH_BUDGET[model], f"{int(c['launches'])} launches, {steps} steps")

    def test_stages_declare_the_bytes_a_step_moves(self):
        for model, sizes, span_key, span in CASES:
            if model not in STAGES:
                continue
            kernel, values = STAGES[model]
            with self.subTest(model=model):
                steps, c = self.run_model(f"{model}_bytes.h5", model, sizes, span_key, span)
                with h5py.File(self.path(f"{model}_bytes.h5"), "r") as f:
                    names = [n.decode() if isinstance(n, bytes) else str(n)
                             for n in f["performance/shape/compute/size_kernel"].attrs["names"]]
                stage = np.array([kernel in names[int(k)] for k in c["size_kernel"]])
                self.assertTrue(stage.any(), f"no {kernel} among {names}")
                nx, ny = (int(s.split("=")[1]) for s in sizes)
                expected = 8.0 * values * nx * ny * steps
                self.assertEqual(float(c["size_device_bytes"][stage].sum()), expected, f"{steps} steps")


if __name__ == "__main__":
    sc.main()
