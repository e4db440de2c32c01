#!/usr/bin/env python3
"""A run stopped by a signal stops at the same step, with the same
checkpoints, status, output and results, however fast its steps go.

On a GPU a run ends in a fraction of the time it takes here, so a test
that signals a run "a while" after its start tests the machine, not
strata. The signal tests therefore stop runs at steps: a rank raises the
signal in its own process as a step starts (STRATA_TEST_SIGNAL_AT), or the
run is held after a step until a signal from outside arrives
(STRATA_TEST_HOLD_AT). Here each kind of signal case runs with its steps
as fast as this machine makes them and slowed by DELAYS_MS (the test
switch STRATA_TEST_STEP_DELAY_MS, a machine many times slower), and its
outcome must be the same at every rate: the exit code, the signal and step
of the stop, the checkpoints written, the output's status and the frames
and rows it holds, and, after --restart, the uninterrupted run's results
bit for bit.
"""

import os
import signal
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

# Milliseconds of sleep after each step: none (this machine's own rate), and
# enough to make every step slower than any computation here.
DELAYS_MS = (0, 300)

# 96 blocks of 16384 antithetic pairs in chunks of 6 blocks: 16 steps on one
# rank, 8 on two; a checkpoint every 2 steps.
PRICING = sc.one_call_input(seed=5, paths="3_145_728", rate=0.03, maturity=1.0) + """
[checkpoint]
every_steps = 2
every_seconds = 0
keep = 10
"""
CHUNKS = ["--set", "pricing.chunk_paths=196_608"]

# Diffusion on 20 x 18 x 16 cells: 14 steps, a frame every 0.1 s and a
# diagnostics row each step, a checkpoint every 4 steps.
DIFFUSION = """\
[run]
model = "diffusion"

[diffusion]
nx = 20
ny = 18
nz = 16
lx = 1.0
ly = 0.9
lz = 0.8
kappa = 0.01
sigma = 0.1
boundary = "wall"
sim_time = 0.5
output_interval = 0.1

[checkpoint]
every_steps = 4
every_seconds = 0
keep = 10
"""

NBODY = """\
[run]
model = "nbody"

[nbody]
initial = "plummer"
n = 256
softening = 0.05
dt = 0.01
steps = 20
"""


def datasets(path, groups):
    """{name: bytes} of every dataset under `groups` (sc.GRID_SERIES: a
    grid file's time series)."""
    found = {}
    with h5py.File(path, "r") as f:
        for g in groups:
            def visit(name, obj, g=g):
                if isinstance(obj, h5py.Dataset):
                    found[f"{g}/{name}"] = sc.raw_bytes(obj[()])
            sc.visit_series(f, g, visit)
    return found


def lengths(path, groups):
    """{name: length} of every dataset under `groups` that has an axis."""
    found = {}
    with h5py.File(path, "r") as f:
        for g in groups:
            def visit(name, obj, g=g):
                if isinstance(obj, h5py.Dataset) and obj.shape:
                    found[f"{g}/{name}"] = obj.shape[0]
            sc.visit_series(f, g, visit)
    return found


