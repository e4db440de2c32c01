#!/usr/bin/env python3
"""Every command strata suggests works when pasted.

Each test provokes a message that suggests commands (run again into a new
file, continue a stopped run, a misspelt model), takes the suggested
commands from strata's output exactly as printed and runs them with a shell
in the same working directory, as a user would paste them; each must
succeed. strata is run as `strata` from PATH, as a user runs it, so the
commands it prints start with `strata` too. Also here: an input entry named
instead of numbered in --set, and scripts/run (Open MPI's banners after
strata's own error, a moved or copied checkout's build folder).
"""

import os
import shutil
import signal
import subprocess
import sys
import tomllib
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

# 8 chunks of 98_304 paths: 8 steps on one rank (4 on two), a checkpoint
# per step with --set checkpoint.every_steps=1, about a second in all.
INPUT = """\
[run]
model = "pricing"
seed = 5
output = "out/run.h5"

[pricing]
paths = 786_432
rate = 0.03
chunk_paths = 98_304

[checkpoint]
every_steps = 0
every_seconds = 0

[[pricing.asset]]
name = "A"
spot = 100.0
vol = 0.25

[[pricing.instrument]]
name = "call"
option = "call"
strike = 105.0
maturity = 1.0
assets = ["A"]

[[pricing.instrument]]
name = "put"
option = "put"
strike = 95.0
maturity = 0.5
assets = ["A"]
"""

# A run signalled from outside is held after its first step (and its
# checkpoint) until the signal comes, so it is mid-run on any machine.
HOLD = sc.hold_at(1)

# Open MPI's banners that must not follow strata's own one-line error.
BANNER_WORDS = ("Primary job", "mpirun detected", "mpiexec detected", "MPI_ABORT was invoked", "------")


def prices(path):
    with h5py.File(path, "r") as f:
        return sc.result_bits(f)


def status(path):
    with h5py.File(path, "r") as f:
        return sc.as_str(f.attrs["status"])


