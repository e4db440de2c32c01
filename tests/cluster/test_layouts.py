"""Every model family gives the same bits however its ranks sit on nodes.

Each family's smallest example input, shrunk with --set to a second or two,
runs on 4 ranks three times: on one node (plain mpirun: shared memory
between all ranks), on 2 nodes x 2 ranks and on 4 nodes x 1 rank of a
simulated cluster (tests/cluster/cluster.py: network namespaces, ranks of
different nodes talk over TCP). Every dataset of the outputs (fields,
trajectories, observables, diagnostics, pricing results, the input as
stored) and their attributes must be equal byte for byte; only what
measures the run itself is left out: /performance, /timers and the root
attributes `created`, `devices` and `hosts`.

Needs root (network namespaces); exits 77 (skipped) otherwise.
"""

import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, os.pardir, "cli"))
import cluster as cl  # noqa: E402
import h5py  # noqa: E402
import strata_cli as sc  # noqa: E402

RANKS = 4
QUIET = {"STRATA_PROGRESS": "off", "OMP_NUM_THREADS": "1"}

# family -> (input under inputs/, --set overrides): tiny, a few frames each.
FAMILIES = {
    "pricing": ("pricing/payoffs.toml", ["pricing.paths=20000", "pricing.steps_per_year=12"]),
    "diffusion": ("diffusion/gaussian.toml", ["diffusion.nx=16", "diffusion.ny=16", "diffusion.nz=16"]),
    "shallow_water": ("shallow_water/gaussian.toml",
                      ["shallow_water.nx=16", "shallow_water.ny=16", "shallow_water.sim_time=14400"]),
    "euler2d": ("euler2d/thermal.toml", ["euler2d.nx=20", "euler2d.nz=10", "euler2d.sim_time=100"]),
    # 8 x 4 x 4 fcc cells: wide enough along x for four ranks and the cutoff.
    "md": ("md/lj_liquid.toml", ["md.cells=[8,4,4]", "md.steps=40", "md.thermo_every=10", "md.output_every=20"]),
    "nbody": ("nbody/plummer.toml", ["nbody.n=64", "nbody.t_end=0.25", "nbody.diag_every=8",
                                     "nbody.output_every=16"]),
}

# Open MPI's account (btl_base_verbose) of the transport from one rank
# (its host) to another (its rank number).
USING_BTL = re.compile(r"^\[([^:\]]+):\d+\] mca: bml: Using (\w+) btl for send to \[\[\d+,\d+\],(\d+)\]", re.M)

# What describes the run rather than its result.
SKIPPED_GROUPS = ("performance", "timers")
SKIPPED_ROOT_ATTRS = ("created", "devices", "hosts")
# HDF5's dimension-scale bookkeeping: object references, whose bytes are
# addresses inside the file (the scales themselves are compared).
SKIPPED_ATTRS = ("REFERENCE_LIST", "DIMENSION_LIST")


def contents(path):
    """{name: bytes} of every dataset and attribute of an output but those
    that measure the run; attributes as NAME@ATTR (the root's as @ATTR)."""
    out = {}

    def attrs(name, obj):
        for key, value in obj.attrs.items():
            if (name == "" and key in SKIPPED_ROOT_ATTRS) or key in SKIPPED_ATTRS:
                continue
            out[f"{name}@{key}"] = sc.raw_bytes(value)

    def visit(name, obj):
        if name.split("/")[0] in SKIPPED_GROUPS:
            return
        attrs(name, obj)
        if isinstance(obj, h5py.Dataset):
            out[name] = obj.dtype.str.encode() + repr(obj.shape).encode() + sc.raw_bytes(obj[()])

    with h5py.File(path, "r") as f:
        attrs("", f)
        f.visititems(visit)
    return out


