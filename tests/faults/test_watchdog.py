"""A peer that stops answering never hangs a run: the watchdog (docs/faults.md).

One rank of a 2-rank run stops its own process (SIGSTOP, STRATA_TEST_HANG_AT)
as a step starts: a hung peer, as a cut link looks to the other ranks, on one
machine. The other rank must end within a bound with exit 76 and one line
naming itself, the phase and the peer; the last checkpoint stays valid, the
output never says `complete`, and `--restart` continues it bitwise to the
uninterrupted result. A run whose checkpoints and output frames take far
longer than its steps, but less than the floor, is no hang.
"""

import os
import re
import signal
import subprocess
import sys
import time
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fault_support as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

FLOOR_S = 2
# The hung run must end within this (the floor, plus start-up and exit on a
# loaded machine); a hang meets the bound and fails.
BOUND_S = 60
PEER_LOST = 76

SHALLOW_WATER = sc.jet_input(every_steps=4, keep=10, sim_time=6000.0, output_interval=1500.0)

MD = sc.md_input([5, 5, 5], every_steps=10, keep=10, output_every=10)

_LINE = re.compile(r"^strata: rank (\d+): error: a peer stopped answering: (.+?) has waited ([0-9.]+) s for "
                   r"(rank \d+|all ranks \(a collective\)) .*; (the checkpoint (\S+) is intact; continue with: "
                   r"(.+)|no checkpoint yet; start again with: (.+)) \(exit 76\)$", re.M)
_PHASE = re.compile(r"^(step \d+'s computation|step \d+'s halo exchange|the all-reduce of the stop flag after "
                    r"step \d+|an output write at step \d+|the checkpoint write at step \d+)$")


def results(path):
    """{dataset: bytes} of every result a run writes (not timers, health,
    performance or the attributes of a run's history)."""
    out = {}
    skip = ("timers", "performance", "health", "config")

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and name.split("/")[0] not in skip:
            out[name] = np.asarray(obj[()]).tobytes()
    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return out


