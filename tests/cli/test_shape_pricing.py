#!/usr/bin/env python3
"""What a price asks of a GPU (/performance/shape, docs/gpu.md), counted
on the host with its launches sized as on a GPU (STRATA_LAUNCH_AS=cuda,
an H200's 132 x 2,048 resident threads):

- a European price's first launch fills the device (a block of 256 lanes
  for each 256 threads it holds) instead of starting at one 16-sample
  slice, and each step at most doubles: 2^26 paths in 3 steps, each one
  sampling launch of at least 2^17 threads, one reduction and one wait;
- the sizes do not move a bit of any result: the prices, errors and Greeks
  are those of the same run with the host's sizes;
- an American price's pricing pass after its regression pass starts again
  at the device's size, not at one slice: each phase is one step.

The counts are the run's structure, not its speed (test_shape_counts.py).
"""

import os

import h5py
import numpy as np

import strata_cli as sc

EUROPEAN = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "european_bench.toml")
AMERICAN = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "american.toml")
GPU = {"STRATA_LAUNCH_AS": "cuda"}
HOST = {"STRATA_LAUNCH_AS": "host"}


def compute_counts(path):
    with h5py.File(path, "r") as f:
        return {k: np.asarray(v[()]) for k, v in f["performance/shape/compute"].items()}


def same_results(test, a, b):
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        names = []
        fa["pricing"].visit(lambda n: names.append(n) if isinstance(fa["pricing"][n], h5py.Dataset) else None)
        test.assertGreater(len(names), 0)
        for n in names:
            test.assertEqual(fa["pricing"][n][()].tobytes(), fb["pricing"][n][()].tobytes(), n)


class PricingShape(sc.StrataTestCase):

    def run_input(self, name, path, env, *sets):
        # The host backend on any machine: the comparison is of the host's
        # own sizes with the host sized as a GPU (a CUDA run ignores
        # STRATA_LAUNCH_AS and sizes by its device).
        args = ["run", path, "-o", name, "--backend", "host"]
        for s in sets:
            args += ["--set", s]
        self.assertExit(self.strata(*args, env=env), 0)
        return self.path(name)

    def test_european_launches_fill_the_device(self):
        paths = 2 ** 26
        gpu = self.run_input("gpu.h5", EUROPEAN, GPU, f"pricing.paths={paths}")
        host = self.run_input("host.h5", EUROPEAN, HOST, f"pricing.paths={paths}")
        c = compute_counts(gpu)
        sizes = dict(zip(c["size_threads"].tolist(), c["size_launches"].tolist()))
        sampling = {t: n for t, n in sizes.items() if t >= 2 ** 17}
        self.assertEqual(sum(sampling.values()), 3, sizes)
        self.assertEqual(max(sampling), 2 * 132 * 2048, sizes)   # the second step doubles the first
        self.assertLessEqual(int(c["launches"]), 6)
        self.assertLessEqual(int(c["waits"]), 3)
        # The host's own sizes: a slice at first, doubling; many more launches.
        self.assertGreater(int(compute_counts(host)["launches"]), 10 * int(c["launches"]))
        same_results(self, gpu, host)

    def test_american_pricing_pass_restarts_at_the_device_size(self):
        gpu = self.run_input("am_gpu.h5", AMERICAN, GPU)
        host = self.run_input("am_host.h5", AMERICAN, HOST)
        c = compute_counts(gpu)
        # american.toml: 65,536 regression paths (4 blocks of 256 lanes),
        # 131,072 priced (8 blocks): each phase in one step, every block in
        # its launches; the reductions are the launches of fewer threads.
        lanes = sorted(t for t in c["size_threads"].tolist() if t >= 256)
        self.assertEqual(lanes, [4 * 256, 8 * 256])
        self.assertLess(int(c["launches"]), int(compute_counts(host)["launches"]))
        same_results(self, gpu, host)

    def test_an_unknown_launch_shape_is_refused(self):
        res = self.strata("run", EUROPEAN, "-o", "bad.h5", env={"STRATA_LAUNCH_AS": "tpu"})
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("STRATA_LAUNCH_AS", res.stderr)
        self.assertFalse(os.path.exists(self.path("bad.h5")))


if __name__ == "__main__":
    sc.main()
