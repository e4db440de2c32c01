"""A node lost mid-run: the job ends, the output stays readable and
unfinished, nothing stray is left beside it, and `--restart` on the node
that is left, with another rank count, ends bitwise as an uninterrupted run.

Each case runs 2 ranks on 2 nodes of a simulated cluster
(tests/cluster/cluster.py) and SIGKILLs every process of node 1 (its rank
and Open MPI's daemon, as when the machine dies) at a chosen point:

- during the steps: steps are slowed (STRATA_TEST_STEP_DELAY_MS) and the
  kill comes once the first checkpoint exists and a rank of node 0 sits in
  that delay, inside the step loop;
- during a frame write (shallow_water, md): each output write first sleeps
  (STRATA_TEST_OUTPUT_DELAY_MS: shallow_water's output jobs, md's H5MD
  frames); the kill comes once a rank of node 0 sits in that sleep, inside
  a frame write whose collective calls need node 1. Pricing writes its
  results once, at the end;
- during a checkpoint write: the moment a checkpoint's temporary file
  appears (inotify), node 1 is frozen (SIGSTOP), so node 0 cannot finish
  the collective write; if that checkpoint was complete all the same, node 1
  goes on and the next checkpoint is tried; then node 1 is killed.

The job must end within LOST_NODE_S with one of LOST_NODE_EXITS (Open MPI's
codes, docs/faults.md); the output must open with h5py and its status must
not say `complete`; beside it only the output, its XDMF sidecar and its
checkpoint folder (no Open MPI lock files); and `--restart` on 3 ranks of
node 0 (md: on 2, see RESTART_RANKS) must end `complete` with every
result of an uninterrupted run, bit for bit, and no temporary checkpoint
left.

Needs root (network namespaces); exits 77 (skipped) otherwise.
"""

import ctypes
import os
import select
import signal
import struct
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, os.pardir, "cli"))
import cluster as cl  # noqa: E402
import h5py  # noqa: E402
import strata_cli as sc  # noqa: E402
from test_layouts import contents  # noqa: E402

# Seconds from the kill to mpirun's exit: Open MPI notices a daemon's
# connection close at once (about 2 s here); the margin is for loaded CI.
LOST_NODE_S = 60
# mpirun's exit when a node is lost: 205 when it first sees the node's
# daemon gone (ORTE_ERR_COMM_FAILURE, -51, as a byte), 9 when it first
# hears of a rank killed by SIGKILL.
LOST_NODE_EXITS = (205, 9)

ONE_THREAD = {"OMP_NUM_THREADS": "1", "STRATA_PROGRESS": "off"}

SHALLOW_WATER = sc.jet_input(every_steps=5, keep=2, sim_time=12000.0, output_interval=1000.0)

MD = sc.md_input([6, 4, 4], every_steps=5, keep=2, output_every=5)

PRICING = sc.call_put_input(put=False)

INPUTS = {"shallow_water": SHALLOW_WATER, "md": MD, "pricing": PRICING}
# Ranks of the restart on node 0. md sums its forces in an order that
# follows the decomposition (docs/contract.md: bitwise only on the same
# rank count), so it continues on as many ranks as it ran on, now all on
# one node; the others on 3.
RESTART_RANKS = {"shallow_water": 3, "md": 2, "pricing": 3}
# Slowing that makes the phase long enough to land in, whatever the machine.
PHASE_ENV = {"steps": {"STRATA_TEST_STEP_DELAY_MS": "50"},
             "output": {"STRATA_TEST_OUTPUT_DELAY_MS": "500"},
             "checkpoint": {}}
# What may lie beside an output: the file, its XDMF sidecar, its checkpoints.
ALLOWED = {"run.h5", "run.xmf", "run.chk"}

IN_CREATE = 0x100
IN_MOVED_TO = 0x80


class DirectoryWatch:
    """inotify on one directory: the names created in it or moved there."""

    def __init__(self, path):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if libc.inotify_add_watch(self.fd, path.encode(), IN_CREATE | IN_MOVED_TO) < 0:
            err = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(err, f"inotify_add_watch {path}")

    def names(self, timeout):
        """The names that appeared, waiting up to `timeout` s for one."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return []
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return []
        names, i = [], 0
        while i + 16 <= len(data):
            _, _, _, length = struct.unpack_from("iIII", data, i)
            names.append(data[i + 16:i + 16 + length].rstrip(b"\0").decode())
            i += 16 + length
        return names

    def close(self):
        os.close(self.fd)


def sleeping(pid):
    """Whether a thread of process pid sleeps in nanosleep (a test delay)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/wchan", encoding="ascii") as f:
                if "nanosleep" in f.read():
                    return True
        except OSError:
            pass
    return False


def signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def status(path):
    with h5py.File(path, "r") as f:
        return sc.as_str(f.attrs["status"])


def results(path):
    """contents() of an output without the input as stored (a restart
    stores its own command's) and the root attributes a restart may set."""
    return {k: v for k, v in contents(path).items()
            if not k.startswith(("config", "@"))}


class LostNode(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        sc.check_binary()
        cls.tmp = sc.make_tmpdir("cluster-lost-node")
        cl.remove_on_exit(cls.tmp)
        cls.cluster = None
        cls.references = {}
        try:
            cls.cluster = cl.Cluster(2, tag="lost")
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.cluster is not None:
            cls.cluster.close()
        sc.remove_tmpdir(cls.tmp)

    def reference(self, model):
        """The uninterrupted run's results on 2 ranks of one node."""
        if model not in self.references:
            cwd = os.path.join(self.tmp, f"{model}-reference")
            os.mkdir(cwd)
            with open(os.path.join(cwd, "in.toml"), "w", encoding="utf-8") as f:
                f.write(INPUTS[model])
            res = sc.run_strata(["run", "in.toml"], cwd, ranks=2, env=ONE_THREAD)
            self.assertEqual(res.returncode, 0, res.describe())
            self.assertEqual(status(os.path.join(cwd, "out", "run.h5")), "complete")
            self.references[model] = results(os.path.join(cwd, "out", "run.h5"))
        return self.references[model]

    # --- landing the kill ------------------------------------------------------------

    def wait_for(self, proc, what, ready, timeout=sc.TIMEOUT_S):
        deadline = time.monotonic() + timeout
        while not ready():
            if proc.poll() is not None:
                self.fail(f"the run ended (exit {proc.returncode}) before {what}:\n{self.output(proc)}")
            if time.monotonic() > deadline:
                self.fail(f"no {what} within {timeout} s")
            time.sleep(0.005)

    def output(self, proc):
        out, err = proc.communicate()
        return out.decode(errors="replace")[-3000:] + err.decode(errors="replace")[-3000:]

    def strata_pids(self, node):
        binary = os.path.realpath(sc.STRATA_BIN)

        def is_strata(pid):
            try:
                return os.readlink(f"/proc/{pid}/exe") == binary
            except OSError:
                return False
        return [p for p in self.cluster.node_pids(node) if is_strata(p)]

    def kill_in_sleep(self, proc, what):
        """Kills node 1 once a rank of node 0 sleeps in a test delay."""
        ranks = []

        def found():
            ranks[:] = self.strata_pids(0)
            return any(sleeping(p) for p in ranks)
        self.wait_for(proc, what, found)
        self.cluster.kill_node(1)

    def kill_in_checkpoint(self, proc, chk):
        """Freezes node 1 the moment a checkpoint's temporary file appears
        and kills it if that checkpoint then cannot complete."""
        watch = DirectoryWatch(chk)
        # Found before, so that the freeze follows the file's creation at once.
        frozen = self.cluster.node_pids(1)
        self.tries = 0
        try:
            deadline = time.monotonic() + sc.TIMEOUT_S
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    self.fail(f"the run ended before a checkpoint write was caught:\n{self.output(proc)}")
                for name in watch.names(0.5):
                    if not name.endswith(".h5.tmp"):
                        continue
                    signal_all(frozen, signal.SIGSTOP)
                    self.tries += 1
                    # Node 0 may still finish what needs no more of node 1.
                    time.sleep(1.0)
                    final = os.path.join(chk, name[:-len(".tmp")])
                    if os.path.exists(os.path.join(chk, name)) and not os.path.exists(final):
                        self.cluster.kill_node(1)
                        return name[:-len(".tmp")]
                    signal_all(frozen, signal.SIGCONT)
            self.fail("no checkpoint write was caught")
        finally:
            watch.close()

    # --- the case --------------------------------------------------------------------

    def lose_node(self, model, phase):
        ref = self.reference(model)
        cwd = os.path.join(self.tmp, f"{model}-{phase}")
        os.makedirs(os.path.join(cwd, "out"))
        with open(os.path.join(cwd, "in.toml"), "w", encoding="utf-8") as f:
            f.write(INPUTS[model])
        out = os.path.join(cwd, "out", "run.h5")
        chk = os.path.join(cwd, "out", "run.chk")
        env = sc.child_env({**ONE_THREAD, **PHASE_ENV[phase]})
        proc = self.cluster.popen(1, [sc.STRATA_BIN, "run", "in.toml"], cwd=cwd, env=env)
        try:
            self.wait_for(proc, "a first checkpoint",
                          lambda: os.path.isdir(chk) and any(n.endswith(".h5") for n in os.listdir(chk)))
            if phase == "checkpoint":
                caught = self.kill_in_checkpoint(proc, chk)
            else:
                self.kill_in_sleep(proc, f"a rank of node 0 in the {phase}' delay")
            killed = time.monotonic()
            try:
                stdout, stderr = proc.communicate(timeout=LOST_NODE_S)
            except subprocess.TimeoutExpired:
                self.cluster.kill_jobs(proc)
                self.fail(f"mpirun still runs {LOST_NODE_S} s after node 1 was lost:\n{self.output(proc)}")
            took = time.monotonic() - killed
        finally:
            self.cluster.kill_jobs(proc)
            if proc.poll() is None:
                proc.wait()
        text = stdout.decode(errors="replace")[-3000:] + stderr.decode(errors="replace")[-3000:]
        caught_on = f", caught on checkpoint write {self.tries}" if phase == "checkpoint" else ""
        print(f"\n  {model}, {phase}: mpirun exit {proc.returncode} {took:.1f} s after the kill{caught_on}",
              file=sys.stderr)
        self.assertIn(proc.returncode, LOST_NODE_EXITS, text)

        # The output: readable, not complete, nothing stray beside it.
        self.assertTrue(os.path.exists(out), "no output")
        self.assertNotEqual(status(out), "complete")
        self.assertEqual(set(os.listdir(os.path.join(cwd, "out"))) - ALLOWED, set(), "stray files beside the output")
        if phase == "checkpoint":
            self.assertFalse(os.path.exists(os.path.join(chk, caught)), "the caught checkpoint completed")

        # Continued on node 0 alone.
        restart = self.cluster.exec_command(0, [sc.MPIEXEC, "--oversubscribe", "-np", str(RESTART_RANKS[model]),
                                                sc.STRATA_BIN, "run", "in.toml", "--restart"])
        res = sc.run_command(restart, cwd, env=ONE_THREAD)
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertIn("restarted from", res.stdout, res.describe())
        self.assertEqual(status(out), "complete")
        self.assertEqual(set(os.listdir(os.path.join(cwd, "out"))) - ALLOWED, set(), "stray files after the restart")
        self.assertEqual([n for n in os.listdir(chk) if not n.endswith(".h5")], [])
        got = results(out)
        self.assertEqual(sorted(got), sorted(ref))
        differing = [k for k in ref if got[k] != ref[k]]
        self.assertEqual(differing, [], "the restarted run differs from the uninterrupted one")

    def test_shallow_water_during_steps(self):
        self.lose_node("shallow_water", "steps")

    def test_shallow_water_during_a_frame_write(self):
        self.lose_node("shallow_water", "output")

    def test_shallow_water_during_a_checkpoint_write(self):
        self.lose_node("shallow_water", "checkpoint")

    def test_md_during_steps(self):
        self.lose_node("md", "steps")

    def test_md_during_a_frame_write(self):
        self.lose_node("md", "output")

    def test_md_during_a_checkpoint_write(self):
        self.lose_node("md", "checkpoint")

    def test_pricing_during_steps(self):
        self.lose_node("pricing", "steps")

    def test_pricing_during_a_checkpoint_write(self):
        # Pricing writes its results once, at the end: no frames to land in.
        self.lose_node("pricing", "checkpoint")


if __name__ == "__main__":
    cl.skip_unless_possible()
    unittest.main(verbosity=2)