def tagged_pids(tag, name=None):
    """Processes whose environment carries `tag` (mpirun and the ranks of one
    test's run), only those called `name` if given."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if tag.encode() not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/comm", encoding="utf-8") as f:
                if name is None or f.read().strip() == name:
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


class WatchdogTest(sc.StrataTestCase):

    def start(self, args, env):
        """Starts a 2-rank run tagged so that teardown finds every process of
        it: (the mpirun process, the tag)."""
        tag = f"STRATA_WATCHDOG_TEST={uuid.uuid4().hex}"
        name, value = tag.split("=")
        proc = subprocess.Popen(sc.strata_command(args, 2), cwd=self.tmp, env=sc.child_env({**env, name: value}),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        self.addCleanup(self.reap, proc, tag)
        return proc, tag

    @staticmethod
    def reap(proc, tag):
        """A stopped rank cannot die until it runs again: continue, then kill."""
        for pid in tagged_pids(tag):
            for sig in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()

    def hung_run(self, text, hang_step):
        """A run whose rank 1 stops as step `hang_step` starts: (Result, the
        message line's match)."""
        self.write("in.toml", text)
        t0 = time.monotonic()
        proc, _ = self.start(["run", "in.toml", "--set", f"run.watchdog_floor={FLOOR_S}"],
                             {"STRATA_TEST_HANG_AT": f"{hang_step}:1", "STRATA_PROGRESS": "off"})
        try:
            out, err = proc.communicate(timeout=BOUND_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            self.fail(f"the run with a stopped rank did not end within {BOUND_S} s:\n{out.decode()}\n{err.decode()}")
        res = sc.Result(proc.args, self.tmp, proc.returncode, out, err, time.monotonic() - t0)
        self.assertExit(res, PEER_LOST)
        self.assertLess(res.elapsed, BOUND_S, res.describe())
        m = _LINE.search(res.stderr)
        self.assertIsNotNone(m, "no watchdog line on stderr" + res.describe())
        return res, m

    def check_hang_and_restart(self, text, hang_step, last_checkpoint):
        res, m = self.hung_run(text, hang_step)
        rank, phase, waited, peer = m.group(1), m.group(2), float(m.group(3)), m.group(4)
        # Rank 1 is stopped: rank 0 reports, waiting for rank 1 (a halo) or
        # for everyone (a collective), in a phase of the step it was in.
        self.assertEqual(rank, "0", res.describe())
        self.assertIn(peer, ("rank 1", "all ranks (a collective)"), res.describe())
        self.assertRegex(phase, _PHASE, res.describe())
        self.assertGreaterEqual(waited, FLOOR_S, res.describe())
        # The last checkpoint the line names is the newest one, complete,
        # and no temporary checkpoint is left.
        chk_dir = self.path("out", "run.chk")
        self.assertEqual(m.group(6), os.path.join("out", "run.chk", sc.checkpoint_name(last_checkpoint)),
                         res.describe())
        self.assertEqual(sorted(os.listdir(chk_dir))[-1], sc.checkpoint_name(last_checkpoint))
        self.assertEqual([n for n in os.listdir(chk_dir) if n.endswith(".tmp")], [])
        with h5py.File(os.path.join(chk_dir, sc.checkpoint_name(last_checkpoint)), "r") as f:
            self.assertEqual(int(f.attrs["complete"]), 1)
        with h5py.File(self.path("out", "run.h5"), "r") as f:
            self.assertNotEqual(sc.as_str(f.attrs["status"]), "complete")
        # The command the line gives continues the run; the result is the
        # uninterrupted run's, bit for bit.
        command = m.group(7)
        self.assertTrue(command.endswith(" --restart"), command)
        cont = sc.run_strata(["run", "in.toml", "--set", f"run.watchdog_floor={FLOOR_S}", "--restart"], self.tmp,
                             ranks=2)
        self.assertExit(cont, 0)
        self.assertIn(f"step {last_checkpoint} of", cont.stdout, cont.describe())
        restarted = results(self.path("out", "run.h5"))
        ref = sc.run_strata(["run", "in.toml", "-o", "ref.h5"], self.tmp, ranks=2)
        self.assertExit(ref, 0)
        expected = results(self.path("ref.h5"))
        self.assertEqual(sorted(restarted), sorted(expected))
        for name in expected:
            self.assertEqual(restarted[name], expected[name], f"{name} differs after the restart")
        with h5py.File(self.path("out", "run.h5"), "r") as f:
            self.assertEqual(sc.as_str(f.attrs["status"]), "complete")

    def test_stopped_rank_ends_a_grid_run(self):
        self.check_hang_and_restart(SHALLOW_WATER, hang_step=10, last_checkpoint=8)

    def test_stopped_rank_ends_an_md_run(self):
        self.check_hang_and_restart(MD, hang_step=25, last_checkpoint=20)

    def test_stopped_rank_before_any_checkpoint_says_start_again(self):
        res, m = self.hung_run(SHALLOW_WATER, hang_step=2)
        self.assertIsNone(m.group(6), res.describe())
        self.assertTrue(m.group(8).endswith(" --overwrite"), res.describe())

    def test_slow_checkpoints_and_frames_below_the_floor_are_no_hang(self):
        # Steps of about 20 ms; each checkpoint and each output frame takes
        # over 1.5 s: 75 steps' time, within the floor (3 s) that such
        # phases are timed against.
        self.write("in.toml", SHALLOW_WATER)
        env = {"STRATA_TEST_STEP_DELAY_MS": "20", "STRATA_TEST_CHECKPOINT_DELAY_MS": "1500",
               "STRATA_TEST_OUTPUT_DELAY_MS": "1500", "STRATA_PROGRESS": "off"}
        res = sc.run_strata(["run", "in.toml", "--set", "run.watchdog_floor=3", "--set",
                             "checkpoint.every_steps=8"], self.tmp, ranks=2, env=env)
        self.assertExit(res, 0)
        self.assertNotIn("peer stopped answering", res.stderr, res.describe())
        with h5py.File(self.path("out", "run.h5"), "r") as f:
            self.assertEqual(sc.as_str(f.attrs["status"]), "complete")

    def test_a_suspended_and_resumed_job_is_no_hang(self):
        # As a batch system suspends a job (SIGSTOP to every rank) and
        # resumes it: the time stopped is no peer's fault, so the watchdog
        # of each rank starts its clock again when it runs again. Stopped
        # after step 4's checkpoint with 24 steps of 200 ms left, for twice
        # the floor.
        self.write("in.toml", SHALLOW_WATER)
        proc, tag = self.start(["run", "in.toml", "--set", f"run.watchdog_floor={FLOOR_S}"],
                               {"STRATA_TEST_STEP_DELAY_MS": "200", "STRATA_PROGRESS": "off"})
        sc.wait_for_path(self, proc, self.path("out", "run.chk", sc.checkpoint_name(4)))
        ranks = tagged_pids(tag, "strata")
        self.assertEqual(len(ranks), 2, ranks)
        for pid in ranks:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(2 * FLOOR_S)
        for pid in ranks:
            os.kill(pid, signal.SIGCONT)
        res = sc.finish(self, proc, "the resumed run")
        self.assertExit(res, 0)
        self.assertNotIn("peer stopped answering", res.stderr, res.describe())
        with h5py.File(self.path("out", "run.h5"), "r") as f:
            self.assertEqual(sc.as_str(f.attrs["status"]), "complete")


if __name__ == "__main__":
    sc.check_binary()
    unittest.main()
