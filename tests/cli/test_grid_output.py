#!/usr/bin/env python3
"""Grid output written in the background (`run.async_output`).

A grid model takes each frame's snapshot on the main thread and hands the
collective HDF5 writes to one background thread per rank, so the steps go
on while the frame goes to the file system; at most one frame is in
flight. These tests check the three things that can go wrong with that:
the file differs from a synchronous run's, the compute still waits for the
file system (overlap does not happen), and a failed write is lost or hangs
the ranks instead of failing the run with exit 4.

The file system is made slow on purpose (STRATA_TEST_OUTPUT_DELAY_MS: each
write sleeps first) and the steps are slowed too (STRATA_TEST_STEP_DELAY_MS),
so the claims rest on sleeps, not on how fast this machine computes: a
loaded machine only makes the steps longer, which gives the writer more
time, never less.
"""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

EXAMPLE = os.path.join(sc.SOURCE_DIR, "inputs", "diffusion", "gaussian.toml")

# 32^3 cells, dt at 0.9 of the stability limit: 18 steps to t = 0.25 s;
# a frame every 0.075 s of model time is one every 5 or 6 steps.
SMALL = ["--set", "diffusion.nx=32", "--set", "diffusion.ny=32", "--set", "diffusion.nz=32",
         "--set", "diffusion.output_interval=0.075"]
WRITE_DELAY_S = 0.4
STEP_DELAY_S = 0.12


class BackgroundOutput(sc.StrataTestCase):

    def run_diffusion(self, name, asynchronous, ranks=None, env=None, code=0):
        flag = "true" if asynchronous else "false"
        r = self.strata("run", EXAMPLE, "-o", name, "--set", f"run.async_output={flag}", *SMALL,
                        ranks=ranks, env=env)
        self.assertExit(r, code)
        return r

    def test_the_file_is_bitwise_that_of_a_synchronous_run(self):
        self.run_diffusion("async.h5", True, ranks=3)
        self.run_diffusion("sync.h5", False, ranks=3)
        with h5py.File(self.path("async.h5")) as a, h5py.File(self.path("sync.h5")) as s:
            self.assertEqual(sc.as_str(a.attrs["status"]), "complete")
            da, ds = sc.grid_series(a), sc.grid_series(s)
            self.assertEqual(sorted(da), sorted(ds))
            for name in da:
                self.assertEqual(da[name].shape, ds[name].shape, f"/{name}")
                self.assertTrue(np.array_equal(da[name][()], ds[name][()]), f"/{name} differs")
            self.assertGreaterEqual(a["time"].shape[0], 4)
        with open(self.path("async.xmf")) as fa, open(self.path("sync.xmf")) as fs:
            self.assertEqual(fa.read().replace("async.h5", "X"), fs.read().replace("sync.h5", "X"))
        sc.check_xdmf(self.path("async.xmf"))

    def test_steps_go_on_while_a_frame_is_written(self):
        env = {"STRATA_TEST_OUTPUT_DELAY_MS": int(WRITE_DELAY_S * 1000),
               "STRATA_TEST_STEP_DELAY_MS": int(STEP_DELAY_S * 1000)}
        waited = {}
        for asynchronous in (True, False):
            name = f"run-{asynchronous}.h5"
            self.run_diffusion(name, asynchronous, ranks=2, env=env)
            with h5py.File(self.path(name)) as f:
                frames = f["time"].shape[0]
                waited[asynchronous] = float(f["performance/output_wait_seconds"][()])
        # Synchronous: every frame's write is waited for in full.
        self.assertGreaterEqual(waited[False], 0.95 * frames * WRITE_DELAY_S, waited)
        # Background: between frames 5 or more slowed steps (>= 0.6 s) pass
        # while a write takes 0.4 s, so only the last frames, which come
        # closer together (the run ends 2 steps after the one before) and
        # the final flush, can be waited for: at most two writes.
        self.assertLessEqual(waited[True], 2 * WRITE_DELAY_S + 0.3, waited)
        self.assertLess(waited[True], 0.5 * waited[False], waited)

    def test_a_failed_write_fails_the_run_on_every_rank_with_exit_4(self):
        for asynchronous in (True, False):
            with self.subTest(asynchronous=asynchronous):
                name = f"fail-{asynchronous}.h5"
                # The third write (frame 2; frame 0 is the first) fails on rank 1 only.
                r = self.run_diffusion(name, asynchronous, ranks=2, env={"STRATA_TEST_OUTPUT_FAIL": "2:1"},
                                       code=4)
                self.assertInOutput("output job 2 failed", r.stderr, r)
                with h5py.File(self.path(name)) as f:
                    status = sc.as_str(f.attrs["status"])
                    self.assertTrue(status.startswith("failed:"), status)
                    # Nothing after the failed job (frame 2) was written.
                    self.assertEqual(f["time"].shape[0], 3)

    def test_doctor_says_how_output_is_written(self):
        r = self.strata("doctor")
        self.assertExit(r, 0)
        self.assertInOutput("MPI_THREAD_MULTIPLE: grid output frames are written in the background", r.stdout, r,
                            "stdout")


if __name__ == "__main__":
    unittest.main()
