"""Shared helpers of strata's end-to-end CLI tests.

Each tests/cli/test_*.py is a standalone unittest script that ctest runs as
`$STRATA_PYTHON tests/cli/test_NAME.py` with this environment:

    STRATA_BIN          absolute path of the strata binary
    STRATA_SOURCE_DIR   repository root
    STRATA_PYTHON       the Python configured for the tests (one with h5py,
                        numpy and matplotlib); the scripts the tests run
                        (scripts/plot, scripts/convert, ...) run with it
    MPIEXEC             e.g. /usr/bin/mpiexec
    MPIEXEC_FLAGS       e.g. "--oversubscribe"

Run by hand, the defaults are the repository this file lives in, its
build/strata, the Python running the test, the mpiexec on PATH and (for
Open MPI) --oversubscribe. Set STRATA_KEEP_TMP=1 to keep the temporary
directories of the tests.

No test depends on how fast strata computes. A test that signals a run
mid-way either has strata raise the signal itself at a chosen step
(STRATA_TEST_SIGNAL_AT) or holds the run at a step until a signal from
outside arrives (STRATA_TEST_HOLD_AT), so the run can never end first;
docs/faults.md lists these switches.

Every invocation of strata runs with its working directory in a fresh
temporary directory, so a default output path (run.output = "out/run.h5")
can never land in the source tree.
"""

import difflib
import glob
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

try:
    import h5py
    import numpy as np
except ImportError as err:  # pragma: no cover - environment problem
    sys.exit(f"strata CLI tests need h5py and numpy (Debian: python3-h5py python3-numpy), which "
             f"{sys.executable} lacks ({err}): run them with a Python that has them (STRATA_PYTHON)")

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.abspath(os.environ.get("STRATA_SOURCE_DIR")
                             or os.path.join(HERE, os.pardir, os.pardir))
STRATA_BIN = os.path.abspath(os.environ.get("STRATA_BIN")
                             or os.path.join(SOURCE_DIR, "build", "strata"))
QUICKSTART = os.path.join(SOURCE_DIR, "inputs", "quickstart.toml")
# The Python that runs the repository's scripts in the tests.
PYTHON = os.environ.get("STRATA_PYTHON") or sys.executable

# Seconds one strata command may take before the test calls it hung. The
# runs here take about a second; the margin is for loaded CI machines.
TIMEOUT_S = 120

# Two-sided 95% normal quantile, Phi^-1(0.975): the ci95 half-width in stderr.
Z95 = 1.959963984540054


def _default_mpiexec_flags(mpiexec):
    """--oversubscribe for Open MPI (3 ranks on a 2-core runner), else none."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return ["--oversubscribe"] if ("Open MPI" in out or "OpenRTE" in out) else []


MPIEXEC = os.environ.get("MPIEXEC") or shutil.which("mpiexec") or shutil.which("mpirun")
if "MPIEXEC_FLAGS" in os.environ:
    MPIEXEC_FLAGS = shlex.split(os.environ["MPIEXEC_FLAGS"])
else:
    MPIEXEC_FLAGS = _default_mpiexec_flags(MPIEXEC) if MPIEXEC else []


def child_env(extra=None):
    """The environment of a strata child process; a None value unsets."""
    env = dict(os.environ)
    # Fresh Buffers poisoned, as ctest sets it (tests/CMakeLists.txt), when
    # run by hand too: code reading memory nothing wrote fails as on a GPU.
    env.setdefault("STRATA_POISON_FRESH_MEMORY", "1")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Open MPI refuses to run as root unless told (containers, CI).
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env


class Result:
    """What one command did: exit code, output, wall time."""

    def __init__(self, cmd, cwd, returncode, stdout, stderr, elapsed):
        self.cmd, self.cwd = cmd, cwd
        self.returncode, self.elapsed = returncode, elapsed
        # Bytes as written (no newline translation), and decoded.
        self.stdout_bytes, self.stderr_bytes = stdout, stderr
        self.stdout = stdout.decode("utf-8", errors="replace")
        self.stderr = stderr.decode("utf-8", errors="replace")

    def describe(self):
        """A block for failure messages: the command, its exit and output."""
        return (f"\n$ cd {self.cwd} && {shlex.join(self.cmd)}\n"
                f"exit {self.returncode} after {self.elapsed:.1f} s\n"
                f"--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}\n")


def run_command(cmd, cwd, env=None, timeout=TIMEOUT_S):
    """Runs cmd in its own process group; kills the whole group on timeout."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=child_env(env), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        res = Result(cmd, cwd, None, stdout, stderr, time.monotonic() - start)
        raise AssertionError(f"timed out after {timeout} s:{res.describe()}")
    return Result(cmd, cwd, proc.returncode, stdout, stderr, time.monotonic() - start)


