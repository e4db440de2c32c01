#!/usr/bin/env python3
"""strata sweep: expanding a [sweep] table (grid, zip, ranges), rejecting bad
ones before any point runs, --index, --all in MPI groups, --collect, reruns
that skip done points, a killed sweep resumed, failed points, the plot."""

import csv
import fcntl
import glob
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402


# 3 vols x 4 strikes = 12 points.
GRID = """\
[sweep]
mode = "grid"
"pricing.asset.0.vol" = [0.1, 0.2, 0.3]
"pricing.instrument.0.strike" = { start = 85.0, stop = 115.0, count = 4 }
output_dir = "out/sw"
"""
VOLS = [0.1, 0.2, 0.3]
STRIKES = [85.0, 95.0, 105.0, 115.0]


def session_processes(sid):
    """Pids of the processes in session `sid` (Linux /proc)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":   # after ")": state ppid pgrp session
            pids.append(int(entry))
    return pids


def kill_session(sid, timeout=30):
    """SIGKILL a whole session, as a node failure would. mpirun puts each rank
    in a process group of its own, so killing mpirun's group is not enough."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = session_processes(sid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    raise AssertionError(f"processes of session {sid} survive SIGKILL: {session_processes(sid)}")


# `--list` rows: index, status, then one value per swept key.
ROW = re.compile(r"^(\d+)\s+(pending|running|done|failed)\s+(.*\S)\s*$")


