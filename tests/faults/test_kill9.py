#!/usr/bin/env python3
"""A hard kill (SIGKILL of one rank) loses at most the output since the last
checkpoint, and `--restart` gives back the uninterrupted run's file.

SIGKILL cannot be caught: what survives is what reached the disk. The
output file is flushed (HDF5 metadata included) after every frame and
before every checkpoint, so after a kill it opens and holds at least every
frame its newest checkpoint counts; a restart drops what came later and
computes it again, bitwise. Where the file lacks frames a checkpoint counts
(here: the output deleted, or cut short, after the kill) they cannot be
computed again:
the restart keeps their places as NaN, lists them in the root attributes
`missing_frames`/`missing_rows`, warns, and the run never ends `complete`.

The run is held at step 25 (STRATA_TEST_HOLD_AT), between its second and
third checkpoint, until a stop request that never comes: the kill lands
after two checkpoints and before the end on any machine, with frames
written after the newest checkpoint. Sizes are the smallest that have
several frames between checkpoints.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fault_support as fs  # noqa: E402  (strata_cli.py's helpers)
import h5py  # noqa: E402
import numpy as np  # noqa: E402

ONE_THREAD = {"OMP_NUM_THREADS": "1"}
# Every run below has at least 56 steps and a checkpoint every 10: killed
# once the second checkpoint (step 20) exists, held at step 25 at the latest.
HELD = {**ONE_THREAD, "STRATA_TEST_HOLD_AT": "25"}

# The balanced jet of tests/cli/test_shallow_water.py on 24 x 18 cells:
# dt is about 216 s, so 56 steps, a frame every 4 or 5 steps (13 frames)
# and a checkpoint every 10 steps.
SHALLOW_WATER = fs.jet_input(every_steps=10, keep=2, sim_time=12000.0, output_interval=1000.0)
FIELDS = ("time", "h", "u", "v", "vorticity")
DIAGNOSTICS = ("time", "mass", "energy", "potential_enstrophy", "max_courant")

# 6 x 4 x 4 fcc cells (384 atoms): a small box that three ranks can split (along x)
# with the cutoff; a frame every 5 steps, thermo every 5, a checkpoint every 10.
MD = fs.md_input([6, 4, 4], every_steps=10, keep=2, output_every=5)

# 64 Plummer bodies, 60 steps: a frame and a diagnostics row every 5 steps.
NBODY = """[run]
model = "nbody"
output = "out/run.h5"

[checkpoint]
every_steps = 10
every_seconds = 0
keep = 2

[nbody]
initial = "plummer"
n = 64
softening = 0.05
dt = 0.01
steps = 60
diag_every = 5
output_every = 5
"""


def status(path):
    with h5py.File(path, "r") as f:
        return fs.as_str(f.attrs["status"])


def is_grid_series(name):
    """Whether a dataset of a shallow_water file is one of its time series:
    /time, a field or a diagnostic."""
    return name in ("time", "h", "u", "v", "vorticity") or name.startswith("diagnostics/")


def series(path, prefix):
    """{name: array} of every dataset under the groups in `prefix`."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and name.startswith(prefix):
                out[name] = obj[()]
        f.visititems(visit)
    return out


def counted(checkpoint, model):
    """(frames, rows) of the output that a checkpoint counts."""
    key = "grid" if model == "shallow_water" else model
    with h5py.File(checkpoint, "r") as f:
        state = f["state"].attrs
        return int(state[f"{key}/frames"]), int(state[f"{key}/rows"])