def strata_command(args, ranks=None):
    """[mpiexec FLAGS -np N] strata ARGS; ranks=None runs strata alone."""
    cmd = [STRATA_BIN] + [str(a) for a in args]
    if ranks is not None:
        if not MPIEXEC:
            raise AssertionError("no mpiexec: set MPIEXEC (Debian: openmpi-bin)")
        cmd = [MPIEXEC] + MPIEXEC_FLAGS + ["-np", str(ranks)] + cmd
    return cmd


def run_strata(args, cwd, ranks=None, env=None, timeout=TIMEOUT_S):
    return run_command(strata_command(args, ranks), cwd, env=env, timeout=timeout)


def make_outputs(folder, runs, sweep=None):
    """The outputs a test reads, made in `folder`: for each name -> (input
    under inputs/, [--set KEY=VALUE, ...]) folder/NAME.h5; with `sweep` (an
    input's text), that sweep run (--all) and collected into
    folder/sweep/summary.h5. AssertionError naming what failed."""
    quiet = {"STRATA_PROGRESS": "off"}
    for name, (inp, sets) in runs.items():
        args = ["run", os.path.join(SOURCE_DIR, "inputs", inp), "-o", f"{name}.h5"]
        for s in sets:
            args += ["--set", s]
        res = run_strata(args, folder, env=quiet)
        if res.returncode != 0:
            raise AssertionError(f"making the {name} output failed:{res.describe()}")
    if sweep is None:
        return
    with open(os.path.join(folder, "sweep.toml"), "w", encoding="utf-8") as f:
        f.write(sweep)
    for args in (["sweep", "sweep.toml", "--all"], ["sweep", "sweep.toml", "--collect", "sweep/summary.h5"]):
        res = run_strata(args, folder, env=quiet)
        if res.returncode != 0:
            raise AssertionError(f"making the sweep summary failed:{res.describe()}")


def jet_input(every_steps, keep, sim_time, output_interval):
    """A small shallow_water run (24 x 18 cells, a barotropic jet between
    walls; 600 s steps) writing out/run.h5 and a checkpoint every
    `every_steps` steps, the fault tests' common input."""
    return f"""[run]
model = "shallow_water"
output = "out/run.h5"

[checkpoint]
every_steps = {every_steps}
every_seconds = 0
keep = {keep}

[shallow_water]
nx = 24
ny = 18
lx = 2.4e6
ly = 1.8e6
initial = "barotropic_instability"
boundary_y = "wall"
beta = 2e-11
jet_speed = 30.0
jet_width = 2.0e5
perturbation_amplitude = 20.0
sim_time = {sim_time}
output_interval = {output_interval}
"""


def md_input(cells, every_steps, keep, output_every, steps=60, thermo_every=5):
    """A small md run (the Lennard-Jones liquid on `cells` fcc cells)
    writing out/run.h5 and a checkpoint every `every_steps` steps, the
    fault tests' common md input."""
    return f"""[run]
model = "md"
output = "out/run.h5"

[checkpoint]
every_steps = {every_steps}
every_seconds = 0
keep = {keep}

[md]
cells = {list(cells)}
steps = {steps}
thermo_every = {thermo_every}
output_every = {output_every}
"""


def call_put_input(put=True):
    """A small European pricing run writing out/run.h5 and a checkpoint
    every 2 steps: 96 blocks of 16,384 antithetic pairs in chunks of
    196,608 paths (6 blocks), so 16 steps on any rank count; a call on one
    asset and, with `put`, a put."""
    text = """[run]
model = "pricing"
seed = 5
output = "out/run.h5"

[pricing]
paths = 3_145_728
antithetic = true
rate = 0.03
chunk_paths = 196_608

[checkpoint]
every_steps = 2
every_seconds = 0
keep = 2

[[pricing.asset]]
name = "A"
spot = 100.0
dividend = 0.01
vol = 0.25

[[pricing.instrument]]
name = "call"
option = "call"
strike = 105.0
maturity = 1.0
assets = ["A"]
"""
    if put:
        text += """
[[pricing.instrument]]
name = "put"
option = "put"
strike = 95.0
maturity = 0.5
assets = ["A"]
"""
    return text


