#!/usr/bin/env python3
"""Batch operations of `strata run`: checkpoints, restart, signals, wall time,
health checks, memory prediction, and never clobbering a result.

docs/contract.md guarantees 2-4. A run signalled from outside is held at a
checkpoint step by the test-only switch STRATA_TEST_HOLD_AT until the signal
arrives, so it is mid-run whatever the machine's speed and stops at that
step; the prices of every stopped-and-restarted run must equal, bit for bit,
those of the same input run without interruption.
"""

import os
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

# Two instruments, 96 blocks of 16384 antithetic pairs: with chunks of 2e5
# paths (6 blocks) a run has 16 steps on one rank.
INPUT = sc.call_put_input()

# Checkpoints come every 2 steps: a run held at one of them.
HOLD_STEP = 2


def prices(path):
    with h5py.File(path, "r") as f:
        return sc.result_bits(f)


def status(path):
    with h5py.File(path, "r") as f:
        return sc.as_str(f.attrs["status"])


class Checkpoints(sc.StrataTestCase):

    def setUp(self):
        super().setUp()
        self.write("in.toml", INPUT)

    # --- helpers --------------------------------------------------------------

    def reference(self, *extra):
        """The uninterrupted run's price bits (its own output file)."""
        res = self.strata("run", "in.toml", "-o", "ref.h5", *extra)
        self.assertExit(res, 0)
        return prices(self.path("ref.h5"))

    def checkpoints(self, out="out/run.h5"):
        d = self.path(out[:-3] + ".chk")
        return sorted(n for n in os.listdir(d) if n.endswith(".h5")) if os.path.isdir(d) else []

    def start(self, *args, ranks=None, hold=HOLD_STEP):
        """Starts strata in its own process group, held after step `hold`
        (a checkpoint step) until a signal comes; returns the Popen once
        that step's checkpoint exists."""
        cmd = sc.strata_command(["run", "in.toml", *args], ranks)
        proc = subprocess.Popen(cmd, cwd=self.tmp, env=sc.child_env(sc.hold_at(hold)),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        sc.wait_for_path(self, proc, self.path("out", "run.chk", sc.checkpoint_name(hold)))
        return proc

    def finish(self, proc, step=HOLD_STEP):
        """The Result of a run held at `step` and signalled: exit 75 there."""
        res = sc.finish(self, proc)
        self.assertExit(res, 75)
        stopped = sc.stop_line(res.stdout)
        self.assertIsNotNone(stopped, res.describe())
        self.assertEqual(stopped["step"], step, res.describe())
        return res

    def rank_pids(self, mpirun_pid):
        """The strata processes mpirun started (its children)."""
        out = subprocess.run(["pgrep", "-P", str(mpirun_pid)], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    def stop_and_restart(self, ranks, restart_ranks, send):
        ref = self.reference()
        proc = self.start(ranks=ranks)
        send(proc)
        res = self.finish(proc)
        self.assertInOutput("continue with", res.stdout, res, "stdout")
        self.assertEqual(status(self.path("out/run.h5")), "stopped: checkpointed")
        res = self.strata("run", "in.toml", "--restart", ranks=restart_ranks)
        self.assertExit(res, 0)
        self.assertInOutput("restarted from", res.stdout, res, "stdout")
        self.assertEqual(status(self.path("out/run.h5")), "complete")
        self.assertEqual(prices(self.path("out/run.h5")), ref, "restarted run differs from the uninterrupted one")
        return res

    # --- stop and restart -------------------------------------------------------

    def test_restart_counts_the_steps_the_stop_counted(self):
        # Steps sized by time (chunk_paths = 0) start small and grow: a
        # restart that started small again said "step 6 of" thousands where
        # the stop had said a few dozen.
        timed = ("--set", "pricing.chunk_paths=0")
        res = self.strata("run", "in.toml", *timed, env=sc.signal_at(6, signal.SIGTERM))
        self.assertExit(res, 75)
        stopped = sc.stop_line(res.stdout)
        self.assertIsNotNone(stopped, res.describe())
        res = self.strata("run", "in.toml", "--restart", *timed)
        self.assertExit(res, 0)
        restarted = re.search(r"restarted from \S+ \(written by \d+ rank\(s\)\): step (\d+) of (\d+)", res.stdout)
        self.assertIsNotNone(restarted, res.describe())
        self.assertEqual((int(restarted.group(1)), int(restarted.group(2))), (stopped["step"], stopped["steps"]),
                         res.describe())

    def test_sigterm_one_rank_then_restart_equals_uninterrupted(self):
        self.stop_and_restart(None, None, lambda p: p.send_signal(signal.SIGTERM))

    def test_sigterm_three_ranks_then_restart_equals_uninterrupted(self):
        def all_ranks(p):
            for pid in self.rank_pids(p.pid):
                os.kill(pid, signal.SIGTERM)
        self.stop_and_restart(3, 3, all_ranks)

    def test_sigterm_to_one_rank_only_stops_every_rank(self):
        # Rank 2 alone is told; the all-reduce at the step boundary tells the rest.
        self.stop_and_restart(3, 2, lambda p: os.kill(self.rank_pids(p.pid)[-1], signal.SIGTERM))

    def test_sigusr1_through_mpirun_and_restart_on_other_rank_count(self):
        # mpirun forwards SIGUSR1 to its ranks (what Slurm's --signal sends).
        self.stop_and_restart(2, 1, lambda p: p.send_signal(signal.SIGUSR1))

    def test_sigint_and_a_second_signal_during_the_stop(self):
        def twice(p):
            p.send_signal(signal.SIGINT)
            time.sleep(0.01)
            p.send_signal(signal.SIGTERM)
        self.stop_and_restart(None, None, twice)

    def test_max_walltime_checkpoints_and_exits_75(self):
        ref = self.reference()
        # The stop keeps a margin of a step, 1.5 checkpoints (at least a
        # second each before one is measured) and a second: more than 2 s,
        # so the first step boundary stops, on any machine.
        res = self.strata("run", "in.toml", "--max-walltime", "00:00:02")
        self.assertExit(res, 75)
        stopped = sc.stop_line(res.stdout)
        self.assertIsNotNone(stopped, res.describe())
        self.assertEqual((stopped["reason"], stopped["step"], stopped["seconds"]), ("the wall-time limit", 1, None))
        res = self.strata("run", "in.toml", "--restart")
        self.assertExit(res, 0)
        self.assertEqual(prices(self.path("out/run.h5")), ref)

    def test_periodic_checkpoints_keep_the_newest(self):
        ref = self.reference()
        res = self.strata("run", "in.toml", "--set", "checkpoint.every_steps=1", "--set", "checkpoint.keep=3")
        self.assertExit(res, 0)
        names = self.checkpoints()
        self.assertEqual(len(names), 3, names)
        # 16 steps; the last checkpoint is after step 15 (none at the end).
        self.assertEqual(names[-1], "step-000000000015.h5")
        self.assertEqual(prices(self.path("out/run.h5")), ref)

    def test_restart_from_a_given_checkpoint_file(self):
        ref = self.reference()
        self.assertExit(self.strata("run", "in.toml"), 0)
        oldest = os.path.join("out", "run.chk", self.checkpoints()[0])
        res = self.strata("run", "in.toml", "--restart", oldest)
        self.assertExit(res, 0)
        self.assertInOutput("step 12 of 16", res.stdout, res, "stdout")
        self.assertEqual(prices(self.path("out/run.h5")), ref)

    def test_restart_with_more_paths_equals_a_run_of_that_many(self):
        # Run-length keys may change: the kept tree nodes are the same sums.
        more = ["--set", "pricing.paths=5_000_000"]
        ref = self.reference(*more)
        proc = self.start(hold=4)
        proc.send_signal(signal.SIGTERM)
        self.finish(proc, step=4)
        res = self.strata("run", "in.toml", "--restart", *more, ranks=2)
        self.assertExit(res, 0)
        self.assertEqual(prices(self.path("out/run.h5")), ref)

    def test_corrupt_newest_checkpoint_falls_back_to_the_previous(self):
        ref = self.reference()
        proc = self.start(hold=4)
        proc.send_signal(signal.SIGTERM)
        self.finish(proc, step=4)
        names = self.checkpoints()
        self.assertEqual(names, [sc.checkpoint_name(2), sc.checkpoint_name(4)])
        newest = self.path("out", "run.chk", names[-1])
        size = os.path.getsize(newest)
        with open(newest, "r+b") as f:           # truncated mid-write, as a crash leaves it
            f.truncate(size // 2)
        res = self.strata("run", "in.toml", "--restart")
        self.assertExit(res, 0)
        self.assertInOutput("skipping", res.stdout, res, "stdout")
        self.assertInOutput(names[-2], res.stdout, res, "stdout")
        self.assertEqual(prices(self.path("out/run.h5")), ref)

    def test_damaged_state_is_caught_by_the_checksum(self):
        self.assertExit(self.strata("run", "in.toml", "--set", "checkpoint.keep=1"), 0)
        chk = self.path("out", "run.chk", self.checkpoints()[0])
        with h5py.File(chk, "r+") as f:          # a flipped bit in the stored sums
            nodes = f["state/nodes_0"][()]
            nodes[0, 2] = nodes[0, 2] * (1 + 2 ** -40)
            f["state/nodes_0"][...] = nodes
        res = self.strata("run", "in.toml", "--restart")
        self.assertExit(res, 2)
        self.assertInOutput("checksum mismatch", res.stdout, res, "stdout")

    def test_incompatible_restarts_are_refused(self):
        self.assertExit(self.strata("run", "in.toml"), 0)
        cases = [(["--set", "pricing.rate=0.04"], "pricing.rate"),
                 (["--set", "run.seed=6"], "run.seed"),
                 (["--precision", "fp32"], "fp64"),
                 (["--set", "pricing.instrument.0.strike=100.0"], "pricing.instrument.0.strike")]
        for args, needle in cases:
            with self.subTest(args=args):
                res = self.strata("run", "in.toml", "--restart", *args)
                self.assertExit(res, 2)
                self.assertInOutput(needle, res.stderr, res)
        self.assertEqual(status(self.path("out/run.h5")), "complete")

    def test_restart_without_a_checkpoint_is_an_input_error(self):
        res = self.strata("run", "in.toml", "--restart")
        self.assertExit(res, 2)
        self.assertInOutput("no valid checkpoint", res.stderr, res)
        self.assertFalse(os.path.exists(self.path("out", "run.h5")))

    def test_restart_continues_the_output_file(self):
        proc = self.start()
        proc.send_signal(signal.SIGTERM)
        self.finish(proc)
        with h5py.File(self.path("out/run.h5"), "r") as f:
            created = sc.as_str(f.attrs["created"])
        self.assertExit(self.strata("run", "in.toml", "--restart", ranks=2), 0)
        with h5py.File(self.path("out/run.h5"), "r") as f:
            self.assertEqual(sc.as_str(f.attrs["created"]), created)
            self.assertIn("run.chk", sc.as_str(f.attrs["restarted_from"]))
            self.assertEqual(int(f.attrs["ranks"]), 2)
            phases = sc.read_table(f["timers"])["phase"]
            self.assertEqual(len(phases), len(set(phases)))

    # --- health -------------------------------------------------------------------

    def test_injected_nan_fails_loudly(self):
        res = self.strata("run", "in.toml", "--set", "health.every_steps=1",
                          env={"STRATA_TEST_INJECT_NAN": "3:1"}, ranks=2)
        self.assertExit(res, 3)
        st = status(self.path("out/run.h5"))
        self.assertTrue(st.startswith("failed: "), st)
        self.assertIn("at step 3 on rank 1", st)
        self.assertIn("instrument call", st)

    def test_overflowing_spot_fails_instead_of_printing_inf(self):
        res = self.strata("run", "in.toml", "--set", "pricing.asset.0.spot=1e308")
        self.assertExit(res, 3)
        st = status(self.path("out/run.h5"))
        self.assertTrue(st.startswith("failed: non-finite"), st)
        self.assertNotIn("inf ", res.stdout)

    # --- never clobber --------------------------------------------------------------

    def test_existing_output_is_never_replaced_silently(self):
        self.assertExit(self.strata("run", "in.toml"), 0)
        before = prices(self.path("out/run.h5"))
        mtime = os.path.getmtime(self.path("out/run.h5"))
        res = self.strata("run", "in.toml", "--set", "run.seed=9")
        self.assertExit(res, 2)
        for needle in ("out/run.h5", "--overwrite", "run.backup", "-o out/run-2.h5"):
            self.assertInOutput(needle, res.stderr, res)
        self.assertNotIn("--restart", res.stderr)   # a finished run has nothing to continue
        self.assertEqual(os.path.getmtime(self.path("out/run.h5")), mtime)
        self.assertEqual(prices(self.path("out/run.h5")), before)
        # --overwrite replaces it, and drops the replaced run's checkpoints.
        res = self.strata("run", "in.toml", "--set", "run.seed=9", "--overwrite")
        self.assertExit(res, 0)
        self.assertNotEqual(prices(self.path("out/run.h5")), before)

    def test_backup_keeps_numbered_copies(self):
        self.assertExit(self.strata("run", "in.toml"), 0)
        first = prices(self.path("out/run.h5"))
        for n in (1, 2):
            res = self.strata("run", "in.toml", "--set", "run.backup=true", "--set", f"run.seed={n + 10}")
            self.assertExit(res, 0)
            self.assertTrue(os.path.isfile(self.path("out", f"run.~{n}~.h5")), res.describe())
            # The old run's checkpoints go with it, so it can still be continued.
            self.assertTrue(os.path.isdir(self.path("out", f"run.~{n}~.chk")), res.describe())
        self.assertEqual(prices(self.path("out", "run.~1~.h5")), first)

    def test_checkpoints_of_an_earlier_run_are_not_deleted_by_a_fresh_one(self):
        ref = self.reference()
        proc = self.start()
        proc.send_signal(signal.SIGTERM)
        self.finish(proc)
        os.remove(self.path("out/run.h5"))          # the output is lost, the checkpoints are not
        names = self.checkpoints()
        res = self.strata("run", "in.toml")
        self.assertExit(res, 2)
        self.assertInOutput("checkpoints of an earlier run", res.stderr, res)
        self.assertEqual(self.checkpoints(), names)
        res = self.strata("run", "in.toml", "--restart")
        self.assertExit(res, 0)
        self.assertInOutput("writes it anew", res.stdout, res, "stdout")
        self.assertEqual(prices(self.path("out/run.h5")), ref)

    def test_overwrite_refuses_a_file_strata_did_not_write(self):
        self.write("notes.h5", "my notes, not HDF5\n")
        res = self.strata("run", "in.toml", "-o", "notes.h5", "--overwrite")
        self.assertExit(res, 2)
        self.assertInOutput("not an HDF5 file written by strata", res.stderr, res)
        with open(self.path("notes.h5")) as f:
            self.assertEqual(f.read(), "my notes, not HDF5\n")

    # --- resources and input ------------------------------------------------------------

    def test_memory_is_predicted_before_allocation(self):
        # One chunk of 10^15 paths: 114 TiB of lane moments, where the
        # kernels run, on every backend and every machine (10^12, 117 GiB,
        # fits an H200 and does run there; tests/unit/test_memory_plan.cpp
        # checks both backends' plans against given memory sizes).
        args = ["--set", "pricing.paths=1e15", "--set", "pricing.chunk_paths=1e15"]
        for backend, where in (("auto", "(host|device)"), ("host", "host")):
            with self.subTest(backend=backend):
                res = self.strata("run", "in.toml", "--backend", backend, *args)
                self.assertExit(res, 4)
                self.assertRegex(res.stderr, rf"the run needs [0-9.]+ GiB of {where} memory per rank; [0-9.]+ GiB is "
                                             r"(available|free) per rank", res.describe())
                self.assertInOutput("pricing.chunk_paths", res.stderr, res)
                self.assertFalse(os.path.exists(self.path("out", "run.h5")))
        res = self.strata("run", "in.toml", "--dry-run", *args)
        self.assertExit(res, 0)
        self.assertInOutput("memory per rank", res.stdout, res, "stdout")

    def test_bad_walltime_names_the_key(self):
        res = self.strata("run", "in.toml", "--set", "checkpoint.max_walltime=90min")
        self.assertExit(res, 2)
        self.assertInOutput("checkpoint.max_walltime", res.stderr, res)
        res = self.strata("run", "in.toml", "--max-walltime", "1:2")
        self.assertExit(res, 2)
        self.assertInOutput("--max-walltime", res.stderr, res)
        self.assertFalse(os.path.exists(self.path("out", "run.h5")))


if __name__ == "__main__":
    sc.main()
