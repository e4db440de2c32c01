#!/usr/bin/env python3
"""End to end: the host's batched path-group kernel
(kernels/pricing/path_group_batched.hpp), which every host run of GBM
and Heston assets on Philox draws takes: the arithmetic Asian of
inputs/pricing/asian_bench.toml on its 12 fixing dates, with antithetic
pairs, a max-of-two call on correlated assets, and the Heston call of
inputs/pricing/heston_bench.toml (QE; on 12 steps a year its
discretisation bias is not bounded here, so it takes part in 2 and 3
only: test_pricing_models.py checks Heston prices).

1. Prices within 4 standard errors of their references (the Asian's
   independent value of test_pricing_payoffs.py, Stulz's closed form), in
   fp64 and fp32.
2. Bitwise identical results on 1 and 3 ranks and another chunk size, in
   fp64 and fp32: the batch computes every sample of the run, so libmvec's
   rounding is the same wherever a sample runs.
3. A run stopped at its first checkpoint and restarted on 2 ranks ends with
   the bits of the uninterrupted run.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

BOOK = """[run]
model = "pricing"
seed = 20261123
output = "out/batched.h5"

[pricing]
paths = {paths}
antithetic = true
rate = 0.05
steps_per_year = 12
correlation = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.6, 0.0], [0.0, 0.6, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
{extra}
[[pricing.asset]]
name = "A"
spot = 100.0
dividend = 0.02
vol = 0.25

[[pricing.asset]]
name = "B1"
spot = 100.0
dividend = 0.01
vol = 0.2

[[pricing.asset]]
name = "B2"
spot = 95.0
vol = 0.3

[[pricing.asset]]
name = "H"
spot = 100.0
dividend = 0.02
model = "heston"
v0 = 0.04
kappa = 4.0
theta = 0.25
xi = 1.0
rho = -0.5

[[pricing.instrument]]
name = "heston_call"
option = "call"
strike = 100.0
maturity = 1.0
assets = ["H"]

[[pricing.instrument]]
name = "asian_call"
type = "asian"
average = "arithmetic"
fixings = 12
option = "call"
strike = 100.0
maturity = 1.0
assets = ["A"]

[[pricing.instrument]]
name = "basket_max_call"
type = "basket"
basket = "max"
option = "call"
strike = 100.0
maturity = 1.0
assets = ["B1", "B2"]
"""
# inputs/pricing/asian_bench.toml's value (scripts/reference/pricing_mc.py).
INDEPENDENT = {"asian_call": (6.683153, 0.000055)}
CLOSED_FORM = ["basket_max_call"]


def write_book(tmp, name, paths, extra=""):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(BOOK.format(paths=paths, extra=extra))
    return path


class BatchedBook(sc.PricingBook):
    BOOK = None
    FP32 = ["--precision", "fp32"]
    RUNS = [("np1", None, []), ("np3", 3, []), ("np1_chunk", None, ["--set", "pricing.chunk_paths=40000"]),
            ("fp32_np1", None, FP32), ("fp32_np3", 3, FP32)]

    @classmethod
    def setUpClass(cls):
        tmp = sc.make_tmpdir("batched_input")
        cls.addClassCleanup(sc.remove_tmpdir, tmp)
        cls.BOOK = write_book(tmp, "batched.toml", "131_072")
        super().setUpClass()

    def bits(self, tag):
        self.results(tag)
        with h5py.File(self.runs[tag][1], "r") as f:
            return sc.result_bits(f)

    def test_references_within_4_standard_errors(self):
        self.check_references(CLOSED_FORM, INDEPENDENT)

    def test_fp32_references_within_4_standard_errors(self):
        got = self.results("fp32_np1")
        z = (got["basket_max_call"]["price"] - got["basket_max_call"]["reference_price"]) / got["basket_max_call"]["stderr"]
        self.assertLess(abs(z), 4.0)
        value, se = INDEPENDENT["asian_call"]
        z = (got["asian_call"]["price"] - value) / (got["asian_call"]["stderr"] ** 2 + se ** 2) ** 0.5
        self.assertLess(abs(z), 4.0)

    def test_bitwise_identical_for_ranks_and_chunks(self):
        for tag in ("np3", "np1_chunk"):
            self.assertEqual(self.bits(tag), self.bits("np1"), f"{tag} differs from np1")
        self.assertEqual(self.bits("fp32_np3"), self.bits("fp32_np1"), "fp32: 3 ranks differ from 1")


class BatchedRestart(sc.StrataTestCase):
    def test_restart_equals_uninterrupted(self):
        # 4 chunks of 2^14 paths, one per step and checkpoint.
        extra = "chunk_paths = 16384\n\n[checkpoint]\nevery_steps = 1\nevery_seconds = 0\nkeep = 10\n"
        self.write("in.toml", BOOK.format(paths="65_536", extra=extra))

        def read(path):
            with h5py.File(path, "r") as f:
                return sc.result_bits(f)

        ref, restarted = sc.run_and_restart_from_oldest(self, "in.toml", read, None)
        self.assertEqual(restarted, ref)


if __name__ == "__main__":
    import unittest
    unittest.main(verbosity=2)
