#!/usr/bin/env python3
"""End to end: pricing.control_variate (inputs/pricing/control_variate.toml).

1. Prices within 4 standard errors of their references: Black-Scholes,
   Stulz's max-of-two call, and the arithmetic Asian's independent value of
   test_pricing_payoffs.py (the same asset, rate and fixings).
2. The standard error reflects the reduction. The controlled estimator's
   variance is (1 - rho^2) Var Y at the optimal beta (Glasserman 2004, eq.
   4.5); the pilot's beta, from 32768 independent samples, adds a relative
   1/32768 to it.
   - European call: rho between (S_T - K)^+ and S_T has a closed form
     (lognormal partial moments E[S^n 1{S > K}]), so the variance ratio
     without/with the control must be 1 / (1 - rho^2) within 5%: each
     variance, from 2^18 paths of a payoff with kurtosis below 20 (8.5 for
     the call, 4.0 for the controlled payoff, by simulation), has a
     relative error below sqrt(19 / 2^18) = 0.9%, the ratio below 1.2%, and
     5% is 4 of those.
   - Arithmetic Asian call at the money: its correlation with the geometric
     Asian exceeds 0.99 (Kemna and Vorst 1990), so the variance falls by
     more than 1 / (1 - 0.99^2) = 50; the test asks for 10.
3. Bitwise identical prices, standard errors and betas for 1, 2 and 3 ranks
   and another chunk size: beta comes from fixed pilot blocks that every
   rank simulates alike.
"""

import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

BOOK = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "control_variate.toml")
# test_pricing_payoffs.py's asian_arithmetic (scripts/reference/pricing_mc.py).
INDEPENDENT = {"arithmetic_asian_call": (6.683153, 0.000055)}
CLOSED_FORM = ["european_call", "basket_max_call"]


def norm_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def call_terminal_correlation(s0, k, r, q, vol, t):
    """Correlation of (S_T - K)^+ and S_T for lognormal S_T: with
    X = ln S_T ~ N(m, s^2), E[e^{nX} 1{X > ln K}] = e^{nm + n^2 s^2 / 2}
    Phi((m + n s^2 - ln K) / s)."""
    m, s = math.log(s0) + (r - q - 0.5 * vol * vol) * t, vol * math.sqrt(t)

    def partial(n):
        return math.exp(n * m + 0.5 * n * n * s * s) * norm_cdf((m + n * s * s - math.log(k)) / s)

    def moment(n):
        return math.exp(n * m + 0.5 * n * n * s * s)

    e_pay = partial(1) - k * partial(0)
    e_pay2 = partial(2) - 2 * k * partial(1) + k * k * partial(0)
    e_pay_s = partial(2) - k * partial(1)
    cov = e_pay_s - e_pay * moment(1)
    return cov / math.sqrt((e_pay2 - e_pay ** 2) * (moment(2) - moment(1) ** 2))


class PricingControl(sc.PricingBook):
    BOOK = BOOK
    RUNS = [("np1", None, []), ("np2", 2, []), ("np3", 3, []),
            ("np1_chunk", None, ["--set", "pricing.chunk_paths=40000"]),
            ("off", None, ["--set", "pricing.control_variate=false"])]

    def test_references_within_4_standard_errors(self):
        self.check_references(CLOSED_FORM, INDEPENDENT)

    def test_bitwise_identical_for_ranks_and_chunks(self):
        got = {}
        for tag in ("np1", "np2", "np3", "np1_chunk"):
            self.results(tag)
            with h5py.File(self.runs[tag][1], "r") as f:
                got[tag] = sc.result_bits(f)
                for name in got[tag]:
                    got[tag][name]["control_beta"] = sc.bits(f[f"pricing/{name}/control_beta"][()])
        for tag in ("np2", "np3", "np1_chunk"):
            self.assertEqual(got[tag], got["np1"], f"{tag} differs from np1")

    def variance_ratio(self, name):
        on, off = self.results("np1")[name], self.results("off")[name]
        self.assertNotIn("control_beta", off)
        return (off["stderr"] / on["stderr"]) ** 2

    def test_european_reduction_matches_correlation(self):
        rho = call_terminal_correlation(100.0, 100.0, 0.05, 0.02, 0.25, 1.0)
        want = 1.0 / (1.0 - rho * rho)
        got = self.variance_ratio("european_call")
        self.assertLess(abs(got / want - 1.0), 0.05, f"variance ratio {got:.3f}, 1/(1-rho^2) = {want:.3f}")

    def test_asian_reduction_over_10(self):
        got = self.variance_ratio("arithmetic_asian_call")
        self.assertGreater(got, 10.0)


if __name__ == "__main__":
    import unittest
    unittest.main(verbosity=2)