def make_tmpdir(tag):
    return tempfile.mkdtemp(prefix=f"strata-cli-{tag}-")


def remove_tmpdir(path):
    if os.environ.get("STRATA_KEEP_TMP"):
        print(f"kept {path}", file=sys.stderr)
    else:
        shutil.rmtree(path, ignore_errors=True)


def files_under(root, suffix=""):
    """Every file below root (relative paths) whose name ends with suffix."""
    found = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name.endswith(suffix):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(found)


def run_and_restart_from_oldest(test, input_name, read, env, ranks=2):
    """Runs INPUT to ref.h5 uninterrupted, reads it, restarts it from the
    oldest checkpoint kept in ref.chk on `ranks` ranks and reads it again:
    returns (uninterrupted, restarted), as read(path) gives them."""
    test.assertExit(test.strata("run", input_name, "-o", "ref.h5", env=env), 0)
    ref = read(test.path("ref.h5"))
    chk = sorted(os.listdir(test.path("ref.chk")))[0]
    res = test.strata("run", input_name, "-o", "ref.h5", "--restart", os.path.join("ref.chk", chk), ranks=ranks,
                      env=env)
    test.assertExit(res, 0)
    test.assertInOutput("restarted from", res.stdout, res, "stdout")
    return ref, read(test.path("ref.h5"))


# --- stopping a run at a chosen step, whatever the machine's speed ---------

def checkpoint_name(step):
    """The file name of the checkpoint after `step` steps."""
    return f"step-{step:012d}.h5"


def hold_at(step):
    """The environment that holds a run after `step` (and the checkpoint due
    there) until a stop request arrives: it cannot end before the test
    signals it, however fast it computes."""
    return {"STRATA_TEST_HOLD_AT": str(step)}


def signal_at(step, sig, rank=0):
    """The environment that makes rank `rank` raise `sig` (signal.SIGTERM,
    SIGINT, SIGUSR1) in its own process as step `step` starts (0: before
    the first; "setup": as the set-up starts): the run stops at the end of
    that step."""
    return {"STRATA_TEST_SIGNAL_AT": f"{step}:{sig.name}:{rank}"}


_STOPPED = re.compile(r"^stopped on (.+?) at step (\d+) of (\d+)(?:, ([0-9.]+) s after it arrived)?; "
                      r"checkpoint (\S+) \(exit 75\)$", re.M)


def stop_line(text):
    """What the `stopped on ...` line of a run's stdout says: a dict with
    reason, step, steps, seconds (None without a signal) and checkpoint;
    None when there is no such line."""
    m = _STOPPED.search(text)
    if not m:
        return None
    return {"reason": m.group(1), "step": int(m.group(2)), "steps": int(m.group(3)),
            "seconds": float(m.group(4)) if m.group(4) else None, "checkpoint": m.group(5)}


def wait_for_path(test, proc, path, timeout=TIMEOUT_S):
    """Waits until `path` (a file name or a glob pattern) exists while proc
    runs; fails, killing its process group, if proc ends first or the time
    runs out."""
    deadline = time.monotonic() + timeout
    while not glob.glob(path):
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            test.fail(f"no {path} (exit {proc.returncode}):\n{out.decode()}\n{err.decode()}")
        time.sleep(0.02)


def finish(test, proc, what="the signalled run"):
    """proc's Result once it has exited; kills its process group and fails
    when it has not within TIMEOUT_S (a held run that no signal reached)."""
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        test.fail(f"{what} did not stop within {TIMEOUT_S} s (held, and the signal never reached it?):\n"
                  f"{out.decode()}\n{err.decode()}")
    return Result(proc.args, test.tmp, proc.returncode, out, err, 0.0)


