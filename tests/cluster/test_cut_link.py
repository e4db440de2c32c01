"""A network link cut mid-run ends the job, never hangs it (docs/faults.md).

On a simulated cluster (tests/cluster/cluster.py: one network namespace per
node, ranks talking TCP), a shallow_water run with one rank per node loses
the last node's link after its first checkpoint. The ranks still connected
must notice within the watchdog's allowance (run.watchdog_floor), say so
in one line naming rank, phase and peer, and mpirun must end with exit 76
within a bound; the checkpoints stay valid, and `--restart` continues the
run to the uninterrupted result, bit for bit.

What ends mpirun: its own rank exits 76 first; it then tells the cut node's
daemon to stop, which cannot arrive, until its TCP connection to that node
times out. The nodes' TCP gives up after 5 retransmissions (about 13 s:
net.ipv4.tcp_retries2, set in each node's namespace only) instead of
Linux's 15 (about 15 minutes). Open MPI's transports never end a rank on
such a timeout, so the code is the
watchdog's, 76 (they may print an error of their own first, `readv failed:
Connection timed out`, and wait on). Needs root and network namespaces; exits 77 otherwise.
"""

import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, os.pardir, "cli"))
import cluster as cl  # noqa: E402
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

FLOOR_S = 3
PEER_LOST = 76
# From the cut to mpirun's end: the watchdog (the floor, or 30 times the
# slowest recent step: up to 25 s on a busy machine), then mpirun's
# connection to the cut node timing out (about 13 s); a hang meets it.
BOUND_S = 120
STEP_DELAY_MS = 40

INPUT = sc.jet_input(every_steps=5, keep=50, sim_time=60000.0, output_interval=6000.0)


def results(path):
    """{dataset: bytes} of every result of a run (not timers, performance,
    health or config)."""
    out = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and name.split("/")[0] not in ("timers", "performance", "health", "config"):
            out[name] = np.asarray(obj[()]).tobytes()
    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return out


class CutLinkTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        # The uninterrupted run, once for both tests (2 ranks of this machine).
        sc.check_binary()
        ref_dir = sc.make_tmpdir("cut-link-ref")
        try:
            with open(os.path.join(ref_dir, "in.toml"), "w", encoding="utf-8") as f:
                f.write(INPUT)
            ref = sc.run_strata(["run", "in.toml", "-o", "ref.h5"], ref_dir, ranks=2)
            if ref.returncode != 0:
                raise AssertionError("the reference run failed:" + ref.describe())
            cls.expected = results(os.path.join(ref_dir, "ref.h5"))
        finally:
            sc.remove_tmpdir(ref_dir)

    def setUp(self):
        self.tmp = sc.make_tmpdir(self.id().rsplit(".", 1)[-1])
        self.addCleanup(sc.remove_tmpdir, self.tmp)
        with open(os.path.join(self.tmp, "in.toml"), "w", encoding="utf-8") as f:
            f.write(INPUT)

    def cut_mid_run(self, nodes):
        with cl.Cluster(nodes, tag="cut") as cluster:
            for node in cluster.nodes:
                subprocess.run(["ip", "netns", "exec", node.netns, "sysctl", "-q", "-w", "net.ipv4.tcp_retries2=5"],
                               check=True)
            args = [sc.STRATA_BIN, "run", "in.toml", "--set", f"run.watchdog_floor={FLOOR_S}"]
            env = {"STRATA_TEST_STEP_DELAY_MS": STEP_DELAY_MS, "STRATA_PROGRESS": "off"}
            proc = cluster.popen(1, args, cwd=self.tmp, env=env)
            try:
                sc.wait_for_path(self, proc, os.path.join(self.tmp, "out", "run.chk", sc.checkpoint_name(10)))
                cluster.cut_link(nodes - 1)
                cut = time.monotonic()
                try:
                    out, err = proc.communicate(timeout=BOUND_S)
                except subprocess.TimeoutExpired:
                    cluster.kill_jobs(proc)
                    out, err = proc.communicate()
                    self.fail(f"mpirun did not end within {BOUND_S} s of the cut:\n{out.decode()}\n{err.decode()}")
                took = time.monotonic() - cut
            finally:
                cluster.kill_jobs(proc)
            res = sc.Result(proc.args, self.tmp, proc.returncode, out, err, took)
            print(f"{nodes} nodes: mpirun exited {res.returncode} {took:.1f} s after the cut", file=sys.stderr)
            if res.returncode != PEER_LOST:
                self.fail(f"expected exit {PEER_LOST}:" + res.describe())
            self.assertLess(took, BOUND_S, res.describe())
            # A rank on the connected side names itself, the phase it was
            # in and the peer (the cut rank's halo, or all ranks).
            self.assertRegex(res.stderr, r"strata: rank \d+: error: a peer stopped answering: .+ has waited "
                                         r"[0-9.]+ s for (rank \d+|all ranks \(a collective\))", res.describe())
            self.assertIn("continue with: ", res.stderr, res.describe())
            with h5py.File(os.path.join(self.tmp, "out", "run.h5"), "r") as f:
                self.assertNotEqual(sc.as_str(f.attrs["status"]), "complete")
            chk = os.path.join(self.tmp, "out", "run.chk")
            self.assertEqual([n for n in os.listdir(chk) if n.endswith(".tmp")], [])

        # The job continues elsewhere (as a requeued job lands on other
        # nodes: here 2 ranks of this machine) from the newest checkpoint to
        # the uninterrupted result.
        done = sc.run_strata(["run", "in.toml", "--restart"], self.tmp, ranks=2, env={"STRATA_PROGRESS": "off"})
        self.assertEqual(done.returncode, 0, done.describe())
        self.assertIn("restarted from", done.stdout, done.describe())
        restarted = results(os.path.join(self.tmp, "out", "run.h5"))
        self.assertEqual(sorted(restarted), sorted(self.expected))
        for name, value in self.expected.items():
            self.assertEqual(restarted[name], value, f"{name} differs after the restart")

    def test_two_nodes(self):
        self.cut_mid_run(2)

    def test_three_nodes(self):
        self.cut_mid_run(3)


if __name__ == "__main__":
    cl.skip_unless_possible()
    sc.check_binary()
    unittest.main()
