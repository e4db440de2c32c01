"""strata under a real Slurm cluster of two simulated nodes: one slurmd per
node, each inside its node's network and UTS namespaces (its own hostname
and address, tests/cluster/cluster.py), slurmctld on the head node. The
sbatch template runs a diffusion problem with --nodes=2 --ntasks-per-node=1,
once through srun and PMIx, once through mpirun (which starts its daemons
on the nodes through Slurm); each run must complete, its ranks must have run on
both hostnames (the output's `hosts` attribute), and its fields must be
bitwise those of the same input on one rank outside Slurm (the grid models
promise the same bits for any rank count).

Run by ctest (label slurm) as `$STRATA_PYTHON tests/slurm/test_slurm_nodes.py`
with STRATA_BIN and STRATA_SOURCE_DIR set, or by hand from the repository
root as root. Exits 77 (skipped) without root or network namespaces.
Leaves no daemon, namespace or temporary directory behind, whatever
happens. Set STRATA_KEEP_TMP=1 to keep the job directory and Slurm logs.
"""

import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "cli"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "cluster"))
sys.path.insert(0, HERE)

from strata_cli import (SOURCE_DIR, as_str, check_binary, child_env, h5py,  # noqa: E402
                        make_tmpdir, np, raw_bytes, remove_tmpdir, run_strata)
import cluster as simulated  # noqa: E402
from slurm_cluster import SlurmCluster, read_text  # noqa: E402

SCRIPTS = os.path.join(SOURCE_DIR, "scripts", "slurm")
GAUSSIAN = os.path.join(SOURCE_DIR, "inputs", "diffusion", "gaussian.toml")
NODES = 2
# A job here takes seconds; every wait is bounded.
JOB_TIMEOUT_S = 120
FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
                "DEADLINE", "PREEMPTED"}
# 32^3 cells, 18 steps, 6 frames, split along z between the nodes: a halo
# message each way every step.
RUN = ["--set", "diffusion.nx=32", "--set", "diffusion.ny=32", "--set", "diffusion.nz=32",
       "--set", "diffusion.decomposition=[1,1,2]"]


def field_bits(h5file):
    """{name: (dtype, raw bytes)} of the field u, its frame times and every diagnostics series."""
    found = {}
    for name in ["u", "time"] + [f"diagnostics/{k}" for k in h5file["diagnostics"]]:
        value = np.asarray(h5file[name][()])
        found[name] = (str(value.dtype), raw_bytes(value))
    return found


class SlurmNodesTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        check_binary()
        cls.tmp = make_tmpdir("slurm-nodes")
        cls.addClassCleanup(remove_tmpdir, cls.tmp)
        cls.nodes = simulated.Cluster(NODES, tag="slurm")
        # Cleanups run last-in first-out: Slurm's daemons stop before the
        # namespaces they run in go.
        cls.addClassCleanup(cls.nodes.close)
        cls.cluster = SlurmCluster(os.path.join(cls.tmp, "cluster"), nodes=cls.nodes)
        cls.addClassCleanup(cls.stop_cluster)
        cls.cluster.start_for_test(f"{NODES}-node cluster")

    @classmethod
    def stop_cluster(cls):
        cls.cluster.stop()
        left = cls.cluster.stray_processes()
        if left:
            raise AssertionError(f"processes of the test cluster still running: {left}")

    def setUp(self):
        self.job_files = []
        self.workdir = os.path.join(self.tmp, self.id().rsplit(".", 1)[-1])
        os.makedirs(self.workdir)

    def slurm(self, *args, env=None, timeout=60):
        proc = self.cluster.run(list(args), check=False, timeout=timeout, env=dict(child_env(env)), cwd=self.workdir)
        if proc.returncode != 0:
            self.fail(f"{' '.join(args)}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}\n{self.diagnostics()}")
        return proc

    def job_state(self, job_id):
        out = self.cluster.run(["scontrol", "show", "job", "-o", job_id], check=False).stdout
        return dict(f.split("=", 1) for f in out.split() if "=" in f)

    def wait_job_done(self, job_id):
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while time.monotonic() < deadline:
            fields = self.job_state(job_id)
            if fields.get("JobState") in FINAL_STATES:
                return fields
            if "held" in fields.get("Reason", ""):   # launch_failed_requeued_held: it would wait forever
                self.fail(f"job {job_id} held: {fields.get('Reason')}\n{self.diagnostics()}")
            time.sleep(0.5)
        self.fail(f"timed out after {JOB_TIMEOUT_S} s waiting for job {job_id}\n{self.diagnostics()}")

    def diagnostics(self):
        parts = [self.cluster.logs()]
        for path in self.job_files:
            parts.append(f"--- job output {path} ---\n{read_text(path)}")
        return "\n".join(parts)

    def test_run_sbatch_on_two_nodes_srun(self):
        self.run_on_two_nodes("srun")

    def test_run_sbatch_on_two_nodes_mpirun(self):
        self.run_on_two_nodes("mpirun")

    def run_on_two_nodes(self, launcher):
        start = time.monotonic()
        # The same input on one rank, outside Slurm: the reference bits.
        ref = run_strata(["run", GAUSSIAN, *RUN, "--set", "diffusion.decomposition=[1,1,1]", "-o", "ref.h5"],
                         self.workdir, ranks=1)
        self.assertEqual(ref.returncode, 0, ref.describe())

        job = self.slurm("sbatch", "--parsable", f"--nodes={NODES}", "--ntasks-per-node=1",
                         os.path.join(SCRIPTS, "run.sbatch"), GAUSSIAN, *RUN, "-o", "out/run.h5",
                         env={"STRATA_LAUNCHER": launcher}).stdout.strip().split(";")[0]
        log = os.path.join(self.workdir, f"strata-run-{job}.out")
        self.job_files.append(log)
        fields = self.wait_job_done(job)
        self.assertEqual((fields.get("JobState"), fields.get("ExitCode")), ("COMPLETED", "0:0"),
                         f"job {job}\n{self.diagnostics()}")
        self.assertEqual(fields.get("NumNodes"), str(NODES), f"job {job}: {fields}")
        self.assertIn("strata finished (exit 0)", read_text(log))

        hostnames = [n.hostname for n in self.nodes.nodes]
        with h5py.File(os.path.join(self.workdir, "out", "run.h5"), "r") as got, \
                h5py.File(os.path.join(self.workdir, "ref.h5"), "r") as want:
            self.assertEqual(as_str(got.attrs["status"]), "complete")
            self.assertEqual(int(got.attrs["ranks"]), NODES)
            hosts = [as_str(h) for h in got.attrs["hosts"]]
            # One rank a node, in the node order Slurm allocates (its node list, sorted by name).
            self.assertEqual(sorted(hosts), sorted(hostnames), f"the ranks' hosts: {hosts}")
            self.assertEqual(field_bits(got), field_bits(want), "the two-node run differs from one rank's")
        print(f"sbatch --nodes={NODES} run of diffusion under {launcher}: {time.monotonic() - start:.1f} s, "
              f"ranks on {hosts}",
              file=sys.stderr)


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("skipped: the multi-node Slurm test starts slurmctld/slurmd/munged and network namespaces: "
              "it needs root", file=sys.stderr)
        sys.exit(77)
    simulated.skip_unless_possible()   # exits 77, saying why, where namespaces cannot be made
    outcome = unittest.main(verbosity=2, exit=False).result
    sys.exit(0 if outcome.wasSuccessful() else 1)
