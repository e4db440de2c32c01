#!/usr/bin/env python3
"""End to end: American (Bermudan) exercise by Longstaff-Schwartz
(inputs/pricing/american.toml, 2^17 pricing paths, 2^16 regression paths).

1. References computed here, independently of strata: a Cox-Ross-Rubinstein
   binomial tree with 40 steps per exercise interval that allows exercise
   at the same 50 dates (T/50, ..., T), and for the two-asset basket a
   Boyle-Evnine-Gibbs (1989) two-dimensional tree with 50 steps per
   interval and the same 10 dates. The trees' own error, measured as the
   change when the steps per interval halve, is below 2e-3 (basket) and
   5e-4 (single asset), under a fifth of a standard error.
   Longstaff-Schwartz is low-biased: its policy, fitted on finite paths, is
   not optimal. So a price passes when
       reference - ALLOWANCE - 4 se  <  price  <  reference + 4 se,
   ALLOWANCE being the policy's gap measured once with the same seed and
   regression paths but 2^22 pricing paths, plus 4 standard errors of that
   measurement (docs/validation.md records the figures).
   The tree gives 4.47793 for the Longstaff-Schwartz (2001) Table 1 case
   (S = 36, K = 40, r = 6%, vol = 20%, T = 1, 50 dates), matching their
   finite-difference value 4.478.
2. The American call on a non-dividend asset is the European call
   (Black-Scholes) within the same bounds; with a 10% dividend it is worth
   more than its European value, by many standard errors.
   strata's own reference (single-asset GBM Americans: a CRR tree of
   about 4000 steps with its error bound, reference_price and
   reference_error) agrees with the tree here within the two trees' bounds,
   and the price lies within the combined error of it: 4 se plus its
   bound above, and below also the policy's allowance. The basket has
   none, and the printed table carries the reference and its bound.
3. Price, standard error and exercise coefficients bitwise identical for 1,
   2 and 3 ranks with Philox and Sobol' paths, 1 and 2 with antithetic
   paths, and across a restart from a checkpoint on another rank count.
4. Bad input (basis, degree, exercise_dates, regression_paths, keys of
   other types) exits 2 naming the key and value.
5. The STAC-A2-like input (inputs/pricing/stac_a2.toml) runs, small, with
   a warm repetition.
"""

import math
import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

BOOK = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "american.toml")
RATE = 0.06
# The policy's measured low bias plus 4 of its standard errors (2^22 paths,
# seed 2001, 2^16 regression paths; docs/validation.md).
# The test's tree's own error bound (40 steps per interval; the docstring).
TREE_ERROR = 5e-4
ALLOWANCE = {"ls_put": 0.0055 + 4 * 0.0014, "call_no_dividend": 0.0044 + 4 * 0.0020,
             "call_dividend": 0.0065 + 4 * 0.0016, "basket_put": 0.0094 + 4 * 0.0037}


def bermudan_tree(spot, strike, vol, maturity, dates, per_date, call, dividend=0.0, delta=False):
    """Cox-Ross-Rubinstein tree, exercise allowed only every per_date steps
    (the dates T/dates, ..., T); with delta, (price, the delta of the first
    step's two nodes, (V_u - V_d) / (S u - S d))."""
    n = dates * per_date
    dt = maturity / n
    u = math.exp(vol * math.sqrt(dt))
    p = (math.exp((RATE - dividend) * dt) - 1.0 / u) / (u - 1.0 / u)
    disc = math.exp(-RATE * dt)

    def intrinsic(i):
        s = spot * u ** (i - 2.0 * np.arange(i + 1))
        return np.maximum(s - strike if call else strike - s, 0.0)

    v = intrinsic(n)
    for i in range(n - 1, 0, -1):
        v = disc * (p * v[:-1] + (1.0 - p) * v[1:])
        if i % per_date == 0:
            v = np.maximum(v, intrinsic(i))
    price = float(disc * (p * v[0] + (1.0 - p) * v[1]))
    return (price, float((v[0] - v[1]) / (spot * (u - 1.0 / u)))) if delta else price