def stop_held_run(test, args, checkpoint_dir, step, env=None, ranks=None, sig=signal.SIGTERM):
    """Starts `strata ARGS` held after step `step` (hold_at; the input must
    checkpoint there), waits for that checkpoint, sends `sig` from outside
    (to strata alone, or to mpirun, which passes SIGUSR1 on) and checks the
    run stopped there: exit 75 at step `step`. Returns the Result."""
    proc = subprocess.Popen(strata_command(args, ranks), cwd=test.tmp, env=child_env({**(env or {}), **hold_at(step)}),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    wait_for_path(test, proc, os.path.join(checkpoint_dir, checkpoint_name(step)))
    proc.send_signal(sig)
    res = finish(test, proc)
    test.assertExit(res, 75)
    stopped = stop_line(res.stdout)
    test.assertIsNotNone(stopped, res.describe())
    test.assertEqual((stopped["reason"], stopped["step"]), (sig.name, step), res.describe())
    return res


def check_binary():
    if not (os.path.isfile(STRATA_BIN) and os.access(STRATA_BIN, os.X_OK)):
        raise AssertionError(f"strata binary not found at {STRATA_BIN} "
                             f"(set STRATA_BIN, or build it first)")


class StrataTestCase(unittest.TestCase):
    """A test case whose every test works in its own temporary directory."""

    maxDiff = None

    def setUp(self):
        check_binary()
        self.tmp = make_tmpdir(self.id().rsplit(".", 1)[-1])
        self.addCleanup(remove_tmpdir, self.tmp)

    def strata(self, *args, ranks=None, env=None, timeout=TIMEOUT_S):
        return run_strata(args, self.tmp, ranks=ranks, env=env, timeout=timeout)

    def run_ok(self, *args, ranks=None, env=None):
        """`strata run ARGS`, failing the test unless it exits 0."""
        res = self.strata("run", *args, ranks=ranks, env=env)
        self.assertExit(res, 0)
        return res

    def open(self, name):
        """An HDF5 file of the temporary directory, closed after the test."""
        f = h5py.File(self.path(name), "r")
        self.addCleanup(f.close)
        return f

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def write(self, name, text):
        """Writes a file in the temporary directory; returns its name."""
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(text)
        return name

    def assertExit(self, result, code):
        if result.returncode != code:
            self.fail(f"expected exit {code}, got {result.returncode}:{result.describe()}")

    def assertInOutput(self, needle, text, result, where="stderr"):
        if needle not in text:
            self.fail(f"{needle!r} missing from {where}:{result.describe()}")


# --- HDF5 -----------------------------------------------------------------

def as_str(value):
    """An HDF5 string (vlen str, fixed bytes, numpy scalar) as Python str."""
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).rstrip(b"\0").decode("utf-8")
    return str(value)


def str_list(value):
    """A 1-D HDF5 string attribute as a list of str."""
    return [as_str(v) for v in np.atleast_1d(value)]


def read_config_text(h5file):
    """The /config dataset: a scalar string dataset holding TOML text."""
    ds = h5file["config"]
    if ds.shape != ():
        raise AssertionError(f"/config should be a scalar dataset, has shape {ds.shape}")
    if not (ds.dtype.kind == "S" or h5py.check_string_dtype(ds.dtype) is not None):
        raise AssertionError(f"/config should be a string dataset, has dtype {ds.dtype}")
    return as_str(ds[()])


def one_call_input(seed, paths, rate, maturity, name="probe_call"):
    """A minimal valid pricing input: one asset A (spot 100, vol 0.2), one
    at-the-money call. `paths` goes in as written (e.g. "200_000")."""
    return f"""\
[run]
model = "pricing"
seed = {seed}

[pricing]
paths = {paths}
rate = {rate}

[[pricing.asset]]
name = "A"
spot = 100.0
vol = 0.2

[[pricing.instrument]]
name = "{name}"
option = "call"
strike = 100.0
maturity = {maturity}
assets = ["A"]
"""


def bits(x):
    """The IEEE-754 binary64 bit pattern of x, as hex (for bitwise compares)."""
    return struct.pack("<d", float(x)).hex()


def raw_bytes(value):
    """A dataset's value as bytes, for a bitwise compare: numbers as their
    bytes; variable-length strings (objects in h5py) by their text."""
    value = np.asarray(value)
    if value.dtype.kind == "O":
        return "\x00".join(as_str(v) for v in value.ravel()).encode()
    return value.tobytes()


def read_table(group):
    """{column: numpy array} of a strata table (a group of 1-D column
    datasets along one dimension), strings decoded to str."""
    out = {}
    for name, ds in group.items():
        values = ds[()]
        if values.dtype.kind in "OS":
            values = np.array([as_str(v) for v in values], dtype=object)
        out[name] = values
    return out


PRICING_DATASETS = ("price", "stderr", "ci95_low", "ci95_high", "paths")


def pricing_results(h5file):
    """{instrument: {dataset: value}} from the /pricing/<name>/ groups."""
    out = {}
    for name, group in h5file["pricing"].items():
        if name == "summary":
            continue
        out[name] = {key: group[key][()] for key in group.keys()}
    return out