class SignalStepRate(sc.StrataTestCase):

    def stopped_run(self, args, env, ranks, delay, outside=None):
        """Runs `strata run ARGS -o out-DELAY.h5` with its steps slowed by
        `delay` ms and `env` (a test switch). With `outside`, a step at
        which the run is held (hold_at): once that step's checkpoint
        exists, SIGUSR1 goes to mpirun, which passes it on. Returns the
        Result and the output's name."""
        out = f"out-{delay}.h5"
        cmd = sc.strata_command(["run", *args, "-o", out], ranks)
        env = {**env, "STRATA_TEST_STEP_DELAY_MS": str(delay)}
        if outside is None:
            return sc.run_command(cmd, self.tmp, env=env), out
        proc = subprocess.Popen(cmd, cwd=self.tmp, env=sc.child_env({**env, **sc.hold_at(outside)}),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        sc.wait_for_path(self, proc, self.path(f"out-{delay}.chk", sc.checkpoint_name(outside)))
        proc.send_signal(signal.SIGUSR1)
        return sc.finish(self, proc), out

    def outcome(self, res, out, series):
        """What a stopped run left: everything that must not depend on its rate."""
        stop = sc.stop_line(res.stdout)
        chk = self.path(out[:-3] + ".chk")
        with h5py.File(self.path(out), "r") as f:
            status = sc.as_str(f.attrs["status"])
        return {"exit": res.returncode,
                "stop": None if stop is None else (stop["reason"], stop["step"], stop["steps"]),
                "checkpoints": sorted(os.listdir(chk)) if os.path.isdir(chk) else [],
                "status": status,
                "lengths": lengths(self.path(out), series) if series else {}}

    def check_rates(self, name, text, args, env, ranks, expected, results, series=(), outside=None):
        """Runs the case at every rate of DELAYS_MS: the outcome must be
        `expected` (exit, stop, checkpoints, status) at each, the same at
        each (frames and rows of `series` too), and with `results` (the
        groups holding them) --restart must give the uninterrupted run's
        results bit for bit."""
        self.write(name, text)
        reference = None
        if results:
            self.assertExit(self.strata("run", name, *args, "-o", "ref.h5", ranks=ranks), 0)
            reference = datasets(self.path("ref.h5"), results)
        outcomes = {}
        for delay in DELAYS_MS:
            with self.subTest(delay_ms=delay):
                res, out = self.stopped_run([name, *args], env, ranks, delay, outside)
                got = self.outcome(res, out, series)
                outcomes[delay] = got
                self.assertEqual({k: got[k] for k in expected}, expected, res.describe())
                if results:
                    again = self.strata("run", name, *args, "-o", out, "--restart", ranks=ranks)
                    self.assertExit(again, 0)
                    self.assertEqual(datasets(self.path(out), results), reference,
                                     f"stopped with {delay} ms steps and restarted: not the uninterrupted results")
        first = outcomes[DELAYS_MS[0]]
        for delay, got in outcomes.items():
            self.assertEqual(got, first, f"the outcome with {delay} ms steps differs from {DELAYS_MS[0]} ms's")

    def test_signal_raised_on_one_rank_mid_step(self):
        self.check_rates("pricing.toml", PRICING, CHUNKS, sc.signal_at(3, signal.SIGUSR1, 1), 2,
                         {"exit": 75, "stop": ("SIGUSR1", 3, 8), "status": "stopped: checkpointed",
                          "checkpoints": [sc.checkpoint_name(2), sc.checkpoint_name(3)]},
                         ["pricing"])

    def test_signal_before_the_first_step(self):
        self.check_rates("pricing.toml", PRICING, CHUNKS, sc.signal_at(0, signal.SIGTERM), None,
                         {"exit": 75, "stop": ("SIGTERM", 0, 16), "status": "stopped: checkpointed",
                          "checkpoints": [sc.checkpoint_name(0)]},
                         ["pricing"])

    def test_time_sized_pricing_steps(self):
        # chunk_paths = 0: steps sized to a quarter of a second each, so
        # their number depends on the machine; where the signal stops the
        # run does not.
        self.check_rates("pricing.toml", PRICING, [], sc.signal_at(4, signal.SIGINT), None,
                         {"exit": 75, "status": "stopped: checkpointed",
                          "checkpoints": [sc.checkpoint_name(2), sc.checkpoint_name(4)]},
                         ["pricing"])

    def test_held_run_signalled_through_mpirun(self):
        self.check_rates("pricing.toml", PRICING, CHUNKS, {}, 2,
                         {"exit": 75, "stop": ("SIGUSR1", 4, 8), "status": "stopped: checkpointed",
                          "checkpoints": [sc.checkpoint_name(2), sc.checkpoint_name(4)]},
                         ["pricing"], outside=4)

    def test_grid_run_with_frames(self):
        self.check_rates("diffusion.toml", DIFFUSION, [], sc.signal_at(5, signal.SIGTERM, 1), 2,
                         {"exit": 75, "stop": ("SIGTERM", 5, 14), "status": "stopped: checkpointed",
                          "checkpoints": [sc.checkpoint_name(4), sc.checkpoint_name(5)]},
                         [sc.GRID_SERIES], series=[sc.GRID_SERIES])

    def test_signal_during_the_set_up(self):
        self.check_rates("nbody.toml", NBODY, [], sc.signal_at("setup", signal.SIGTERM), None,
                         {"exit": 75, "stop": None, "checkpoints": [],
                          "status": "stopped: SIGTERM during the initial forces (O(N^2)), before the first step: "
                                    "nothing computed and no checkpoint to continue from (start afresh with "
                                    "--overwrite)"},
                         [])

    def test_malformed_switches_are_refused(self):
        # A switch that cannot act where the test meant it stops the run at
        # once, rather than letting it run to its end unsignalled.
        self.write("pricing.toml", PRICING)
        cases = [({"STRATA_TEST_SIGNAL_AT": "3:KILL"}, "STRATA_TEST_SIGNAL_AT=3:KILL"),
                 ({"STRATA_TEST_SIGNAL_AT": "3"}, "STRATA_TEST_SIGNAL_AT=3"),
                 ({"STRATA_TEST_SIGNAL_AT": "3:USR1:2"}, "RANK below 2"),
                 ({"STRATA_TEST_HOLD_AT": "soon"}, "STRATA_TEST_HOLD_AT=soon"),
                 ({"STRATA_TEST_INJECT_NAN": "3:2"}, "a rank below 2")]
        for env, needle in cases:
            with self.subTest(env=env):
                res = self.strata("run", "pricing.toml", "-o", "bad.h5", ranks=2, env=env)
                self.assertExit(res, 2)
                self.assertInOutput(needle, res.stderr, res)
                self.assertFalse(os.path.exists(self.path("bad.h5")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
