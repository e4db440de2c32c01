#!/usr/bin/env python3
"""`cmake --install` of the build under test, into a temporary prefix, as a
cluster admin installs strata for a module:

- the files land in GNUInstallDirs paths (bin/, share/strata/, the bash
  completion and the man page), and no test or developer script does;
- the installed binary runs the installed quickstart from another
  directory, and the installed Slurm job script finds the installed binary;
- the installed completion script, sourced in bash and driven through
  COMP_WORDS/COMP_CWORD, completes commands, input files and --set keys,
  and is what `strata completion bash` prints;
- `strata help [COMMAND]` and `--help-all` explain the commands, and the
  man page renders without warnings.
"""

import os
import shlex
import shutil
import stat
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

BUILD_DIR = os.path.dirname(sc.STRATA_BIN)
SHARE = os.path.join("share", "strata")
COMPLETION = os.path.join("share", "bash-completion", "completions", "strata")
MAN_PAGE = os.path.join("share", "man", "man1", "strata.1")


def configured_help2man():
    """Whether the build under test found help2man (and so makes the man page)."""
    try:
        with open(os.path.join(BUILD_DIR, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("STRATA_HELP2MAN:"):
                    return not line.rstrip().endswith("NOTFOUND")
    except OSError:
        pass
    return False


COMMANDS = ("run", "sweep", "models", "doctor", "validate", "help", "completion")


class Install(sc.StrataTestCase):
    """Installs once; each test, in its own temporary directory (self.tmp),
    reads the installed tree or runs from it."""

    @classmethod
    def setUpClass(cls):
        if not os.path.isfile(os.path.join(BUILD_DIR, "cmake_install.cmake")):
            # A build folder carried to another machine without its CMake files.
            raise unittest.SkipTest(f"{BUILD_DIR} has no cmake_install.cmake: not a build folder to install from")
        cls.root = sc.make_tmpdir("install")
        cls.prefix = os.path.join(cls.root, "prefix")
        cmake = shutil.which("cmake")
        if not cmake:
            raise AssertionError("no cmake on PATH (Debian: cmake)")
        cls.install = sc.run_command([cmake, "--install", BUILD_DIR, "--prefix", cls.prefix], cls.root)

    @classmethod
    def tearDownClass(cls):
        sc.remove_tmpdir(cls.root)

    def setUp(self):
        super().setUp()
        if self.install.returncode != 0:
            self.fail(f"cmake --install failed (a build without its `all` target?):{self.install.describe()}")

    def installed(self, *parts):
        return os.path.join(self.prefix, *parts)

    def strata(self, *args, env=None):
        """The installed strata, run in this test's own directory."""
        return sc.run_command([self.installed("bin", "strata"), *args], self.tmp, env=env)

    # --- the installed tree -------------------------------------------------------

    def test_files_in_gnu_install_dirs(self):
        executables = ["bin/strata", f"{SHARE}/scripts/slurm/run.sbatch", f"{SHARE}/scripts/slurm/sweep.sbatch",
                       f"{SHARE}/scripts/slurm/strata-job", f"{SHARE}/scripts/slurm/submit-sweep",
                       f"{SHARE}/scripts/plot/fields.py", f"{SHARE}/scripts/plot/particles.py",
                       f"{SHARE}/scripts/plot/pricing.py", f"{SHARE}/scripts/plot/sweep.py",
                       f"{SHARE}/scripts/convert/lammps_to_h5md.py"]
        files = [f"{SHARE}/inputs/quickstart.toml", f"{SHARE}/inputs/pricing/book.toml",
                 f"{SHARE}/inputs/pricing/book.csv", f"{SHARE}/inputs/shallow_water/vortex.toml",
                 f"{SHARE}/inputs/sweeps/pricing_vol_strike.toml", f"{SHARE}/scripts/plot/plot_common.py",
                 f"{SHARE}/python/strata/__init__.py", f"{SHARE}/python/strata/reader.py",
                 f"{SHARE}/python/pyproject.toml", COMPLETION] + ([MAN_PAGE] if configured_help2man() else [])
        for rel in executables + files:
            self.assertTrue(os.path.isfile(self.installed(rel)), f"{rel} not installed")
        for rel in executables:
            self.assertTrue(os.stat(self.installed(rel)).st_mode & stat.S_IXUSR, f"{rel} is not executable")
        installed = sc.files_under(self.prefix)
        for rel in installed:
            self.assertNotIn("tests", rel.split(os.sep), f"a test was installed: {rel}")
            self.assertNotIn("__pycache__", rel.split(os.sep), rel)
        for dev in ("scripts/test", "scripts/run", "scripts/lib.sh", "scripts/bench", "scripts/gpu"):
            self.assertFalse(any(rel.startswith(f"{SHARE}/{dev}") for rel in installed), f"{dev} installed")

    def test_quickstart_runs_from_any_directory(self):
        quickstart = self.installed(SHARE, "inputs", "quickstart.toml")
        res = self.strata("run", quickstart, "-o", "out.h5", "--set", "pricing.paths=20000")
        self.assertExit(res, 0)
        with h5py.File(os.path.join(self.tmp, "out.h5"), "r") as f:
            self.assertEqual(sc.as_str(f.attrs["status"]), "complete")
            self.assertIn("spx_atm_call", f["pricing"])
        # An input naming another file (book.csv) finds it beside itself.
        book = self.installed(SHARE, "inputs", "pricing", "book.toml")
        self.assertExit(self.strata("run", book, "-o", "book.h5", "--dry-run"), 0)

    def test_plot_scripts_import_the_installed_reader(self):
        """Where no strata package is installed in the Python, the installed
        plot scripts take the reader installed beside them."""
        plot = self.installed(SHARE, "scripts", "plot")
        res = sc.run_command([sc.PYTHON, "-I", "-c", f"import sys; sys.path.insert(0, {plot!r}); import plot_common; "
                              "print(plot_common.strata.__file__)"], self.tmp)
        self.assertExit(res, 0)
        self.assertEqual(os.path.realpath(res.stdout.strip()),
                         os.path.realpath(self.installed(SHARE, "python", "strata", "__init__.py")), res.describe())

    def test_slurm_job_script_finds_the_installed_binary(self):
        """Outside Slurm, with no strata on PATH and no STRATA_BIN: the job
        script runs PREFIX/bin/strata."""
        if not sc.MPIEXEC:
            self.fail("no mpirun (Debian: openmpi-bin)")
        path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                               if d and not os.path.isfile(os.path.join(d, "strata")))
        env = {"PATH": os.path.dirname(sc.MPIEXEC) + os.pathsep + path, "STRATA_BIN": None,
               "STRATA_LAUNCHER": "mpirun", "SLURM_JOB_ID": None, "SLURM_NTASKS": None}
        job = self.installed(SHARE, "scripts", "slurm", "strata-job")
        res = sc.run_command([job, "run", self.installed(SHARE, "inputs", "quickstart.toml"), "-o", "job.h5",
                              "--dry-run"], self.tmp, env=env)
        self.assertExit(res, 0)
        self.assertIn("model pricing", res.stdout, res.describe())

    # --- bash completion ------------------------------------------------------------

    def complete(self, *words, cwd=None):
        """What the installed completion offers for the command line `words`
        (the last one under the cursor), as bash would call it."""
        script = (f"source {shlex.quote(self.installed(COMPLETION))}\n"
                  f"COMP_WORDS=({shlex.join(words)}); COMP_CWORD={len(words) - 1}\n"
                  "_strata\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
        res = sc.run_command(["bash", "--norc", "--noprofile", "-c", script], cwd or self.tmp)
        self.assertExit(res, 0)
        return [line for line in res.stdout.splitlines() if line]

    def test_completion_is_what_the_binary_prints(self):
        res = self.strata("completion", "bash")
        self.assertExit(res, 0)
        with open(self.installed(COMPLETION), encoding="utf-8") as f:
            self.assertEqual(f.read(), res.stdout)

    def test_completion_of_commands_and_options(self):
        self.assertEqual(sorted(self.complete("strata", "")), sorted(COMMANDS))
        self.assertEqual(self.complete("strata", "ru"), ["run"])
        self.assertIn("--dry-run", self.complete("strata", "run", "in.toml", "--d"))
        self.assertIn("--collect", self.complete("strata", "sweep", "in.toml", "--"))
        self.assertEqual(sorted(self.complete("strata", "run", "in.toml", "--backend", "")), ["auto", "cuda", "host"])
        self.assertIn("shallow_water", self.complete("strata", "models", "s"))
        self.assertEqual(self.complete("strata", "help", "sw"), ["sweep"])

    def test_completion_of_input_files(self):
        offered = self.complete("strata", "run", "inputs/", cwd=self.installed(SHARE))
        self.assertIn("inputs/quickstart.toml", offered)
        self.assertIn("inputs/shallow_water", offered)   # a folder to go on into
        self.assertFalse([w for w in offered if os.path.isfile(self.installed(SHARE, w)) and not w.endswith(".toml")],
                         offered)
        offered = self.complete("strata", "run", "inputs/pricing/b", cwd=self.installed(SHARE))
        self.assertEqual(offered, ["inputs/pricing/book.toml"])   # not book.csv

    def test_completion_of_set_keys(self):
        offered = self.complete("strata", "run", "in.toml", "--set", "shallow_water.")
        self.assertIn("shallow_water.nx=", offered)
        self.assertTrue(all(w.startswith("shallow_water.") for w in offered), offered)
        self.assertIn("pricing.", self.complete("strata", "run", "in.toml", "--set", "p"))
        self.assertIn("pricing.asset.0.vol=", self.complete("strata", "sweep", "in.toml", "--set", "pricing.asset.0."))
        # bash splits KEY=VALUE at '=': the value's choices.
        self.assertEqual(sorted(self.complete("strata", "run", "in.toml", "--set", "run.backend", "=", "")),
                         ["auto", "cuda", "host"])
        self.assertEqual(self.complete("strata", "run", "in.toml", "--set", "pricing.instrument.call.option", "=",
                                       "p"), ["put"])

    # --- help and the man page ------------------------------------------------------

    def test_help_command(self):
        top = self.strata("help")
        self.assertExit(top, 0)
        self.assertEqual(top.stdout, self.strata("--help").stdout)
        for command in COMMANDS:
            self.assertRegex(top.stdout, rf"(?m)^\s+{command}\s", top.describe())
        run = self.strata("help", "run")
        self.assertExit(run, 0)
        self.assertEqual(run.stdout, self.strata("run", "--help").stdout)
        self.assertIn("Usage: strata run", run.stdout, run.describe())
        self.assertIn("--set KEY=VALUE", run.stdout, run.describe())
        wrong = self.strata("help", "swep")
        self.assertExit(wrong, 2)
        self.assertIn("did you mean 'sweep'", wrong.stderr, wrong.describe())

    def test_help_all(self):
        res = self.strata("--help-all")
        self.assertExit(res, 0)
        for command, option in (("run", "--set"), ("sweep", "--collect"), ("doctor", "--probe"),
                                ("models", "--markdown")):
            self.assertRegex(res.stdout, rf"(?m)^strata {command}: ", res.describe())
            self.assertIn(option, res.stdout, res.describe())

    def test_man_page_renders(self):
        # scripts/lib.sh installs both; a machine set up otherwise builds no page.
        if not configured_help2man():
            self.skipTest("help2man was not found when the build was configured (Debian: help2man): no man page")
        man = shutil.which("man")
        if not man:
            self.skipTest("no man to render the page with (Debian: man-db)")
        res = sc.run_command([man, "--warnings", "-l", self.installed(MAN_PAGE)], self.tmp,
                             env={"MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"})
        self.assertExit(res, 0)
        self.assertEqual(res.stderr, "", res.describe())
        text = " ".join(res.stdout.replace("\u2010\n", "").split())
        for needle in ("EXIT STATUS", "EXAMPLES", "FILES", "strata run: run the model", "--set KEY=VALUE",
                       "strata sweep:", "--collect"):
            self.assertIn(needle, text, res.describe())


if __name__ == "__main__":
    sc.main()