class Hints(sc.StrataTestCase):

    def setUp(self):
        super().setUp()
        self.write("in.toml", INPUT)
        # `strata` on PATH, as a user runs it.
        bindir = os.path.join(self.tmp, ".bin")
        os.mkdir(bindir)
        os.symlink(sc.STRATA_BIN, os.path.join(bindir, "strata"))
        self.env = {"PATH": bindir + os.pathsep + os.environ.get("PATH", "")}

    def run_strata(self, *args, ranks=None, env=None):
        cmd = ["strata", *args]
        if ranks is not None:
            cmd = [sc.MPIEXEC, *sc.MPIEXEC_FLAGS, "-np", str(ranks), *cmd]
        return sc.run_command(cmd, self.tmp, env={**self.env, **(env or {})})

    def paste(self, command):
        """Runs a suggested command as a user pasting it would."""
        return sc.run_command(["bash", "-c", command], self.tmp, env=self.env)

    def suggestions(self, res, start="strata "):
        """The commands a message suggests: its lines indented by two spaces
        that begin with `start`, as printed."""
        found = [line[2:] for line in (res.stdout + res.stderr).splitlines()
                 if line.startswith("  " + start)]
        if not found:
            self.fail(f"no suggested command starting with {start!r}:{res.describe()}")
        return found

    # --- a finished run, run again -------------------------------------------------

    def test_rerun_of_a_finished_run_suggests_a_new_file_overwrite_and_backup(self):
        # A value with quotes and brackets: the suggestions quote it for the shell.
        args = ("run", "in.toml", "-o", "out/a.h5", "--set", "run.seed=7", "--set", 'pricing.greeks=["delta"]')
        self.assertExit(self.run_strata(*args), 0)
        first = prices(self.path("out/a.h5"))
        res = self.run_strata(*args)
        self.assertExit(res, 2)
        self.assertInOutput("finished run", res.stderr, res)
        hints = self.suggestions(res)
        # A finished run has nothing to continue: no --restart among the ways.
        self.assertFalse(any("--restart" in h for h in hints), res.describe())
        new_file = [h for h in hints if "out/a-2.h5" in h]
        self.assertEqual(len(new_file), 1, res.describe())
        for hint in hints:
            with self.subTest(hint=hint):
                done = self.paste(hint)
                self.assertExit(done, 0)
        # The new file is the same run (the --set was kept), and so is the backup.
        self.assertEqual(prices(self.path("out/a-2.h5")), first)
        self.assertEqual(prices(self.path("out/a.~1~.h5")), first)

    def test_backup_hint_replaces_a_backup_setting_given(self):
        args = ("run", "in.toml", "-o", "out/b.h5", "--set", "run.backup=false")
        self.assertExit(self.run_strata(*args), 0)
        res = self.run_strata(*args)
        self.assertExit(res, 2)
        backup = [h for h in self.suggestions(res) if "run.backup=true" in h]
        self.assertEqual(len(backup), 1, res.describe())
        self.assertNotIn("run.backup=false", backup[0])
        self.assertExit(self.paste(backup[0]), 0)
        self.assertEqual(status(self.path("out/b.~1~.h5")), "complete")

    def test_restart_of_a_finished_run_says_so_and_suggests_a_new_file(self):
        self.assertExit(self.run_strata("run", "in.toml"), 0)
        res = self.run_strata("run", "in.toml", "--restart")
        self.assertExit(res, 2)
        self.assertInOutput("nothing to continue", res.stderr, res)
        self.assertNotIn("run without --restart", res.stderr)
        hints = self.suggestions(res)
        self.assertFalse(any("--restart" in h for h in hints), res.describe())
        new_file = [h for h in hints if " -o " in h]
        self.assertEqual(len(new_file), 1, res.describe())
        self.assertExit(self.paste(new_file[0]), 0)
        self.assertEqual(status(self.path("out/run-2.h5")), "complete")

    # --- a run stopped by a signal ---------------------------------------------------

    def test_continue_command_after_a_signal_keeps_the_runs_options(self):
        ref = self.run_strata("run", "in.toml", "-o", "ref.h5", "--set", "run.seed=11")
        self.assertExit(ref, 0)
        args = ["run", "in.toml", "-o", "out/sig.h5", "--set", "run.seed=11", "--set", "checkpoint.every_steps=1"]
        cmd = [sc.MPIEXEC, *sc.MPIEXEC_FLAGS, "-np", "2", "strata", *args]
        proc = subprocess.Popen(cmd, cwd=self.tmp, env=sc.child_env({**self.env, **HOLD}),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        stopped = self.stop_at_first_checkpoint(proc, "out/sig.chk")
        self.assertExit(stopped, 75)
        self.assertInOutput("continue with", stopped.stdout, stopped, "stdout")
        hints = self.suggestions(stopped, start="mpirun -np 2 ")
        self.assertEqual(len(hints), 1, stopped.describe())
        for option in ("-o out/sig.h5", "--set run.seed=11", "--set checkpoint.every_steps=1", "--restart"):
            self.assertIn(option, hints[0])
        # Run again as first typed, the stopped run is in the way: --restart
        # is among the ways out now, the same command as "continue with".
        again = sc.run_command(cmd, self.tmp, env=self.env)
        self.assertExit(again, 2)
        self.assertInOutput("unfinished run", again.stderr, again)
        self.assertIn(hints[0], self.suggestions(again, start="mpirun -np 2 "))
        res = self.paste(hints[0])
        self.assertExit(res, 0)
        self.assertInOutput("restarted from", res.stdout, res, "stdout")
        self.assertEqual(prices(self.path("out/sig.h5")), prices(self.path("ref.h5")))

    def test_stop_during_set_up_suggests_the_command_to_run_again(self):
        # A stop before the first step has no checkpoint to continue from:
        # the suggestion is the same run again, over the stopped file.
        self.write("md.toml", '[run]\nmodel = "md"\n\n[md]\ncells = [4, 4, 4]\nsteps = 5\n')
        res = self.run_strata("run", "md.toml", "-o", "out/md.h5", "--set", "md.temperature=1.5",
                              env=sc.signal_at("setup", signal.SIGTERM))
        self.assertExit(res, 75)
        self.assertInOutput("during the initial atoms", res.stderr, res)
        hints = self.suggestions(res)
        self.assertEqual(len(hints), 1, res.describe())
        self.assertIn("--set md.temperature=1.5", hints[0])
        self.assertExit(self.paste(hints[0]), 0)
        self.assertEqual(status(self.path("out/md.h5")), "complete")

    def stop_at_first_checkpoint(self, proc, chk):
        """Sends SIGUSR1 to proc (held, HOLD) once `chk` holds the first
        step's checkpoint (mpirun passes it on; SIGTERM it would answer by
        killing the ranks); returns the Result."""
        sc.wait_for_path(self, proc, self.path(chk, sc.checkpoint_name(1)))
        proc.send_signal(signal.SIGUSR1)
        return sc.finish(self, proc, "the run sent SIGUSR1")

    # --- the command line -----------------------------------------------------------

    def test_restart_before_the_input_takes_it_as_the_input(self):
        res = self.run_strata("run", "--restart", "in.toml", "-o", "out/r.h5")
        self.assertExit(res, 2)
        self.assertInOutput("no valid checkpoint of out/r.h5", res.stderr, res)
        self.assertNotIn("INPUT is required", res.stderr)
        hints = self.suggestions(res)
        self.assertEqual(hints, ["strata run in.toml -o out/r.h5"])
        self.assertExit(self.paste(hints[0]), 0)
        # With a checkpoint file as well, a .toml given to --restart is refused.
        res = self.run_strata("run", "--restart", "other.toml", "in.toml")
        self.assertExit(res, 2)
        self.assertInOutput("a checkpoint is an HDF5 file", res.stderr, res)

    def test_misspelt_model_suggests_the_command(self):
        res = self.run_strata("models", "pricng")
        self.assertExit(res, 2)
        self.assertInOutput("did you mean 'pricing'", res.stderr, res)
        hints = self.suggestions(res)
        self.assertEqual(hints, ["strata models pricing"])
        done = self.paste(hints[0])
        self.assertExit(done, 0)
        self.assertTrue(done.stdout.startswith("pricing:"), done.describe())

    # --- entries by name ------------------------------------------------------------

    def test_set_accepts_an_entrys_name_as_its_number(self):
        self.assertExit(self.run_strata("run", "in.toml", "-o", "by_number.h5", "--set", "pricing.asset.0.vol=0.3",
                                        "--set", "pricing.instrument.1.strike=90"), 0)
        self.assertExit(self.run_strata("run", "in.toml", "-o", "by_name.h5", "--set", "pricing.asset.A.vol=0.3",
                                        "--set", "pricing.instrument.put.strike=90"), 0)
        self.assertEqual(prices(self.path("by_name.h5")), prices(self.path("by_number.h5")))
        with h5py.File(self.path("by_name.h5"), "r") as a, h5py.File(self.path("by_number.h5"), "r") as b:
            self.assertEqual(sc.read_config_text(a).replace("by_name", "X"),
                             sc.read_config_text(b).replace("by_number", "X"))
        res = self.run_strata("run", "in.toml", "--set", "pricing.asset.SPX.vol=0.3")
        self.assertExit(res, 2)
        for needle in ("pricing.asset.SPX", "named 'SPX'", "A"):
            self.assertInOutput(needle, res.stderr, res)
        # A value out of range by name is reported like one by number.
        res = self.run_strata("run", "in.toml", "--set", "pricing.asset.A.vol=-1")
        self.assertExit(res, 2)
        self.assertInOutput("pricing.asset.0.vol", res.stderr, res)
        self.assertInOutput("--set pricing.asset.A.vol=-1", res.stderr, res)

    def test_sweep_accepts_an_entrys_name(self):
        self.write("sweep.toml", INPUT + '\n[sweep]\n"pricing.asset.A.vol" = [0.2, 0.3]\noutput_dir = "out/sw"\n')
        res = self.run_strata("sweep", "sweep.toml", "--list")
        self.assertExit(res, 0)
        self.assertInOutput("pricing.asset.A.vol", res.stdout, res, "stdout")
        self.assertExit(self.run_strata("sweep", "sweep.toml", "--index", "1"), 0)
        with h5py.File(self.path("out/sw/point-0001/output.h5"), "r") as f:
            config = tomllib.loads(sc.read_config_text(f))
        self.assertEqual(config["pricing"]["asset"][0]["vol"], 0.3)

    # --- scripts/run ----------------------------------------------------------------

    def lib_sh(self, script):
        """Runs bash with scripts/lib.sh sourced."""
        lib = os.path.join(sc.SOURCE_DIR, "scripts", "lib.sh")
        return sc.run_command(["bash", "-c", f'source "{lib}"; {script}'], self.tmp,
                              env={**self.env, "STRATA_BIN": sc.STRATA_BIN})

    def assertNoBannerAfter(self, line, res):
        err = res.stderr
        self.assertInOutput(line, err, res)
        after = err[err.index(line) + len(line):]
        for word in BANNER_WORDS:
            self.assertNotIn(word, after, res.describe())

    def test_scripts_run_launch_leaves_stratas_error_last(self):
        res = self.lib_sh('strata_mpi_env; strata_run_mpi 2 "$STRATA_BIN" run missing.toml')
        self.assertExit(res, 2)
        self.assertNoBannerAfter("missing.toml: cannot open input file", res)

    def test_scripts_run_passes_a_stop_signal_on_and_prints_the_continue_command(self):
        # What scripts/run does after building: strata_run_mpi, SIGUSR1 to it.
        lib = os.path.join(sc.SOURCE_DIR, "scripts", "lib.sh")
        script = (f'source "{lib}"; strata_mpi_env; export STRATA_RUN_COMMAND=scripts/run; '
                  f'strata_run_mpi 2 "{sc.STRATA_BIN}" run in.toml --set checkpoint.every_steps=1')
        proc = subprocess.Popen(["bash", "-c", script], cwd=self.tmp, env=sc.child_env({**self.env, **HOLD}),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        res = self.stop_at_first_checkpoint(proc, "out/run.chk")
        self.assertExit(res, 75)
        self.assertEqual(self.suggestions(res, start="scripts/run "),
                         ["scripts/run in.toml --set checkpoint.every_steps=1 --restart"])

    def test_banner_filter_keeps_what_strata_did_not_say(self):
        rule = "-" * 74
        abort = (f"strata: rank 1: error: disk full\n{rule}\nMPI_ABORT was invoked on rank 1 in communicator "
                 f"MPI_COMM_WORLD\nwith errorcode 4.\n\nNOTE: invoking MPI_ABORT causes Open MPI to kill all MPI "
                 f"processes.\n{rule}\n[vm:1] 1 more process has sent help message help-mpi-api.txt / mpi-abort\n"
                 f'[vm:1] Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error messages\n')
        crash = f"{rule}\nmpirun noticed that process rank 1 with PID 0 on node vm exited on signal 11.\n{rule}\n"
        self.write("abort.txt", abort)
        self.write("crash.txt", crash)
        res = self.lib_sh("strata_quiet_mpi_banners < abort.txt; strata_quiet_mpi_banners < crash.txt")
        self.assertExit(res, 0)
        self.assertEqual(res.stdout, "strata: rank 1: error: disk full\n" + crash)

    def fake_checkout(self, name):
        """A checkout with the real scripts/run and scripts/lib.sh whose
        CMake project builds a stand-in `strata`: it prints the source tree
        it was configured from (as a strata error) and the command prefix
        scripts/run gave it, and exits 2 like a bad input."""
        root = self.path(name)
        os.makedirs(os.path.join(root, "scripts"))
        for script in ("run", "lib.sh"):
            shutil.copy2(os.path.join(sc.SOURCE_DIR, "scripts", script), os.path.join(root, "scripts", script))
        with open(os.path.join(root, "CMakeLists.txt"), "w") as f:
            f.write('cmake_minimum_required(VERSION 3.16)\nproject(fake NONE)\n'
                    'set(STRATA_CUDA OFF CACHE STRING "")\n'
                    'configure_file(strata.in gen/strata @ONLY)\n'
                    'file(COPY ${CMAKE_BINARY_DIR}/gen/strata DESTINATION ${CMAKE_BINARY_DIR}\n'
                    '     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)\n')
        with open(os.path.join(root, "strata.in"), "w") as f:
            f.write('#!/bin/sh\nif [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then\n'
                    '  echo "prefix: $STRATA_RUN_COMMAND"\n'
                    '  echo "strata: input error: built from @CMAKE_SOURCE_DIR@" >&2\nfi\nexit 2\n')
        return root

    def scripts_run(self, root, extra_env=None):
        env = {"STRATA_CUDA": "OFF", "STRATA_NO_APT": "1", "STRATA_BUILD_DIR": None, **(extra_env or {})}
        return sc.run_command([os.path.join(root, "scripts", "run"), "in.toml"], self.tmp, env={**self.env, **env})

    def test_scripts_run_in_a_copied_checkout_builds_that_checkout(self):
        first = self.fake_checkout("first")
        res = self.scripts_run(first)
        self.assertExit(res, 2)
        self.assertNoBannerAfter(f"built from {first}", res)
        self.assertInOutput(f"prefix: {os.path.join(first, 'scripts', 'run')}", res.stdout, res, "stdout")
        copy = self.path("copy")
        shutil.copytree(first, copy, symlinks=True)
        res = self.scripts_run(copy)
        self.assertExit(res, 2)
        self.assertInOutput(f"configured for the source tree at {first}", res.stderr, res)
        self.assertInOutput("reconfiguring", res.stderr, res)
        self.assertNoBannerAfter(f"built from {copy}", res)
        # Another checkout's build folder, named in STRATA_BUILD_DIR, is left alone.
        res = self.scripts_run(copy, {"STRATA_BUILD_DIR": os.path.join(first, "build")})
        self.assertExit(res, 2)
        self.assertInOutput(f"the build folder of the checkout at {first}", res.stderr, res)
        self.assertNotIn("built from", res.stderr)


if __name__ == "__main__":
    unittest.main()