def basket_tree(spots, vols, rho, strike, maturity, dates, per_date, weights=(0.5, 0.5)):
    """Bermudan put on w1 S1 + w2 S2 (GBM, correlation rho) on the
    Boyle-Evnine-Gibbs four-branch tree: log steps +-vol_i sqrt(dt), branch
    probabilities 1/4 (1 +- rho +- sqrt(dt) (nu_1/vol_1 +- nu_2/vol_2)),
    nu_i = r - vol_i^2 / 2."""
    n = dates * per_date
    dt = maturity / n
    h = [v * math.sqrt(dt) for v in vols]
    a = [(RATE - 0.5 * v * v) / v * math.sqrt(dt) for v in vols]
    puu, pud = 0.25 * (1 + rho + a[0] + a[1]), 0.25 * (1 - rho + a[0] - a[1])
    pdu, pdd = 0.25 * (1 - rho - a[0] + a[1]), 0.25 * (1 + rho - a[0] - a[1])
    disc = math.exp(-RATE * dt)

    def intrinsic(i):
        k = i - 2.0 * np.arange(i + 1)
        s1 = spots[0] * np.exp(k * h[0])[:, None]
        s2 = spots[1] * np.exp(k * h[1])[None, :]
        return np.maximum(strike - (weights[0] * s1 + weights[1] * s2), 0.0)

    v = intrinsic(n)
    for i in range(n - 1, -1, -1):
        v = disc * (puu * v[:-1, :-1] + pud * v[:-1, 1:] + pdu * v[1:, :-1] + pdd * v[1:, 1:])
        if i % per_date == 0 and i > 0:
            v = np.maximum(v, intrinsic(i))
    return float(v[0, 0])


def black_scholes(spot, strike, vol, maturity, call, dividend=0.0):
    d1 = (math.log(spot / strike) + (RATE - dividend + 0.5 * vol * vol) * maturity) / (vol * math.sqrt(maturity))
    d2 = d1 - vol * math.sqrt(maturity)
    cdf = lambda x: 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))  # noqa: E731
    if call:
        return spot * math.exp(-dividend * maturity) * cdf(d1) - strike * math.exp(-RATE * maturity) * cdf(d2)
    return strike * math.exp(-RATE * maturity) * cdf(-d2) - spot * math.exp(-dividend * maturity) * cdf(-d1)


def policy_bits(h5file):
    """result_bits plus each instrument's exercise coefficients."""
    out = sc.result_bits(h5file)
    for name in out:
        out[name]["exercise_coefficients"] = h5file[f"pricing/{name}/exercise_coefficients"][()].tobytes().hex()
    return out


def references():
    return {
        "ls_put": bermudan_tree(36.0, 40.0, 0.2, 1.0, 50, 40, call=False),
        "call_no_dividend": black_scholes(36.0, 40.0, 0.2, 1.0, call=True),
        "call_dividend": bermudan_tree(40.0, 35.0, 0.2, 1.0, 50, 40, call=True, dividend=0.1),
        "basket_put": basket_tree((100.0, 100.0), (0.2, 0.3), 0.5, 100.0, 1.0, 10, 50),
    }