def result_bits(h5file):
    """{instrument: {dataset: bit pattern}} of the per-instrument results."""
    out = {}
    for name, values in pricing_results(h5file).items():
        out[name] = {k: (bits(values[k]) if k != "paths" else int(values[k]))
                     for k in PRICING_DATASETS if k in values}
    return out


class PricingBook(unittest.TestCase):
    """Runs one pricing input once per entry of RUNS (tag, ranks, extra
    arguments) before the tests; tests read the results and compare them
    with references within 4 (combined) standard errors."""

    BOOK = None
    ARGS = []
    RUNS = []

    @classmethod
    def setUpClass(cls):
        check_binary()
        cls.tmp = make_tmpdir("book")
        cls.runs = {}
        for tag, ranks, extra in cls.RUNS:
            out = os.path.join(cls.tmp, f"{tag}.h5")
            res = run_strata(["run", cls.BOOK] + cls.ARGS + ["-o", out] + extra, cls.tmp, ranks=ranks)
            cls.runs[tag] = (res, out)

    @classmethod
    def tearDownClass(cls):
        remove_tmpdir(cls.tmp)

    def results(self, tag):
        res, out = self.runs[tag]
        if res.returncode != 0:
            self.fail(f"run {tag} failed:{res.describe()}")
        with h5py.File(out, "r") as f:
            return pricing_results(f)

    def check_references(self, closed_form, independent):
        """closed_form: names with a reference_price; independent: {name: (value, standard error)}."""
        got = self.results(self.RUNS[0][0])
        for name in closed_form:
            with self.subTest(name):
                r = got[name]
                self.assertIn("reference_price", r)
                z = (r["price"] - r["reference_price"]) / r["stderr"]
                self.assertLess(abs(z), 4.0, f"{name}: {r['price']} vs {r['reference_price']} ({z:+.2f} se)")
        for name, (value, se) in independent.items():
            with self.subTest(name):
                r = got[name]
                self.assertNotIn("reference_price", r, "no closed form: no reference_price")
                z = (r["price"] - value) / (r["stderr"] ** 2 + se ** 2) ** 0.5
                self.assertLess(abs(z), 4.0, f"{name}: {r['price']} vs {value} ({z:+.2f} se)")

    def check_same_bits(self):
        """Every run's per-instrument results equal the first run's, bit for bit."""
        first = self.RUNS[0][0]
        self.results(first)
        with h5py.File(self.runs[first][1], "r") as f:
            ref = result_bits(f)
        for tag, _, _ in self.RUNS[1:]:
            self.results(tag)
            with h5py.File(self.runs[tag][1], "r") as f:
                self.assertEqual(result_bits(f), ref, f"{tag} differs from {first}")


class BadPricingInput(StrataTestCase):
    """An input made from BASE that must fail with exit 2, naming a key."""

    BASE = ""

    def check_bad(self, key, words, **fields):
        name = self.write("bad.toml", self.BASE.format(**fields))
        res = self.strata("run", name)
        self.assertExit(res, 2)
        self.assertInOutput(key, res.stderr, res)
        for w in words:
            self.assertInOutput(w, res.stderr, res)
        self.assertEqual(files_under(self.tmp, ".h5"), [])


# --- grid models: /grid, the fields at the root and the XDMF sidecar --------

def grid_axes(h5file):
    """The grid's axis names, fastest first (['x', 'y', 'z'], euler2d ['x', 'z'])."""
    return str_list(h5file["grid"].attrs["axes"])


def grid_cells(h5file):
    """Cells per axis in the order of a frame's dimensions (slowest first),
    e.g. [nz, ny, nx]: the shape of a field /<name> without its time axis."""
    return [int(h5file["grid"].attrs["n" + a]) for a in reversed(grid_axes(h5file))]


def field_names(h5file):
    """The names of the fields: the root's datasets of more than one
    dimension (time and space; the coordinates, /config and tables have
    at most one)."""
    return sorted(k for k, v in h5file.items() if isinstance(v, h5py.Dataset) and v.ndim > 1)


def grid_series(h5file):
    """{path: dataset} of a grid file's time series: /time, every field
    and every /diagnostics dataset (diagnostics/<name>)."""
    found = {"time": h5file["time"]}
    found.update((name, h5file[name]) for name in field_names(h5file))
    found.update(("diagnostics/" + name, ds) for name, ds in h5file["diagnostics"].items())
    return found