class HardKill(fs.StrataTestCase):

    def checkpoints(self):
        d = self.path("out", "run.chk")
        return sorted(n for n in os.listdir(d) if n.endswith(".h5")) if os.path.isdir(d) else []

    def kill_after_checkpoints(self, ranks, count=2):
        """Starts the run (held at step 25), waits for `count` checkpoints
        and SIGKILLs one rank (the last; the process itself on one rank);
        returns the newest checkpoint's path once every process is gone."""
        proc = subprocess.Popen(fs.strata_command(["run", "in.toml"], ranks), cwd=self.tmp,
                                env=fs.child_env(HELD), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while len(self.checkpoints()) < count:
                self.assertIsNone(proc.poll(), "the run ended before its checkpoints")
                self.assertLess(time.monotonic(), deadline, "no checkpoints appeared")
                time.sleep(0.02)
            if ranks is None:
                victim = proc.pid
            else:
                children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout
                victim = [int(p) for p in children.split()][-1]
            os.kill(victim, signal.SIGKILL)
            out, err = proc.communicate(timeout=fs.TIMEOUT_S)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
        self.assertNotEqual(proc.returncode, 0, "the killed run reported success:\n" + out.decode() + err.decode())
        newest = self.checkpoints()[-1]
        return self.path("out", "run.chk", newest)

    def forget_runs(self):
        """Removes the outputs and checkpoints of earlier runs in this test."""
        for name in ("ref.h5", "ref.xmf"):
            if os.path.exists(self.path(name)):
                os.remove(self.path(name))
        for name in ("ref.chk", "out"):
            if os.path.isdir(self.path(name)):
                fs.remove_tmpdir(self.path(name))

    def reference(self, ranks):
        res = self.strata("run", "in.toml", "-o", "ref.h5", ranks=ranks, env=ONE_THREAD)
        self.assertExit(res, 0)
        return self.path("ref.h5")

    def check_kept(self, model, checkpoint, time_key, row_key):
        """The killed run's file opens and holds every frame and row the
        newest checkpoint counts, equal to the uninterrupted run's."""
        frames, rows = counted(checkpoint, model)
        with h5py.File(self.path("out", "run.h5"), "r") as f, h5py.File(self.path("ref.h5"), "r") as g:
            self.assertGreaterEqual(len(f[time_key]), frames, "frames lost before the newest checkpoint")
            self.assertGreaterEqual(len(f[row_key]), rows, "rows lost before the newest checkpoint")
            self.assertTrue(np.array_equal(f[time_key][:frames], g[time_key][:frames]))
            self.assertTrue(np.array_equal(f[row_key][:rows], g[row_key][:rows]))
        return frames, rows

    def check_equal(self, got, ref, what):
        self.assertEqual(sorted(got), sorted(ref), what)
        for k in ref:
            self.assertTrue(np.array_equal(got[k], ref[k], equal_nan=True), f"{k} {what}")

    def restart_over_a_short_output(self, killed, ranks, ref, selected, frames, rows, kept, *args):
        """Puts the killed run's files back (`killed`: a copy of out/), cuts
        its output to the first `kept` frames and rows (kept = 0: deletes
        it) and restarts: the frames and rows the checkpoint counts beyond
        those are NaN, listed and warned about, all others equal the
        uninterrupted run's, and the status is not `complete`. Returns the
        restarted file's series."""
        fs.remove_tmpdir(self.path("out"))
        shutil.copytree(killed, self.path("out"))
        out = self.path("out", "run.h5")
        if kept == 0:
            os.remove(out)
        else:
            with h5py.File(out, "r+") as f:
                def cut(name, obj):
                    if isinstance(obj, h5py.Dataset) and obj.maxshape and obj.maxshape[0] is None:
                        obj.resize(kept, axis=0)
                f.visititems(cut)
        res = self.strata("run", "in.toml", "--restart", *args, ranks=ranks, env=ONE_THREAD)
        self.assertExit(res, 0)
        self.assertInOutput(f"frames {kept}-{frames - 1} and rows {kept}-{rows - 1}", res.stdout, res, "stdout")
        self.assertTrue(status(out).startswith("incomplete output: the run finished"), status(out))
        with h5py.File(out, "r") as f:
            self.assertEqual(list(f.attrs["missing_frames"]), list(range(kept, frames)))
            self.assertEqual(list(f.attrs["missing_rows"]), list(range(kept, rows)))
        got = series(out, "")
        for k, v in ref.items():
            if not selected(k):
                continue
            lost = rows if k.startswith(("diagnostics/", "observables/")) else frames
            self.assertEqual(got[k].shape, v.shape, k)
            missing = -1 if k.endswith("/step") else np.nan
            self.assertTrue(np.array_equal(got[k][kept:lost], np.full_like(v[kept:lost], missing), equal_nan=True),
                            f"{k}: lost entries are not {missing}")
            self.assertTrue(np.array_equal(got[k][:kept], v[:kept]), f"{k} before the lost frames")
            self.assertTrue(np.array_equal(got[k][lost:], v[lost:]), f"{k} after the lost frames")
        return got

    # --- shallow_water ---------------------------------------------------------------

    def test_shallow_water_kill_keeps_the_checkpointed_frames_and_restarts_bitwise(self):
        self.write("in.toml", SHALLOW_WATER)
        ref = series(self.reference(2), "")
        checkpoint = self.kill_after_checkpoints(2)
        frames, rows = self.check_kept("shallow_water", checkpoint, "time", "diagnostics/time")
        killed = self.path("killed")
        shutil.copytree(self.path("out"), killed)
        res = self.strata("run", "in.toml", "--restart", ranks=2, env=ONE_THREAD)
        self.assertExit(res, 0)
        self.assertNotIn("warning", res.stdout)
        out = self.path("out", "run.h5")
        self.assertEqual(status(out), "complete")
        got = {k: v for k, v in series(out, "").items() if is_grid_series(k)}
        self.check_equal(got, {k: v for k, v in ref.items() if is_grid_series(k)},
                         "after kill -9 and restart")
        # An output that lost its last frames (as one never flushed would):
        # frames before the checkpoint cannot come back; the file says so.
        self.assertGreater(min(frames, rows), 1)
        self.restart_over_a_short_output(killed, 2, ref, is_grid_series, frames, rows, 1)

    # --- md: kill -9 then restart on 1, 2 and 3 ranks ------------------------------------

    def test_md_kill_then_restart_is_bitwise_on_1_2_and_3_ranks(self):
        self.write("in.toml", MD)
        for ranks in (None, 2, 3):
            with self.subTest(ranks=ranks or 1):
                self.forget_runs()
                ref = series(self.reference(ranks), "")
                for k in [k for k in ref if k.startswith(("timers", "performance", "config"))]:
                    ref.pop(k)
                checkpoint = self.kill_after_checkpoints(ranks)
                frames, rows = self.check_kept("md", checkpoint, "particles/all/position/time",
                                               "observables/total_energy/time")
                killed = self.path("killed")
                shutil.copytree(self.path("out"), killed)
                res = self.strata("run", "in.toml", "--restart", ranks=ranks, env=ONE_THREAD)
                self.assertExit(res, 0)
                out = self.path("out", "run.h5")
                self.assertEqual(status(out), "complete")
                got = {k: v for k, v in series(out, "").items() if k in ref}
                self.check_equal(got, ref, f"after kill -9 and restart on {ranks or 1} rank(s)")
                if ranks is None:
                    # Without the output, the checkpoint named.
                    md_series = ("particles/all/p", "particles/all/v", "observables/")
                    got = self.restart_over_a_short_output(killed, ranks, ref, lambda k: k.startswith(md_series),
                                                           frames, rows, 0, checkpoint)
                    self.assertTrue(np.array_equal(got["particles/all/id"], ref["particles/all/id"]))
                fs.remove_tmpdir(killed)

    # --- nbody shares md's H5MD output -----------------------------------------------

    def test_nbody_kill_then_restart_is_bitwise(self):
        # nbody sums its forces in one order on any number of ranks: killed
        # on one, restarted on two, bitwise the uninterrupted run's.
        self.write("in.toml", NBODY)
        ref = series(self.reference(None), "")
        for k in [k for k in ref if k.startswith(("timers", "performance", "config"))]:
            ref.pop(k)
        checkpoint = self.kill_after_checkpoints(None)
        self.check_kept("nbody", checkpoint, "particles/all/position/time", "observables/total_energy/time")
        res = self.strata("run", "in.toml", "--restart", ranks=2, env=ONE_THREAD)
        self.assertExit(res, 0)
        out = self.path("out", "run.h5")
        self.assertEqual(status(out), "complete")
        self.check_equal({k: v for k, v in series(out, "").items() if k in ref}, ref, "after kill -9 and restart")

    def test_a_failed_restart_leaves_the_file_alone(self):
        # A restart into an output of another model fails before it
        # continues anything: the file keeps its status.
        self.write("in.toml", MD)
        self.assertExit(self.strata("run", "in.toml", "--set", "checkpoint.every_steps=30", env=ONE_THREAD), 0)
        with h5py.File(self.path("other.h5"), "w") as f:
            f.attrs["strata_version"] = "strata"
            f.attrs["model"] = "shallow_water"
            f.attrs["status"] = "complete"
        res = self.strata("run", "in.toml", "--restart", self.path("out", "run.chk", self.checkpoints()[0]),
                          "-o", "other.h5", env=ONE_THREAD)
        self.assertEqual(status(self.path("other.h5")), "complete")
        self.assertExit(res, 2)
        self.assertInOutput("model 'shallow_water'", res.stderr, res)
        with h5py.File(self.path("other.h5"), "r") as f:
            self.assertEqual(sorted(f.attrs), ["model", "status", "strata_version"])
            self.assertEqual(len(f), 0)


if __name__ == "__main__":
    unittest.main()