class AmericanReferences(sc.PricingBook):
    BOOK = BOOK
    RUNS = [("np1", None, []), ("delta", None, ["--set", 'pricing.greeks=["delta"]'])]

    def test_tree_matches_longstaff_schwartz_finite_difference(self):
        # LS 2001 Table 1: finite-difference American value 4.478 (3 decimals).
        self.assertAlmostEqual(bermudan_tree(36.0, 40.0, 0.2, 1.0, 50, 40, call=False), 4.478, delta=0.0005)

    def test_prices_within_low_biased_bounds(self):
        got = self.results("np1")
        for name, ref in references().items():
            with self.subTest(name):
                r = got[name]
                price, se = r["price"], r["stderr"]
                self.assertLess(price, ref + 4 * se, f"{name}: {price} above {ref} by more than 4 se ({se})")
                self.assertGreater(price, ref - ALLOWANCE[name] - 4 * se,
                                   f"{name}: {price} below {ref} by more than the bias allowance and 4 se ({se})")

    def test_strata_reference_within_its_bound(self):
        got = self.results("np1")
        refs = references()
        for name in ("ls_put", "call_no_dividend", "call_dividend"):
            with self.subTest(name):
                r = got[name]
                self.assertIn("reference_price", r)
                self.assertIn("reference_error", r)
                ref, bound = float(r["reference_price"]), float(r["reference_error"])
                # A bound, not a standard error: positive, and far below the
                # Monte Carlo error it is compared beside.
                self.assertGreater(bound, 0.0)
                self.assertLess(bound, r["stderr"] / 4)
                self.assertLessEqual(abs(ref - refs[name]), bound + TREE_ERROR,
                                     f"{name}: strata's tree {ref} vs {refs[name]} (bounds {bound}, {TREE_ERROR})")
                price, se = r["price"], r["stderr"]
                self.assertLess(price, ref + bound + 4 * se, f"{name}: {price} above {ref} + {bound} + 4 se ({se})")
                self.assertGreater(price, ref - bound - ALLOWANCE[name] - 4 * se,
                                   f"{name}: {price} below {ref} - {bound} - allowance - 4 se ({se})")
        self.assertNotIn("reference_price", got["basket_put"], "no reference for an American on several assets")
        with h5py.File(self.runs["np1"][1], "r") as f:
            summary = sc.read_table(f["pricing/summary"])
            names = list(summary["name"])
            column = dict(zip(names, summary["reference_price"]))
            self.assertEqual(sc.bits(column["ls_put"]), sc.bits(got["ls_put"]["reference_price"]))
            self.assertTrue(np.isnan(column["basket_put"]))
            method = sc.as_str(f["pricing/ls_put/reference_price"].attrs["method"])
            self.assertIn("binomial", method)
        out = self.runs["np1"][0].stdout
        row = next(line for line in out.splitlines() if line.startswith("ls_put "))
        self.assertIn(f"{float(got['ls_put']['reference_price']):.8f}", row)
        self.assertIn("reference of ls_put: Cox-Ross-Rubinstein binomial tree", out)
        self.assertIn(f"|error| <= {float(got['ls_put']['reference_error']):.1e}", out)

    def test_delta_against_tree_and_black_scholes(self):
        # With the exercise policy held fixed (CRN bumps of the spot), the
        # derivative of a near-optimal policy's value is the option's delta
        # to first order (envelope theorem). Measured: ls_put +0.5 se,
        # call_no_dividend -1.7 se (its fit's rare early exercise).
        got = self.results("delta")
        _, tree_delta = bermudan_tree(36.0, 40.0, 0.2, 1.0, 50, 40, call=False, delta=True)
        d1 = (math.log(36.0 / 40.0) + (RATE + 0.02) * 1.0) / 0.2
        bs_delta = 0.5 * math.erfc(-d1 / math.sqrt(2.0))
        for name, ref in (("ls_put", tree_delta), ("call_no_dividend", bs_delta)):
            with self.subTest(name):
                r = got[name]
                z = (r["delta"] - ref) / r["delta_stderr"]
                self.assertLess(abs(z), 4.0, f"{name}: delta {r['delta']} vs {ref} ({z:+.2f} se)")
        basket = got["basket_put"]
        self.assertEqual(np.shape(basket["delta"]), (2,))
        self.assertTrue(np.all(np.asarray(basket["delta"]) + 4 * np.asarray(basket["delta_stderr"]) < 0.0),
                        f"a put's deltas are negative: {basket['delta']} +- {basket['delta_stderr']}")

    def test_dividend_call_above_european(self):
        r = self.results("np1")["call_dividend"]
        european = black_scholes(40.0, 35.0, 0.2, 1.0, call=True, dividend=0.1)
        self.assertGreater(r["price"] - 8 * r["stderr"], european)

    def test_exercise_policy_written(self):
        self.results("np1")
        with h5py.File(self.runs["np1"][1], "r") as f:
            g = f["pricing/ls_put"]
            c = g["exercise_coefficients"][()]
            self.assertEqual(c.shape, (50, 4))
            self.assertTrue(np.all(c[-1] == 0.0), "the last date exercises on the intrinsic value")
            self.assertTrue(np.all(np.isfinite(c)) and np.any(c[:-1] != 0.0))
            self.assertEqual(int(g["regression_paths"][()]), 65536)
            self.assertEqual(f["pricing/basket_put/exercise_coefficients"].shape, (10, 4))


class AmericanSameBits(sc.PricingBook):
    """1, 2 and 3 ranks over 4 blocks of 2^14 paths each pass."""

    BOOK = BOOK
    ARGS = ["--set", "pricing.paths=65536"]
    RUNS = [("np1", None, []), ("np2", 2, []), ("np3", 3, []),
            ("sobol_np1", None, ["--set", "pricing.sampler=\"sobol\"", "--set", "pricing.replicates=4"]),
            ("sobol_np2", 2, ["--set", "pricing.sampler=\"sobol\"", "--set", "pricing.replicates=4"]),
            ("sobol_np3", 3, ["--set", "pricing.sampler=\"sobol\"", "--set", "pricing.replicates=4"]),
            ("anti_np1", None, ["--set", "pricing.antithetic=true"]),
            ("anti_np2", 2, ["--set", "pricing.antithetic=true"])]

    def bits(self, tag):
        self.results(tag)
        with h5py.File(self.runs[tag][1], "r") as f:
            return policy_bits(f)

    def test_bitwise_identical_for_ranks(self):
        for first, others in (("np1", ["np2", "np3"]), ("sobol_np1", ["sobol_np2", "sobol_np3"]), ("anti_np1", ["anti_np2"])):
            want = self.bits(first)
            for tag in others:
                with self.subTest(tag):
                    self.assertEqual(self.bits(tag), want, f"{tag} differs from {first}")

    def test_samplers_give_consistent_prices(self):
        # Other paths, the same contract: within 4 combined standard errors
        # plus the policy allowance (each sampler fits its own policy).
        base = self.results("np1")
        for tag in ("sobol_np1", "anti_np1"):
            other = self.results(tag)
            for name in base:
                with self.subTest(f"{tag} {name}"):
                    d = abs(other[name]["price"] - base[name]["price"])
                    se = math.hypot(other[name]["stderr"], base[name]["stderr"])
                    self.assertLess(d, 4 * se + ALLOWANCE[name])