# A pseudo-group for visit_series: a grid file's time series (grid_series).
GRID_SERIES = "grid series"


def visit_series(h5file, group, visit):
    """visit(name, object) for every object below `group`, as h5py's
    visititems; for GRID_SERIES, every dataset of grid_series(h5file)."""
    if group != GRID_SERIES:
        h5file[group].visititems(visit)
        return
    for name, ds in grid_series(h5file).items():
        visit(name, ds)


def _numbers(text):
    return [float(v) for v in text.split()]


def _parse_xdmf(xmf_path, fail):
    """The parsed XDMF root and {path: h5py.File} of the files its HDF
    DataItems name, each checked: FILE:/dataset beside the .xmf, the dataset
    there, its shape the Dimensions, its type the NumberType/Precision."""
    base = os.path.dirname(os.path.abspath(xmf_path))
    try:
        root = ET.parse(xmf_path).getroot()
    except ET.ParseError as err:
        fail(f"not well-formed XML: {err}")
    if root.tag != "Xdmf":
        fail(f"root element is <{root.tag}>, not <Xdmf>")

    # 1. Every HDF data item: the file, the dataset, its shape and type.
    h5_files = {}
    hdf_items = [item for item in root.iter("DataItem") if item.get("Format") == "HDF"]
    if not hdf_items:
        fail("no DataItem with Format=\"HDF\"")
    for item in hdf_items:
        ref = (item.text or "").strip()
        if ":" not in ref:
            fail(f"HDF DataItem {ref!r} is not FILE:/dataset")
        name, dataset = ref.split(":", 1)
        path = os.path.join(base, name)
        if not os.path.isfile(path):
            fail(f"HDF DataItem names {name}, which is not beside the .xmf")
        if path not in h5_files:
            h5_files[path] = h5py.File(path, "r")
        h5 = h5_files[path]
        if dataset not in h5:
            fail(f"{name} has no dataset {dataset}")
        shape = tuple(int(v) for v in item.get("Dimensions", "").split())
        actual = h5[dataset].shape
        if actual != shape:
            fail(f"{name}:{dataset} has shape {actual}, the XDMF says {shape}")
        kind = {"Float": "f", "Int": "i", "UInt": "u"}.get(item.get("NumberType", "Float"))
        precision = int(item.get("Precision", "4"))
        dtype = h5[dataset].dtype
        if dtype.kind != kind or dtype.itemsize != precision:
            fail(f"{name}:{dataset} is {dtype}, the XDMF says "
                 f"{item.get('NumberType', 'Float')} of {precision} bytes")
    return root, h5_files


def check_xdmf(xmf_path):
    """Checks an OUT.xmf that a grid model wrote beside OUT.h5 the way a
    reader (ParaView's XDMF3 reader) would use it, raising AssertionError
    on the first problem; returns the number of frames.

    - every DataItem with Format="HDF" names FILE:/dataset (FILE relative to
      the .xmf): the file opens with h5py, the dataset exists, its shape is
      the DataItem's Dimensions and its element type its NumberType and
      Precision;
    - the temporal collection has one Uniform grid per /time entry,
      whose Time Value equals it exactly;
    - each grid's 3DCoRectMesh topology has cells + 1 nodes per physical
      axis (z y x; a 2-D grid one cell thick along its missing axis) and
      its geometry origin and spacing are /grid's;
    - each field Attribute is cell-centred and reads frame f of /<name>
      through that frame's view (frame_view), shaped as the mesh's cells;
    - every field appears in every frame.
    """
    def frames(root, h5, fail):
        _check_xdmf_frames(root, h5, fail)
        return len(h5["time"])
    return _checked_xdmf(xmf_path, frames)


def _checked_xdmf(xmf_path, check):
    """_parse_xdmf, then check(root, h5, fail) on the one HDF5 file it
    names; returns what check returns."""
    def fail(msg):
        raise AssertionError(f"{xmf_path}: {msg}")

    root, h5_files = _parse_xdmf(xmf_path, fail)
    try:
        if len(h5_files) != 1:
            fail(f"expected one HDF5 file, found {sorted(h5_files)}")
        return check(root, next(iter(h5_files.values())), fail)
    finally:
        for f in h5_files.values():
            f.close()


