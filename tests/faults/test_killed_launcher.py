"""Hard kills of what runs strata: mpirun killed with SIGKILL, a sweep
point killed with SIGKILL.

- When mpirun dies, its ranks are re-parented. They stop at the next step
  boundary as on a signal (checkpoint, `stopped: checkpointed`) instead of
  computing on for a job nobody waits for, and the run continues from that
  checkpoint with --restart.
- A sweep point's log reaches the disk line by line, so a point killed
  with SIGKILL (out of memory, scancel --signal=KILL) keeps its log up to
  the kill for the post-mortem.
"""

import os
import signal
import subprocess
import time
import unittest

from fault_support import (SOURCE_DIR, StrataTestCase, TIMEOUT_S, as_str, checkpoint_name, child_env, hold_at,
                           one_call_input, strata_command)

import h5py

# Seconds the ranks may take to notice their launcher is gone and stop:
# at most a step and a checkpoint of a small grid, with a margin for a
# loaded machine.
STOP_BOUND_S = 20


def wait_for(predicate, what, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before {what} (exit {proc.returncode})")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout} s")
        time.sleep(0.05)


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


class KilledLauncher(StrataTestCase):
    def test_ranks_stop_with_a_checkpoint_when_mpirun_is_killed(self):
        # Mid-run on any machine: mpirun is killed once step 2's checkpoint
        # exists, and the ranks are held at step 3 (a step with none due)
        # until they notice; the checkpoint of step 3 is then the stop's.
        gaussian = os.path.join(SOURCE_DIR, "inputs", "shallow_water", "gaussian.toml")
        args = ["run", gaussian, "-o", "out/g.h5", "--set", "run.async_output=false",
                "--set", "checkpoint.every_steps=2", "--set", "checkpoint.every_seconds=0"]
        proc = subprocess.Popen(strata_command(args, ranks=2), cwd=self.tmp,
                                env=child_env(hold_at(3)), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            ranks = []

            def started():
                ranks[:] = children(proc.pid)
                return len(ranks) == 2 and os.path.exists(self.path("out/g.chk", checkpoint_name(2)))

            wait_for(started, "two ranks and the checkpoint of step 2", proc)
            proc.kill()
            proc.communicate()
            killed = time.monotonic()
            while any(os.path.exists(f"/proc/{r}") for r in ranks):
                self.assertLess(time.monotonic() - killed, STOP_BOUND_S,
                                "ranks still running long after mpirun was killed")
                time.sleep(0.05)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        with h5py.File(self.path("out/g.h5"), "r") as f:
            self.assertEqual(as_str(f.attrs["status"]), "stopped: checkpointed")
        self.assertTrue(os.path.exists(self.path("out/g.chk", checkpoint_name(3))), "no checkpoint of the stop")
        res = self.strata("run", gaussian, "-o", "out/g.h5", "--restart", ranks=2)
        self.assertExit(res, 0)
        with h5py.File(self.path("out/g.h5"), "r") as f:
            self.assertEqual(as_str(f.attrs["status"]), "complete")

    def test_a_killed_sweep_point_keeps_its_log(self):
        self.write("sweep.toml", one_call_input(seed=5, paths=400_000, rate=0.03, maturity=0.5)
                   + '\n[sweep]\n"pricing.asset.0.vol" = [0.1, 0.2]\noutput_dir = "out/sw"\n')
        # Killed mid-run on any machine: held after step 2 (and its
        # checkpoint, which tells the test it is there).
        cmd = strata_command(["sweep", "sweep.toml", "--index", "0", "--set", "pricing.chunk_paths=50000",
                              "--set", "checkpoint.every_steps=2"])
        proc = subprocess.Popen(cmd, cwd=self.tmp, env=child_env(hold_at(2)),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            wait_for(lambda: os.path.exists(self.path("out/sw/point-0000/output.chk", checkpoint_name(2))),
                     "the point's checkpoint of step 2", proc)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=TIMEOUT_S)
        with open(self.path("out/sw/point-0000/log"), encoding="utf-8") as f:
            log = f.read()
        self.assertIn("== strata sweep: point-0000", log)
        self.assertIn("model pricing", log, "the run's own lines are not in the log")


if __name__ == "__main__":
    unittest.main()
