#!/usr/bin/python3
"""Stop requests are honoured within seconds in every model family.

SPEC.md Guarantee 3: SIGUSR1 (Slurm's --signal) makes every rank checkpoint
at the next step boundary and exit 75. That is only worth something if a
step boundary comes soon whatever the input: a pricing run whose one chunk
per rank takes a minute is deaf for that minute, and Slurm kills it before
it saves anything. Per family, the slowest example input (shrunk where it
keeps the structure that made it slow to answer) is started on 2 ranks and
sent SIGUSR1 through mpirun a few seconds in; it must exit 75 within
STOP_SECONDS, leave a checkpoint that restarts, and the restart must equal
the uninterrupted run bit for bit. The uninterrupted run prints its final
progress line once.
"""

import os
import signal
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

# The bound the signal must be honoured within, on 2 loaded cores: a step
# (about 0.25 s of work when sized by time) plus a checkpoint, with room
# for a machine shared with other jobs.
STOP_SECONDS = 5.0


def inputs(*parts):
    return os.path.join(sc.SOURCE_DIR, "inputs", *parts)


def result_bits(path, groups):
    """Every dataset below `groups` of the file, as raw bytes."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                value = obj[()]
                out[name] = value.tobytes() if isinstance(value, np.ndarray) else repr(value)
        for g in groups:
            f[g].visititems(lambda name, obj, g=g: visit(g + "/" + name, obj))
    return out


def status(path):
    with h5py.File(path, "r") as f:
        return sc.as_str(f.attrs["status"])


class SignalLatency(sc.StrataTestCase):

    def check_family(self, input_path, args, groups):
        """Runs INPUT uninterrupted, then stops a second run with SIGUSR1 a
        third of the way in (at most 3 s), restarts it, and compares."""
        res = self.strata("run", input_path, "-o", "ref.h5", *args, ranks=2)
        reference_seconds = res.elapsed
        self.assertExit(res, 0)
        reference = res
        ref = result_bits(self.path("ref.h5"), groups)

        cmd = sc.strata_command(["run", input_path, "-o", "run.h5", *args], 2)
        proc = subprocess.Popen(cmd, cwd=self.tmp, env=sc.child_env(None), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        # Early enough that the run is still going on today's machine, late
        # enough to be past the set-up.
        time.sleep(min(3.0, reference_seconds / 3))
        self.assertIsNone(proc.poll(), "the run ended before the signal")
        proc.send_signal(signal.SIGUSR1)   # mpirun forwards it to the ranks
        signalled = time.monotonic()
        try:
            out, err = proc.communicate(timeout=sc.TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        answered = time.monotonic() - signalled
        stopped = sc.Result(cmd, self.tmp, proc.returncode, out, err, answered)
        self.assertExit(stopped, 75)
        self.assertLess(answered, STOP_SECONDS, f"SIGUSR1 answered after {answered:.1f} s:{stopped.describe()}")
        self.assertEqual(status(self.path("run.h5")), "stopped: checkpointed")

        res = self.strata("run", input_path, "-o", "run.h5", *args, "--restart", ranks=2)
        self.assertExit(res, 0)
        self.assertInOutput("restarted from", res.stdout, res, "stdout")
        self.assertEqual(status(self.path("run.h5")), "complete")
        got = result_bits(self.path("run.h5"), groups)
        self.assertEqual(sorted(got), sorted(ref))
        for name in ref:
            self.assertEqual(got[name], ref[name], f"{name}: the restarted run differs from the uninterrupted one")

        finals = [line for line in reference.stdout.splitlines() if "100.0%" in line]
        self.assertLessEqual(len(finals), 1, f"final progress line printed {len(finals)} times:{reference.describe()}")

    def test_pricing_american_basket_with_greeks(self):
        # stac_a2 at fewer paths and steps: still one block of samples (so
        # one chunk per rank, a minute long at full size), the American's
        # regression pass first, 20 Greek scenarios per path.
        self.check_family(inputs("pricing", "stac_a2.toml"),
                          ["--set", "pricing.paths=2000", "--set", "pricing.regression_paths=1000",
                           "--set", "pricing.steps_per_year=126", "--set", "pricing.instrument.0.exercise_dates=126"],
                          ["pricing"])

    def test_grid_euler2d(self):
        # A quarter of the cells for 8 times the steps (120): at the file's
        # own 15 steps the whole run is about a second on a quiet machine,
        # most of it MPI start-up, so a signal a third of the way in arrived
        # before the first step, which tests the set-up's answer, not a step's.
        self.check_family(inputs("euler2d", "benchmark.toml"),
                          ["--set", "euler2d.nx=1000", "--set", "euler2d.nz=500", "--set", "euler2d.sim_time=4.0"],
                          ["fields", "diagnostics"])

    def test_particles_md(self):
        self.check_family(inputs("md", "benchmark.toml"), ["--set", "md.steps=200"], ["particles", "observables"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
