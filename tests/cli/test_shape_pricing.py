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
  at the device's size, not at one slice: each phase is one step;
- a price whose blocks' lanes would leave the device idle (a few blocks of
  long paths, Greeks, an American: the STAC-A2 shape) runs a thread a
  sample and re-simulated scenario, its values then added up lane by lane
  in the lanes' own order (a Greek's terms in term order): the same bits
  as a thread a lane; the base thread reads its path once for all its
  spot bumps; its Longstaff-Schwartz fit runs on the device, three
  launches and a read-back a date.

The counts are the run's structure, not its speed (test_shape_counts.py).
"""

import os
import re
import subprocess
import sys

import h5py
import numpy as np

import strata_cli as sc

EUROPEAN = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "european_bench.toml")
AMERICAN = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "american.toml")
COST_MODEL = os.path.join(sc.SOURCE_DIR, "scripts", "gpu", "cost-model")
GPU = {"STRATA_LAUNCH_AS": "cuda"}
HOST = {"STRATA_LAUNCH_AS": "host"}


def compute_counts(path, phase="compute"):
    with h5py.File(path, "r") as f:
        g = f["performance/shape/" + phase]
        counts = {k: np.asarray(v[()]) for k, v in g.items()}
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in g["size_kernel"].attrs.get("names", [])]
        # Each launch size's kernel, without its namespaces.
        counts["kernels"] = [names[int(k)].split("::")[-1] for k in counts["size_kernel"]]
        return counts


def by_kernel(c):
    """{(kernel, threads): launches}"""
    return {(k, int(t)): int(n) for k, t, n in zip(c["kernels"], c["size_threads"], c["size_launches"])}


def kernel_bytes(c, kernel):
    """The device bytes a kernel's launches declare."""
    return sum(float(b) for k, b in zip(c["kernels"], c["size_device_bytes"]) if k == kernel)


def same_results(test, a, b):
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        names = []
        fa["pricing"].visit(lambda n: names.append(n) if isinstance(fa["pricing"][n], h5py.Dataset) else None)
        test.assertGreater(len(names), 0)
        for n in names:
            test.assertEqual(sc.raw_bytes(fa["pricing"][n][()]), sc.raw_bytes(fb["pricing"][n][()]), n)


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
        # 131,072 priced (8 blocks), in three path groups: each phase in one
        # step, a thread a sample (its lanes would hold 1,024 and 2,048 of
        # the device's 270,336 threads); the lane sums and reductions are
        # the launches of fewer threads.
        sampling = {k: n for k, n in by_kernel(c).items() if k[1] >= 2 ** 16}
        self.assertEqual(sampling, {("ExerciseStates<double>", 65536): 3, ("PathGroupKernel<double>", 131072): 3},
                         by_kernel(c))
        self.assertLess(int(c["launches"]), int(compute_counts(host)["launches"]))
        same_results(self, gpu, host)

    def test_a_stac_a2_like_price_runs_a_thread_a_sample(self):
        # Five Heston assets, 252 daily steps, an American basket put with
        # delta, gamma and vega per asset (16 slots; the spot bumps move the
        # base path, each vega's up and down bump re-simulates it: 10
        # re-simulations a sample), shrunk to 2,000 regression and 2,000
        # priced paths: one block each, 256 threads a launch a thread a lane.
        stac = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "stac_a2.toml")
        sets = ["pricing.paths=2000", "pricing.regression_paths=2000"]
        gpu = self.run_input("stac_gpu.h5", stac, GPU, *sets)
        host = self.run_input("stac_host.h5", stac, HOST, *sets)
        c = compute_counts(gpu)
        # The regression pass a launch of a thread a sample (2,000); the
        # pricing pass a launch of 11 threads a sample (22,000: the base
        # with its spot bumps, and each re-simulated scenario), each Greek
        # term's value kept apart; then the lane sums (16 slots x 256
        # lanes), which add a Greek's terms in term order, and the lane tree
        # (16 slots x 1 block).
        self.assertEqual(by_kernel(c), {("ExerciseStates<double>", 2000): 1, ("PathGroupKernel<double>", 11 * 2000): 1,
                                        ("SampleMoments", 16 * 256): 1, ("GroupLaneTree", 16): 1})
        self.assertEqual(int(c["launches"]), 4)
        self.assertEqual(int(compute_counts(host)["threads_median"]), 256)
        # The base thread values its American on the 11 spot bumps in one
        # pass over its path (each date's cells read once for all of them):
        # a sample's thread declares its path written, then read for the
        # base price and once for the bumps, 3 x 252 dates x 5 assets x 8
        # bytes (30 KB), where a pass a bump was 13 (131 KB).
        per_thread = kernel_bytes(c, "PathGroupKernel<double>") / (11 * 2000)
        self.assertLess(per_thread, 40e3)
        same_results(self, gpu, host)
        # The Longstaff-Schwartz fit runs where the states are: each of the
        # 251 dates before the last a launch of a thread a sample (2,000),
        # a lane sum of one thread per lane and term (the default degree 3:
        # the symmetric matrix's 10 and the right-hand side's 4 terms, 256
        # lanes) and a lane tree of one per block and term, and one
        # read-back; four more waits free its buffers.
        fit = compute_counts(gpu, "regression_fit")
        self.assertEqual(by_kernel(fit), {("FitDate", 2000): 251, ("FitLaneSums", 14 * 256): 251,
                                          ("FitLaneTree", 14): 251})
        # A date's states are consecutive (FitDate reads two doubles a
        # sample, not two strided sectors) and it writes 14 terms: 144
        # bytes a sample, where strided rows and 20 terms were 240.
        self.assertLess(kernel_bytes(fit, "FitDate") / (251 * 2000), 200)
        self.assertLessEqual(int(fit["waits"]), 251 + 4)
        # The cost model with each kernel's occupancy and a saturation of
        # 0.5: 2,000 threads fill twice the share of the device they fill by
        # default (the full rate at half the device's threads), and no more
        # because the path kernels' occupancy (a quarter) is above what they
        # hold; the sampling work is predicted twice as fast. A kernel that
        # holds fewer threads than the launch has is capped at its occupancy:
        # at 0.001, the 2,000 and 22,000 threads (0.0074 and 0.081 of the
        # device) run at 0.001 of it.
        work = []
        for occupancy, saturation in ((None, "1"), (0.25, "0.5"), (0.001, "1")):
            args = ["--kernels", "none"]
            if occupancy:
                table = self.path(f"kernels{occupancy}.tsv")
                with open(table, "w") as f:
                    f.write("# occupancy\tregisters\tfunctor\n")
                    f.write(f"{occupancy}\t128\tPathGroupKernel<double>\n{occupancy}\t82\tExerciseStates<double>\n")
                args = ["--kernels", table]
            r = subprocess.run([sys.executable, COST_MODEL, gpu, *args, "--saturation", saturation],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            work.append(float(re.search(r"work ([0-9.]+)", r.stdout).group(1)))
        self.assertAlmostEqual(work[0] / work[1], 2.0, delta=0.05, msg=work)
        self.assertGreater(work[2] / work[0], 7.0, work)
        self.assertLess(work[2] / work[0], 22000 / 270336 / 0.001, work)

    def test_an_unknown_launch_shape_is_refused(self):
        res = self.strata("run", EUROPEAN, "-o", "bad.h5", env={"STRATA_LAUNCH_AS": "tpu"})
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("STRATA_LAUNCH_AS", res.stderr)
        self.assertFalse(os.path.exists(self.path("bad.h5")))


if __name__ == "__main__":
    sc.main()