class AmericanRestart(sc.StrataTestCase):
    """A run restarted from its first checkpoint on 2 ranks ends with the bits
    of the uninterrupted run: the policy is refitted, to the same bits, and
    the pricing sums continue from the checkpoint's tree nodes."""

    def test_restart_equals_uninterrupted(self):
        with open(BOOK, encoding="utf-8") as f:
            text = f.read()
        # 4 blocks of 2^14 paths, one per step and checkpoint.
        text = text.replace("paths = 131_072", "paths = 65_536\nchunk_paths = 16384", 1)
        text += "\n[checkpoint]\nevery_steps = 1\nevery_seconds = 0\nkeep = 10\n"
        self.write("in.toml", text)

        def read(path):
            with h5py.File(path, "r") as f:
                return policy_bits(f)

        ref, restarted = sc.run_and_restart_from_oldest(self, "in.toml", read, None)
        self.assertEqual(restarted, ref)


class StacA2Workload(sc.StrataTestCase):
    """inputs/pricing/stac_a2.toml runs (at 4096 paths) with pricing.repeat = 2:
    the repetition must reproduce the first run's bits (strata exits 3
    otherwise) and its time is written as warm_seconds."""

    def test_runs_warm(self):
        stac = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "stac_a2.toml")
        res = self.strata("run", stac, "-o", "stac.h5", "--set", "pricing.paths=4096",
                          "--set", "pricing.regression_paths=4096", "--set", "pricing.repeat=2")
        self.assertExit(res, 0)
        with h5py.File(self.path("stac.h5"), "r") as f:
            self.assertGreater(f["performance/warm_seconds"][()], 0.0)
            g = f["pricing/american_basket_put"]
            self.assertTrue(0.0 < g["price"][()] < 100.0)
            self.assertEqual(g["exercise_coefficients"].shape, (252, 4))
            # Per asset (the American basket's assets), Heston's v0 alone.
            names = [sc.as_str(n) for n in g["delta"].attrs["assets"]]
            self.assertEqual(names, ["H1", "H2", "H3", "H4", "H5"])
            for greek in ("delta", "gamma", "vega_v0"):
                self.assertEqual(g[greek].shape, (5,), greek)
                self.assertTrue(np.all(np.isfinite(g[greek][()])) and np.all(g[greek + "_stderr"][()] > 0), greek)
            self.assertNotIn("vega", g)
            self.assertNotIn("vega_theta", g)
            # A put on the basket loses value as any asset rises.
            self.assertTrue(np.all(g["delta"][()] + 4 * g["delta_stderr"][()] < 0.0))


class AmericanInput(sc.BadPricingInput):
    BASE = """
[run]
model = "pricing"
[pricing]
paths = 1000
[[pricing.asset]]
name = "A"
spot = 100.0
vol = 0.2
[[pricing.instrument]]
name = "x"
type = "{type}"
option = "put"
strike = 100.0
maturity = 1.0
assets = ["A"]
{extra}
"""

    def test_unknown_basis(self):
        self.check_bad("pricing.instrument.0.basis", ["bad.toml:", "hermite", "laguerre"],
                       type="american", extra='basis = "hermite"')

    def test_degree_out_of_range(self):
        self.check_bad("pricing.instrument.0.degree", ["bad.toml:", "9"], type="american", extra="degree = 9")
        self.check_bad("pricing.instrument.0.degree", ["bad.toml:", "0"], type="american", extra="degree = 0")

    def test_no_exercise_dates(self):
        self.check_bad("pricing.instrument.0.exercise_dates", ["bad.toml:", "0"], type="american",
                       extra="exercise_dates = 0")

    def test_keys_of_other_types(self):
        self.check_bad("pricing.instrument.0.exercise_dates", ["does not apply to a european"], type="european",
                       extra="exercise_dates = 10")
        self.check_bad("pricing.instrument.0.fixings", ["does not apply to an american"], type="american",
                       extra="fixings = 10")
        self.check_bad("pricing.instrument.0.weights", ["several assets"], type="american",
                       extra="weights = [1.0]")

    def test_regression_paths_range(self):
        name = self.write("bad.toml", self.BASE.format(type="american", extra=""))
        res = self.strata("run", name, "--set", "pricing.regression_paths=10")
        self.assertExit(res, 2)
        self.assertInOutput("pricing.regression_paths", res.stderr, res)
        self.assertEqual(sc.files_under(self.tmp, ".h5"), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