class Layouts(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        sc.check_binary()
        cls.tmp = sc.make_tmpdir("cluster-layouts")
        cl.remove_on_exit(cls.tmp)
        cls.clusters = {}
        try:
            cls.clusters = {2: cl.Cluster(2, tag="lay"), 4: cl.Cluster(4, tag="lay")}
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for c in cls.clusters.values():
            c.close()
        sc.remove_tmpdir(cls.tmp)

    def strata_args(self, family, out):
        inp, sets = FAMILIES[family]
        args = ["run", os.path.join(sc.SOURCE_DIR, "inputs", inp), "-o", out]
        for s in sets:
            args += ["--set", s]
        return args

    def run_on_nodes(self, family, nodes, mpirun_flags=()):
        """The family's run on `nodes` nodes of RANKS / nodes ranks each;
        returns (output path, combined output text). Each layout works in
        a folder of its own under the same output name: the input stored
        in /config names it."""
        cwd = os.path.join(self.tmp, f"{family}_{nodes}x{RANKS // nodes}")
        os.mkdir(cwd)
        out = f"{family}.h5"
        if nodes == 1:
            res = sc.run_strata(self.strata_args(family, out), cwd, ranks=RANKS, env=QUIET)
            self.assertEqual(res.returncode, 0, res.describe())
            return os.path.join(cwd, out), res.stdout + res.stderr
        cluster = self.clusters[nodes]
        env = sc.child_env(QUIET)
        res = cluster.run(RANKS // nodes, [sc.STRATA_BIN] + self.strata_args(family, out), cwd=cwd,
                          timeout=sc.TIMEOUT_S, env=env, mpirun_flags=mpirun_flags)
        text = res.stdout.decode(errors="replace") + res.stderr.decode(errors="replace")
        self.assertEqual(res.returncode, 0, f"{family} on {nodes} nodes:\n{text[-5000:]}")
        return os.path.join(cwd, out), text

    def check_family(self, family, mpirun_flags=()):
        ref_path, _ = self.run_on_nodes(family, 1)
        ref = contents(ref_path)
        self.assertGreater(len(ref), 10, f"{family}: hardly anything to compare")
        texts = {}
        for nodes in (2, 4):
            path, texts[nodes] = self.run_on_nodes(family, nodes, mpirun_flags)
            got = contents(path)
            self.assertEqual(sorted(got), sorted(ref), f"{family} on {nodes} nodes: other datasets")
            differing = [k for k in ref if got[k] != ref[k]]
            self.assertEqual(differing, [], f"{family} on {nodes} nodes differs from one node in {differing}")
        return texts

    def test_the_ranks_sit_node_major_on_nodes_of_their_own(self):
        for nodes, cluster in self.clusters.items():
            res = cluster.run(RANKS // nodes, ["hostname"], cwd=self.tmp, timeout=sc.TIMEOUT_S)
            self.assertEqual(res.returncode, 0, res.stderr.decode())
            # mpirun gathers each rank's output as it comes: count, not order.
            seen = sorted(res.stdout.decode().split())
            expected = sorted(n.hostname for n in cluster.nodes for _ in range(RANKS // nodes))
            self.assertEqual(seen, expected)
            self.assertEqual(len({n.hostname for n in cluster.nodes}), nodes)

    def test_pricing(self):
        # Once, with the transports' own account (btl_base_verbose): every
        # pair of ranks on different nodes talks over TCP, and rank 0
        # reaches every other node.
        texts = self.check_family("pricing", mpirun_flags=("--mca", "btl_base_verbose", "30"))
        for nodes, text in texts.items():
            cluster = self.clusters[nodes]
            per_node = RANKS // nodes
            node_of_host = {n.hostname: n.index for n in cluster.nodes}
            reached = set()
            for host, btl, peer in USING_BTL.findall(text):
                here, there = node_of_host[host], int(peer) // per_node
                if here != there:
                    self.assertEqual(btl, "tcp", f"{nodes} nodes: node {here} reaches node {there} over {btl}")
                    if here == 0:
                        reached.add(there)
            self.assertEqual(reached, set(range(1, nodes)), f"{nodes} nodes: TCP from node 0 to every other node")

    def test_diffusion(self):
        self.check_family("diffusion")

    def test_shallow_water(self):
        self.check_family("shallow_water")

    def test_euler2d(self):
        self.check_family("euler2d")

    def test_md(self):
        self.check_family("md")

    def test_nbody(self):
        self.check_family("nbody")


if __name__ == "__main__":
    cl.skip_unless_possible()
    unittest.main(verbosity=2)