class Sweep(sc.StrataTestCase):

    def sweep_input(self, sweep=GRID, paths=20000, name="sweep.toml"):
        return self.write(name, sc.one_call_input(seed=5, paths=paths, rate=0.03, maturity=0.5) + "\n" + sweep)

    def listed(self, res):
        rows = []
        for line in res.stdout.splitlines():
            m = ROW.match(line)
            if m:
                rows.append((int(m.group(1)), m.group(2), m.group(3).split()))
        return rows

    def point_dirs(self, output_dir="out/sw"):
        return sorted(glob.glob(self.path(output_dir, "point-*")))

    def ok(self, *args, **kw):
        res = self.strata(*args, **kw)
        self.assertExit(res, 0)
        return res

    # --- expansion ------------------------------------------------------------

    def test_grid_list(self):
        self.sweep_input()
        res = self.ok("sweep", "sweep.toml", "--list")
        rows = self.listed(res)
        # Row-major: the first key varies slowest.
        expected = [(i, "pending", [repr(v), repr(k)]) for i, (v, k) in
                    enumerate((v, k) for v in VOLS for k in STRIKES)]
        self.assertEqual(rows, expected, res.describe())
        self.assertIn("pricing.asset.0.vol", res.stdout)
        self.assertEqual(sc.files_under(self.tmp), ["sweep.toml"], "--list wrote files")

    def test_zip_and_ranges(self):
        self.sweep_input("""\
[sweep]
mode = "zip"
"pricing.paths" = { start = 1000, stop = 4000, step = 1000 }
pricing.rate = { start = 0.0, stop = 0.03, count = 4 }
"pricing.instrument.0.option" = ["call", "put", "call", "put"]
output_dir = "out/zip"
""")
        rows = self.listed(self.ok("sweep", "sweep.toml", "--list"))
        self.assertEqual([r[2] for r in rows],
                         [["1000", "0.0", "call"], ["2000", "0.01", "put"],
                          ["3000", "0.02", "call"], ["4000", "0.03", "put"]])
        # A descending step range, and a count of one.
        self.sweep_input("""\
[sweep]
"pricing.instrument.0.strike" = { start = 110.0, stop = 90.0, step = -10.0 }
"pricing.asset.0.vol" = { start = 0.25, stop = 0.5, count = 1 }
output_dir = "out/desc"
""")
        rows = self.listed(self.ok("sweep", "sweep.toml", "--list"))
        self.assertEqual([r[2] for r in rows], [["110.0", "0.25"], ["100.0", "0.25"], ["90.0", "0.25"]])

    def test_bad_sweeps_are_input_errors(self):
        cases = {
            "unknown key": ('"pricing.asset.0.vols" = [0.1]\noutput_dir = "out/x"',
                            ['"pricing.asset.0.vols"', "sweep.toml:", "pricing.asset.N.vol"]),
            "out of range": ('"pricing.asset.0.vol" = [0.1, 7.0]\noutput_dir = "out/x"',
                             ['"pricing.asset.0.vol"', "7.0", "out of range", "sweep.toml:"]),
            "bad mode": ('mode = "cross"\n"pricing.asset.0.vol" = [0.1]\noutput_dir = "out/x"',
                         ["mode", "cross"]),
            "zip lengths": ('mode = "zip"\n"pricing.asset.0.vol" = [0.1, 0.2]\n"pricing.rate" = [0.01]\n'
                            'output_dir = "out/x"', ['"pricing.rate"', "equal length"]),
            "empty list": ('"pricing.asset.0.vol" = []\noutput_dir = "out/x"', ['"pricing.asset.0.vol"', "empty"]),
            "count < 1": ('"pricing.asset.0.vol" = { start = 0.1, stop = 0.2, count = 0 }\noutput_dir = "out/x"',
                          ['"pricing.asset.0.vol"', "count"]),
            "step sign": ('"pricing.asset.0.vol" = { start = 0.1, stop = 0.3, step = -0.1 }\noutput_dir = "out/x"',
                          ['"pricing.asset.0.vol"', "step"]),
            "not dotted": ('"pricing.asset.0.vol" = [0.1]\noutputdir = "out/x"', ["outputdir", "output_dir"]),
            "no output_dir": ('"pricing.asset.0.vol" = [0.1]', ["output_dir"]),
            "model check": ('"pricing.instrument.0.assets" = [["A"], ["B"]]\noutput_dir = "out/x"',
                            ['"pricing.instrument.0.assets"', "B"]),
        }
        for name, (table, needles) in cases.items():
            with self.subTest(case=name):
                self.sweep_input("[sweep]\n" + table + "\n")
                for mode in (["--list"], ["--all"]):
                    res = self.strata("sweep", "sweep.toml", *mode)
                    self.assertExit(res, 2)
                    self.assertInOutput("sweep.toml", res.stderr, res)
                    for needle in needles:
                        self.assertInOutput(needle, res.stderr, res)
                    self.assertFalse(os.path.exists(self.path("out")), f"a directory was made:{res.describe()}")
        # The same checks on 2 ranks: one message, exit 2, nothing run.
        self.sweep_input('[sweep]\n"pricing.asset.0.vol" = [0.1, 7.0]\noutput_dir = "out/x"\n')
        res = self.strata("sweep", "sweep.toml", "--all", ranks=2)
        self.assertExit(res, 2)
        self.assertEqual(res.stderr.count("out of range"), 1, res.describe())
        self.assertFalse(os.path.exists(self.path("out")), res.describe())

    def test_usage_errors(self):
        self.sweep_input()
        for args in ([], ["--list", "--all"], ["--index", "12"], ["--list", "--jobs", "2"]):
            with self.subTest(args=args):
                res = self.strata("sweep", "sweep.toml", *args)
                self.assertExit(res, 2)
        self.write("plain.toml", sc.one_call_input(seed=5, paths=1000, rate=0.03, maturity=0.5))
        res = self.strata("sweep", "plain.toml", "--list")
        self.assertExit(res, 2)
        self.assertInOutput("[sweep]", res.stderr, res)

    def test_run_rejects_a_sweep_input(self):
        self.sweep_input()
        res = self.strata("run", "sweep.toml")
        self.assertExit(res, 2)
        self.assertInOutput("strata sweep", res.stderr, res)
        self.assertInOutput("sweep.toml:", res.stderr, res)
        self.assertEqual(sc.files_under(self.tmp), ["sweep.toml"], res.describe())

    # --- running ----------------------------------------------------------------

    def test_index_runs_one_point(self):
        self.sweep_input()
        res = self.ok("sweep", "sweep.toml", "--index", "6")
        self.assertEqual([os.path.basename(d) for d in self.point_dirs()], ["point-0006"], res.describe())
        point = self.path("out/sw/point-0006")
        self.assertEqual(sorted(os.listdir(point)), ["done", "input.toml", "lock", "log", "output.h5"])
        with h5py.File(os.path.join(point, "output.h5"), "r") as f:
            self.assertEqual(sc.as_str(f.attrs["status"]), "complete")
            cfg = tomllib.loads(sc.read_config_text(f))
        self.assertEqual(cfg["pricing"]["asset"][0]["vol"], VOLS[6 // 4])
        self.assertEqual(cfg["pricing"]["instrument"][0]["strike"], STRIKES[6 % 4])
        with open(os.path.join(point, "input.toml"), "rb") as f:
            self.assertEqual(tomllib.load(f)["pricing"], cfg["pricing"])
        with open(os.path.join(point, "log"), encoding="utf-8") as f:
            self.assertIn("probe_call", f.read())
        rows = self.listed(self.ok("sweep", "sweep.toml", "--list"))
        self.assertEqual([r[0] for r in rows if r[1] == "done"], [6])
        # A done point is not run again.
        mtime = os.stat(os.path.join(point, "output.h5")).st_mtime_ns
        res = self.ok("sweep", "sweep.toml", "--index", "6")
        self.assertIn("done", res.stdout, res.describe())
        self.assertEqual(os.stat(os.path.join(point, "output.h5")).st_mtime_ns, mtime)

    def test_all_in_groups_then_collect(self):
        self.sweep_input()
        res = self.strata("sweep", "sweep.toml", "--all", "--ranks-per-point", "2", ranks=4)
        self.assertExit(res, 0)
        dirs = self.point_dirs()
        self.assertEqual(len(dirs), 12, res.describe())
        for d in dirs:
            self.assertTrue(os.path.exists(os.path.join(d, "done")), d)
            with h5py.File(os.path.join(d, "output.h5"), "r") as f:
                self.assertEqual(int(f.attrs["ranks"]), 2, d)   # a group of 2, not the world of 4
        status = self.ok("sweep", "sweep.toml", "--status")
        self.assertRegex(status.stdout, r"12 done, 0 running, 0 failed, 0 pending", status.describe())

        col = self.strata("sweep", "sweep.toml", "--collect", "summary.h5", ranks=2)
        self.assertExit(col, 0)
        expected = [(v, k) for v in VOLS for k in STRIKES]
        with h5py.File(self.path("summary.h5"), "r") as f:
            table = sc.read_table(f["summary"])
        self.assertEqual(list(table["index"]), list(range(12)))
        self.assertEqual(list(zip(table["pricing.asset.0.vol"], table["pricing.instrument.0.strike"])), expected)
        self.assertEqual(set(table["status"]), {"done"})
        with open(self.path("summary.csv"), newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 12)
        self.assertEqual([(float(r["pricing.asset.0.vol"]), float(r["pricing.instrument.0.strike"]))
                          for r in rows], expected)
        for name in ("pricing.probe_call.price", "pricing.probe_call.stderr", "performance.compute_seconds"):
            self.assertIn(name, rows[0], f"no column {name}")
        self.assertNotIn("config", " ".join(rows[0]))
        for i, r in enumerate(rows):
            with h5py.File(self.path(f"out/sw/point-{i:04d}/output.h5"), "r") as f:
                price = f["pricing/probe_call/price"][()]
            self.assertEqual(sc.bits(float(r["pricing.probe_call.price"])), sc.bits(price))
            self.assertEqual(sc.bits(table["pricing.probe_call.price"][i]), sc.bits(price))
        # Prices rise with vol at every strike (a cheap sanity check of the mapping).
        price = {(float(r["pricing.asset.0.vol"]), float(r["pricing.instrument.0.strike"])):
                 float(r["pricing.probe_call.price"]) for r in rows}
        for k in STRIKES:
            self.assertLess(price[(0.1, k)], price[(0.3, k)])

        # A point's prices are bitwise those of a plain run of its input.
        ref = self.ok("run", "out/sw/point-0007/input.toml", "-o", "ref.h5")
        with h5py.File(self.path("ref.h5"), "r") as a, h5py.File(self.path("out/sw/point-0007/output.h5"), "r") as b:
            self.assertEqual(sc.result_bits(a), sc.result_bits(b), ref.describe())

        # A rerun skips every done point: markers and outputs untouched.
        before = {d: (os.stat(os.path.join(d, "done")).st_mtime_ns,
                      os.stat(os.path.join(d, "log")).st_mtime_ns) for d in dirs}
        with h5py.File(self.path("out/sw/point-0003/output.h5"), "r") as f:
            created = sc.as_str(f.attrs["created"])
        res = self.strata("sweep", "sweep.toml", "--all", ranks=2)
        self.assertExit(res, 0)
        self.assertIn("0 point(s) run now", res.stdout, res.describe())
        after = {d: (os.stat(os.path.join(d, "done")).st_mtime_ns,
                     os.stat(os.path.join(d, "log")).st_mtime_ns) for d in dirs}
        self.assertEqual(before, after)
        with h5py.File(self.path("out/sw/point-0003/output.h5"), "r") as f:
            self.assertEqual(sc.as_str(f.attrs["created"]), created)

    def test_failed_points_reported_not_retried(self):
        self.sweep_input()
        # An output path that is a directory: point 5 cannot write its output.
        os.makedirs(self.path("out/sw/point-0005/output.h5"))
        res = self.strata("sweep", "sweep.toml", "--all", ranks=2)
        self.assertExit(res, 3)
        self.assertIn("point-0005", res.stderr, res.describe())
        failed = self.path("out/sw/point-0005/failed")
        self.assertTrue(os.path.exists(failed), res.describe())
        self.assertFalse(os.path.exists(self.path("out/sw/point-0005/done")))
        status = self.ok("sweep", "sweep.toml", "--status")
        self.assertRegex(status.stdout, r"11 done, 0 running, 1 failed, 0 pending", status.describe())
        self.assertRegex(status.stdout, r"point-0005 .*is a directory", status.describe())
        # Not retried without --retry-failed.
        mtime = os.stat(failed).st_mtime_ns
        res = self.strata("sweep", "sweep.toml", "--all")
        self.assertExit(res, 3)
        self.assertIn("0 point(s) run now", res.stdout, res.describe())
        self.assertEqual(os.stat(failed).st_mtime_ns, mtime)
        # --index runs the point it is asked for and exits with its code.
        res = self.strata("sweep", "sweep.toml", "--index", "5")
        self.assertExit(res, 2)
        self.assertIn("is a directory", res.stderr, res.describe())
        # Fixed and retried, the sweep completes.
        os.rmdir(self.path("out/sw/point-0005/output.h5"))
        res = self.strata("sweep", "sweep.toml", "--all", "--retry-failed")
        self.assertExit(res, 0)
        self.assertIn("1 point(s) run now", res.stdout, res.describe())
        self.assertFalse(os.path.exists(failed))
        self.assertTrue(os.path.exists(self.path("out/sw/point-0005/done")))
        # The collected row of a failed point (none now) would be NaN; a
        # pending one is: remove a done marker and collect.
        os.remove(self.path("out/sw/point-0000/done"))
        self.ok("sweep", "sweep.toml", "--collect", "s.h5")
        with open(self.path("s.csv"), newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(rows[0]["status"], "pending")
        self.assertEqual(rows[0]["pricing.probe_call.price"].lower(), "nan")
        self.assertNotEqual(rows[1]["pricing.probe_call.price"].lower(), "nan")

    def test_running_point_is_left_alone(self):
        # Another process holds point 2's lock, as a running sweep would.
        self.sweep_input()
        os.makedirs(self.path("out/sw/point-0002"))
        with open(self.path("out/sw/point-0002/lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            status = self.ok("sweep", "sweep.toml", "--status")
            self.assertRegex(status.stdout, r"0 done, 1 running, 0 failed, 11 pending", status.describe())
            res = self.strata("sweep", "sweep.toml", "--index", "2")
            self.assertExit(res, 75)
            self.assertIn("another process", res.stderr, res.describe())
            # --all runs the rest and says the sweep is not finished yet.
            res = self.strata("sweep", "sweep.toml", "--all")
            self.assertExit(res, 75)
            self.assertIn("11 point(s) run now", res.stdout, res.describe())
            self.assertEqual(sorted(os.listdir(self.path("out/sw/point-0002"))), ["lock"])
        # Released (the process ended): the point is pending, and runs.
        status = self.ok("sweep", "sweep.toml", "--status")
        self.assertRegex(status.stdout, r"11 done, 0 running, 0 failed, 1 pending", status.describe())
        res = self.ok("sweep", "sweep.toml", "--all")
        self.assertIn("1 point(s) run now", res.stdout, res.describe())

    def test_killed_sweep_resumes(self):
        # 6 points on 2 ranks (groups of one). Points 0 and 1 are done
        # first; then `--all` takes points 2 and 3, which are held after
        # step 3 and its checkpoint (the test switch) until the whole
        # session is killed with SIGKILL, as a node failure would: mid-way,
        # whatever the machine's speed.
        self.sweep_input('[sweep]\n"pricing.asset.0.vol" = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35]\n'
                         'output_dir = "out/sw"\n', paths=400_000)
        args = ["sweep", "sweep.toml", "--set", "pricing.chunk_paths=50000", "--set", "checkpoint.every_steps=3"]
        for index in ("0", "1"):
            self.ok(*args, "--index", index)
        cmd = sc.strata_command([*args, "--all"], ranks=2)
        proc = subprocess.Popen(cmd, cwd=self.tmp, env=sc.child_env(sc.hold_at(3)), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        held = self.path("out/sw/point-000[2-5]/output.chk", sc.checkpoint_name(3))
        deadline = time.monotonic() + sc.TIMEOUT_S
        try:
            while len(glob.glob(held)) < 2:
                if proc.poll() is not None or time.monotonic() > deadline:
                    self.fail(f"points 2 and 3 did not reach step 3 (exit {proc.poll()})")
                time.sleep(0.05)
        finally:
            kill_session(proc.pid)
            proc.communicate()
        killed = sorted(os.path.dirname(os.path.dirname(c)) for c in glob.glob(held))
        self.assertEqual([os.path.basename(d) for d in killed], ["point-0002", "point-0003"])
        done_before = {os.path.dirname(d): os.stat(d).st_mtime_ns for d in glob.glob(self.path("out/sw/point-*/done"))}
        self.assertEqual(len(done_before), 2, sorted(done_before))
        status = self.ok("sweep", "sweep.toml", "--status")
        # No point is left "running": the locks died with the processes.
        self.assertRegex(status.stdout, r"2 done, 0 running, 0 failed, 4 pending", status.describe())
        res = self.strata(*args, "--all", ranks=2)
        self.assertExit(res, 0)
        self.assertIn("4 point(s) run now", res.stdout, res.describe())
        for d in self.point_dirs():
            self.assertTrue(os.path.exists(os.path.join(d, "done")), d)
            with h5py.File(os.path.join(d, "output.h5"), "r") as f:
                self.assertEqual(sc.as_str(f.attrs["status"]), "complete", d)
        for d in killed:
            with open(os.path.join(d, "log"), encoding="utf-8") as f:
                self.assertIn("restarted from", f.read(), d)
        for d, mtime in done_before.items():
            self.assertEqual(os.stat(os.path.join(d, "done")).st_mtime_ns, mtime, f"{d} was run again")
            with open(os.path.join(d, "log"), encoding="utf-8") as f:
                self.assertEqual(f.read().count("== strata sweep:"), 1, f"{d} was run again")

    def test_signalled_sweep_resumes_points_from_their_checkpoints(self):
        # 4 points, a checkpoint after every step, on 2 ranks (groups of
        # one); points 0 and 1 are held after step 3 until SIGUSR1 (mpirun
        # forwards it) reaches them, so both stop there on any machine.
        self.sweep_input('[checkpoint]\nevery_steps = 1\nevery_seconds = 0\n\n'
                         '[sweep]\n"pricing.asset.0.vol" = [0.1, 0.2, 0.3, 0.4]\n'
                         'output_dir = "out/sw"\n', paths=400_000)
        args = ["sweep", "sweep.toml", "--all", "--set", "pricing.chunk_paths=50000"]
        cmd = sc.strata_command(args, ranks=2)
        proc = subprocess.Popen(cmd, cwd=self.tmp, env=sc.child_env(sc.hold_at(3)),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        held = self.path("out/sw/point-*/output.chk", sc.checkpoint_name(3))
        deadline = time.monotonic() + sc.TIMEOUT_S
        while len(glob.glob(held)) < 2:
            if proc.poll() is not None or time.monotonic() > deadline:
                kill_session(proc.pid)
                self.fail(f"points 0 and 1 did not reach step 3 (exit {proc.returncode})")
            time.sleep(0.05)
        proc.send_signal(signal.SIGUSR1)
        res = sc.finish(self, proc)
        self.assertExit(res, 75)
        self.assertIn("stopped after a checkpoint", res.stdout, res.describe())
        interrupted = sorted(os.path.dirname(os.path.dirname(c)) for c in glob.glob(held))
        self.assertEqual([os.path.basename(d) for d in interrupted], ["point-0000", "point-0001"])
        for d in interrupted:
            self.assertFalse(os.path.exists(os.path.join(d, "done")), d)
            self.assertFalse(glob.glob(os.path.join(d, "output.chk", sc.checkpoint_name(4))), f"{d} went past step 3")
        self.assertFalse(glob.glob(self.path("out/sw/point-000[23]/output.h5")), "the sweep went on after the signal")

        res = self.strata(*args, ranks=2)
        self.assertExit(res, 0)
        for d in interrupted:
            with open(os.path.join(d, "log"), encoding="utf-8") as f:
                self.assertIn("restarted from", f.read(), d)
        # Every point, resumed or not, has the bits of a plain run of its input.
        for d in self.point_dirs():
            fresh = os.path.join(d, "fresh.h5")
            self.assertExit(self.strata("run", os.path.join(d, "input.toml"), "-o", fresh), 0)
            with h5py.File(os.path.join(d, "output.h5"), "r") as a, h5py.File(fresh, "r") as b:
                self.assertEqual(sc.result_bits(a), sc.result_bits(b), d)

    # --- the example and the plot -----------------------------------------------

    def test_example_sweep_input(self):
        example = os.path.join(sc.SOURCE_DIR, "inputs", "sweeps", "pricing_vol_strike.toml")
        rows = self.listed(self.ok("sweep", example, "--list"))
        self.assertGreaterEqual(len(rows), 12)
        self.assertEqual({r[1] for r in rows}, {"pending"})

    def test_plot_script(self):
        if importlib.util.find_spec("matplotlib") is None:
            self.skipTest("matplotlib missing (Debian: python3-matplotlib)")
        self.sweep_input()
        self.ok("sweep", "sweep.toml", "--all", ranks=2)
        self.ok("sweep", "sweep.toml", "--collect", "summary.h5")
        script = os.path.join(sc.SOURCE_DIR, "scripts", "plot", "sweep.py")
        for extra in ([], ["--x", "pricing.instrument.0.strike", "--y", "pricing.asset.0.vol",
                           "--value", "pricing.probe_call.stderr"]):
            with self.subTest(args=extra):
                res = sc.run_command([sys.executable, script, "summary.csv", *extra, "-o", "png"],
                                     self.tmp, env={"MPLBACKEND": None})
                self.assertExit(res, 0)
                # -o names a folder: DIR/<stem>_<value>.png
                written = glob.glob(self.path("png", "summary_*.png"))
                self.assertEqual(len(written), 1, res.describe())
                with open(written[0], "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", res.describe())
                shutil.rmtree(self.path("png"))
        res = sc.run_command([sys.executable, script, "summary.csv", "--value", "nosuch"], self.tmp)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("nosuch", res.stderr)


if __name__ == "__main__":
    sc.main()
