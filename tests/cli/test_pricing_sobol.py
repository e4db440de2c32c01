#!/usr/bin/env python3
"""End to end: pricing.sampler = "sobol" (inputs/pricing/sobol.toml).

1. Prices within 4 standard errors of their references: Black-Scholes, the
   discrete geometric Asian's closed form, and the arithmetic Asian's
   independent value of test_pricing_payoffs.py (same asset and fixings;
   under GBM the price depends only on the fixing dates, not on the grid).
   The standard error is the spread of 16 replicate means over sqrt(16),
   so (price - reference) / stderr is Student's t with 15 degrees of
   freedom: |t| > 4 has probability 0.001.
2. Bitwise identical results for 1, 2 and 3 ranks and another chunk size:
   a point's index is the global sample index, its scrambling a function of
   (seed, replicate, dimension) only; and across a restart from a
   checkpoint (with control variates on).
3. Convergence for a smooth payoff: the RMSE of the replicate means of a
   geometric Asian call struck at 60 against its closed form at N = 2^10,
   2^12, 2^14 points per replicate (64 replicates) falls faster than
   1/sqrt(N). Deep in the money the payoff is G - K, smooth in the
   normals, on all but 4e-4 of the paths (ln G is normal with standard
   deviation 0.25 sqrt(13 * 25 / (6 * 144)) = 0.153, and ln 60 lies 3.3 of
   them below its mean); at the money the kink at G = K slows scrambled
   Sobol' to about N^-0.75. Each replicate's squared
   error is sigma^2 chi^2_1 (near normal means), so the log of the RMSE
   over R replicates has standard deviation ~ 1/sqrt(2R) = 0.088; the least-
   squares slope over ln N at three points 2 ln 2 apart then has standard
   deviation 0.088 / sqrt(8 (ln 2)^2) = 0.045. The fitted slope must lie
   below -0.5 - 4 * 0.045 = -0.68: Monte Carlo's -0.5 is rejected at 4
   standard deviations (measured: -1.06).
"""

import math
import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

BOOK = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "sobol.toml")
# The input's 16 replicates of 2^16 points: 4 reduction blocks, so 2 and 3
# ranks share them out.
SETS = []
# test_pricing_payoffs.py's asian_arithmetic (scripts/reference/pricing_mc.py).
INDEPENDENT = {"arithmetic_asian_call": (6.683153, 0.000055)}
CLOSED_FORM = ["european_call", "geometric_asian_call"]


class PricingSobol(sc.PricingBook):
    BOOK = BOOK
    ARGS = SETS
    RUNS = [("np1", None, []), ("np2", 2, []), ("np3", 3, []),
            ("np1_chunk", None, ["--set", "pricing.chunk_paths=16384"])]

    def test_references_within_4_standard_errors(self):
        self.check_references(CLOSED_FORM, INDEPENDENT)

    def test_bitwise_identical_for_ranks_and_chunks(self):
        self.check_same_bits()

    def test_replicates_reported(self):
        _, out = self.runs["np1"]
        self.results("np1")
        with h5py.File(out, "r") as f:
            g = f["pricing/geometric_asian_call"]
            reps = g["price"].attrs["replicate_prices"]
            self.assertEqual(len(reps), 16)
            mean = sum(reps) / len(reps)
            se = math.sqrt(sum((x - mean) ** 2 for x in reps) / (len(reps) - 1) / len(reps))
            self.assertAlmostEqual(g["price"][()], mean, delta=1e-12 * abs(mean))
            self.assertAlmostEqual(g["stderr"][()], se, delta=1e-9 * se)


class SobolConvergence(sc.StrataTestCase):
    REPLICATES = 64

    def rmse(self, points):
        out = self.path(f"n{points}.h5")
        res = self.strata("run", BOOK, "-o", out, "--set", f"pricing.paths={points * self.REPLICATES}",
                          "--set", f"pricing.replicates={self.REPLICATES}", "--set", "pricing.instrument.1.strike=60")
        self.assertEqual(res.returncode, 0, res.describe())
        with h5py.File(out, "r") as f:
            g = f["pricing/geometric_asian_call"]
            ref = g["reference_price"][()]
            reps = g["price"].attrs["replicate_prices"]
        self.assertEqual(len(reps), self.REPLICATES)
        return math.sqrt(sum((x - ref) ** 2 for x in reps) / len(reps))

    def test_error_falls_faster_than_monte_carlo(self):
        xs, ys = [], []
        for m in (10, 12, 14):
            xs.append(m * math.log(2.0))
            ys.append(math.log(self.rmse(1 << m)))
        xbar, ybar = sum(xs) / 3, sum(ys) / 3
        slope = sum((x - xbar) * (y - ybar) for x, y in zip(xs, ys)) / sum((x - xbar) ** 2 for x in xs)
        self.assertLess(slope, -0.68, f"RMSE slope {slope:.3f} (errors {[math.exp(y) for y in ys]})")


class SobolRestart(sc.StrataTestCase):
    """A run stopped at its first checkpoint and restarted on 2 ranks ends
    with the bits of the uninterrupted run: each replicate's tree nodes are
    checkpointed, and the control variate's pilot is recomputed alike."""

    def test_restart_equals_uninterrupted(self):
        with open(BOOK, encoding="utf-8") as f:
            text = f.read()
        # 4 replicates of 2^16 points: 4 blocks, one per step and checkpoint.
        text = text.replace("[pricing]\n", "[pricing]\ncontrol_variate = true\nchunk_paths = 16384\n", 1)
        text = text.replace("paths = 1_048_576", "paths = 262_144").replace("replicates = 16", "replicates = 4")
        text += "\n[checkpoint]\nevery_steps = 1\nevery_seconds = 0\nkeep = 10\n"
        self.write("in.toml", text)

        def read(path):
            with h5py.File(path, "r") as f:
                return sc.result_bits(f)

        ref, restarted = sc.run_and_restart_from_oldest(self, "in.toml", read, None)
        self.assertEqual(restarted, ref)


class SobolInput(sc.BadPricingInput):
    def test_too_few_paths_for_replicates(self):
        res = self.strata("run", BOOK, "-o", self.path("x.h5"), "--set", "pricing.paths=8",
                          "--set", "pricing.replicates=16")
        self.assertExit(res, 2)
        self.assertInOutput("pricing.paths", res.stderr, res)
        self.assertFalse(os.path.exists(self.path("x.h5")))

    def test_more_dimensions_than_the_direction_table(self):
        res = self.strata("run", BOOK, "-o", self.path("x.h5"), "--set", "pricing.steps_per_year=5000")
        self.assertExit(res, 2)
        self.assertInOutput("pricing.sampler", res.stderr, res)
        self.assertInOutput("3667", res.stderr, res)
        self.assertFalse(os.path.exists(self.path("x.h5")))

    def test_unknown_sampler_names_the_choices(self):
        res = self.strata("run", BOOK, "-o", self.path("x.h5"), "--set", "pricing.sampler=halton")
        self.assertExit(res, 2)
        self.assertInOutput("sobol", res.stderr, res)


if __name__ == "__main__":
    unittest.main(verbosity=2)