def frame_view(h5, item, series, f, fail, where):
    """Checks that the HDF DataItem `item` reads frame f of the dataset
    `series` as ParaView's XDMF readers take it: a dataset of its own, a
    virtual dataset mapping that frame of `series` in the same file (no
    copy), holding exactly its values (in the frame's order; its shape may
    be the mesh's)."""
    if item is None or item.get("Format") != "HDF" or item.get("ItemType") not in (None, "Uniform"):
        fail(f"{where}: {series} is not read from a dataset of its own")
    dataset = item.text.strip().split(":", 1)[1]
    view = h5[dataset]
    if not view.is_virtual:
        fail(f"{where}: {dataset} is not a virtual dataset (a copy of the frame)")
    sources = view.virtual_sources()
    if len(sources) != 1 or sources[0].file_name != "." or sources[0].dset_name != series:
        fail(f"{where}: {dataset} maps {[(m.file_name, m.dset_name) for m in sources]}, not {series} of this file")
    if not np.array_equal(view[()].ravel(), h5[series][f].ravel(), equal_nan=True):
        fail(f"{where}: {dataset} does not hold frame {f} of {series}")


def check_particle_xdmf(xmf_path):
    """Checks the OUT.xmf of a particle model (H5MD output) as ParaView's
    XDMF readers use it; returns the number of frames. Every HDF DataItem
    as in check_xdmf; a temporal collection with one Polyvertex grid per
    /particles/all/position/time entry (Time equal to it), N elements whose
    cells are the vertices 0..N-1; the XYZ geometry and the velocity
    attribute read frame f of position/value and velocity/value through
    that frame's views (frame_view); id (and mass where the file has it)
    are node scalars."""
    def frames(root, h5, fail):
        times = h5["particles/all/position/time"][()]
        n = h5["particles/all/position/value"].shape[1]
        series = root.find("Domain").find("Grid")
        if series.get("GridType") != "Collection" or series.get("CollectionType") != "Temporal":
            fail("Domain/Grid is not a temporal collection")
        grids = series.findall("Grid")
        if len(grids) != len(times):
            fail(f"{len(grids)} grids, {len(times)} frames in /particles/all/position/time")
        for f, grid in enumerate(grids):
            where = f"frame {f}"
            if float(grid.find("Time").get("Value")) != times[f]:
                fail(f"{where}: Time is not /particles/all/position/time[{f}] = {times[f]!r}")
            topo = grid.find("Topology")
            if topo.get("TopologyType") != "Polyvertex" or int(topo.get("NumberOfElements")) != n:
                fail(f"{where}: topology is not a Polyvertex of {n} elements")
            cells = topo.find("DataItem")
            if cells is None or not np.array_equal(h5[cells.text.strip().split(":", 1)[1]][()], np.arange(n)):
                fail(f"{where}: the Polyvertex cells are not the vertices 0..{n - 1}")
            geo = grid.find("Geometry")
            if geo.get("GeometryType") != "XYZ":
                fail(f"{where}: geometry is not XYZ")
            frame_view(h5, geo.find("DataItem"), "/particles/all/position/value", f, fail, where)
            attrs = {a.get("Name"): a for a in grid.findall("Attribute")}
            expected = {"velocity", "id"} | ({"mass"} if "particles/all/mass" in h5 else set())
            if set(attrs) != expected:
                fail(f"{where}: attributes {sorted(attrs)}, expected {sorted(expected)}")
            if attrs["velocity"].get("AttributeType") != "Vector" or attrs["velocity"].get("Center") != "Node":
                fail(f"{where}: velocity is not a node vector")
            frame_view(h5, attrs["velocity"].find("DataItem"), "/particles/all/velocity/value", f, fail, where)
        return len(grids)
    return _checked_xdmf(xmf_path, frames)


def _xdmf_mesh(h5):
    """The 3-D mesh OUT.xmf must describe, in z y x order: cells, origin and
    spacing per physical axis; a 2-D grid is one cell thick along the axis
    it lacks (as thick as its smallest cell), so that ParaView shows an x-y
    model in the x-y plane and an x-z slice in the x-z plane."""
    axes = grid_axes(h5)                                   # fastest first
    attrs = h5["grid"].attrs
    origin_in = [float(v) for v in np.atleast_1d(attrs["origin"])]
    spacing_in = [float(attrs["d" + a]) for a in axes]
    thin = min(spacing_in)
    cells = {"x": 1, "y": 1, "z": 1}
    origin = {"x": 0.0, "y": 0.0, "z": 0.0}
    spacing = {"x": thin, "y": thin, "z": thin}
    for a, name in enumerate(axes):
        cells[name] = int(attrs["n" + name])
        origin[name] = origin_in[a]
        spacing[name] = spacing_in[a]
    order = ["z", "y", "x"]
    return [cells[a] for a in order], [origin[a] for a in order], [spacing[a] for a in order]


def _check_xdmf_frames(root, h5, fail):
    mesh_cells, origin, spacing = _xdmf_mesh(h5)
    times = h5["time"][()]
    fields = field_names(h5)

    domain = root.find("Domain")
    series = domain.find("Grid") if domain is not None else None
    if series is None or series.get("GridType") != "Collection" or series.get("CollectionType") != "Temporal":
        fail("Domain/Grid is not a temporal collection")
    frames = series.findall("Grid")
    if len(frames) != len(times):
        fail(f"{len(frames)} grids in the temporal collection, {len(times)} entries in /time")
    for f, grid in enumerate(frames):
        where = f"frame {f}"
        if grid.get("GridType") != "Uniform":
            fail(f"{where}: GridType {grid.get('GridType')!r}, expected Uniform")
        time_el = grid.find("Time")
        if time_el is None or float(time_el.get("Value")) != times[f]:
            fail(f"{where}: Time {None if time_el is None else time_el.get('Value')} "
                 f"is not /time[{f}] = {times[f]!r}")
        topo = grid.find("Topology")
        if topo is None or topo.get("TopologyType") != "3DCoRectMesh":
            fail(f"{where}: topology is not 3DCoRectMesh")
        nodes = [int(v) for v in topo.get("Dimensions").split()]
        if nodes != [c + 1 for c in mesh_cells]:
            fail(f"{where}: topology Dimensions {nodes}, expected cells + 1 = {[c + 1 for c in mesh_cells]}")
        geo = grid.find("Geometry")
        expected_geo = "ORIGIN_DXDYDZ"
        if geo is None or geo.get("GeometryType") != expected_geo:
            fail(f"{where}: geometry is not {expected_geo}")
        items = {item.get("Name"): _numbers(item.text) for item in geo.findall("DataItem")}
        if items.get("origin") != origin or items.get("spacing") != spacing:
            fail(f"{where}: geometry origin {items.get('origin')} spacing {items.get('spacing')}, "
                 f"/grid gives {origin} and {spacing} (z y x)")
        seen = []
        for attr in grid.findall("Attribute"):
            name = attr.get("Name")
            seen.append(name)
            if attr.get("Center") != "Cell":
                fail(f"{where}: attribute {name} is not cell-centred")
            item = attr.find("DataItem")
            frame_view(h5, item, "/" + name, f, fail, where)
            if [int(v) for v in item.get("Dimensions").split()] != mesh_cells:
                fail(f"{where}: {name} Dimensions {item.get('Dimensions')}, the mesh's cells are {mesh_cells}")
        if sorted(seen) != fields:
            fail(f"{where}: attributes {sorted(seen)}, the file's fields are {fields}")


# --- the schema as the binary prints it -----------------------------------

_SECTION = re.compile(r"^(\[\[?[a-z0-9_.]+\]\]?)\s*$")
_KEY_LINE = re.compile(r"^  ([A-Za-z_][A-Za-z0-9_]*)\s+\S")


def schema_keys_from_models(text):
    """{'[pricing]': [keys], '[[pricing.asset]]': [...], ...} from `strata models [NAME]`."""
    sections, current = {}, None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            current = m.group(1)
            sections[current] = []
            continue
        m = _KEY_LINE.match(line)
        if m and current:
            sections[current].append(m.group(1))
    return sections


_MD_SECTION = re.compile(r"^###\s+`(\[\[?[a-z0-9_.]+\]\]?)`\s*$")
_MD_ROW = re.compile(r"^\|\s*`([A-Za-z_][A-Za-z0-9_]*)`\s*\|")


def schema_keys_from_markdown(text):
    """The same mapping from `strata models --markdown`."""
    sections, current = {}, None
    for line in text.splitlines():
        m = _MD_SECTION.match(line)
        if m:
            current = m.group(1)
            sections[current] = []
            continue
        m = _MD_ROW.match(line)
        if m and current:
            sections[current].append(m.group(1))
    return sections


def unified_diff(expected, actual, expected_name, actual_name):
    return "".join(difflib.unified_diff(expected.splitlines(keepends=True),
                                        actual.splitlines(keepends=True),
                                        fromfile=expected_name, tofile=actual_name))


def main():
    unittest.main(verbosity=2)
