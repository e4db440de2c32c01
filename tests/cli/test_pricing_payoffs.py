#!/usr/bin/python3
"""End to end: every payoff type of inputs/pricing/payoffs.toml against its
closed form, or, where none exists, against a value computed independently
(scripts/reference/pricing_mc.py: numpy, its own random numbers, exact
sampling at the monitoring dates, 4e7 paths; docs/validation.md).

2^17 paths keep the run to a few seconds. A price passes within 4 combined
standard errors; at this size 4 standard errors are 0.4% (digital) to 3%
(discrete barrier) of the prices, while a wrong formula (a barrier on the
wrong side, a missed rebate, an arithmetic for a geometric average, a
missing continuity correction) moves them by more. Then the same book on
2 and 3 ranks and in other chunk sizes must give the same bits.
"""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

BOOK = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "payoffs.toml")
PATHS = 1 << 17

# scripts/reference/pricing_mc.py --paths 40000000 --seed 2026 (value, standard error).
INDEPENDENT = {
    "asian_arithmetic": (6.683153, 0.000055),
    "up_out_call_discrete": (1.223532, 0.000548),
    "lookback_floating_put_discrete": (15.039692, 0.001965),
}
# Continuous closed forms (Black-Scholes, cash-or-nothing, discrete geometric
# Asian, Reiner-Rubinstein, Goldman-Sosin-Gatto, Conze-Viswanathan).
CLOSED_FORM = ["european_call", "digital_call", "asian_geometric", "down_out_call", "down_in_put", "up_out_put",
               "up_in_call", "lookback_floating_call", "lookback_fixed_put"]


class PricingPayoffs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sc.check_binary()
        cls.tmp = sc.make_tmpdir("payoffs")
        cls.runs = {}
        for tag, ranks, extra in [("np1", None, []), ("np2", 2, []),
                                  ("np3_chunk", 3, ["--set", "pricing.chunk_paths=20000"])]:
            out = os.path.join(cls.tmp, f"{tag}.h5")
            res = sc.run_strata(["run", BOOK, "--set", f"pricing.paths={PATHS}", "-o", out] + extra, cls.tmp,
                                ranks=ranks)
            cls.runs[tag] = (res, out)

    @classmethod
    def tearDownClass(cls):
        sc.remove_tmpdir(cls.tmp)

    def results(self, tag):
        res, out = self.runs[tag]
        if res.returncode != 0:
            self.fail(f"run {tag} failed:{res.describe()}")
        with h5py.File(out, "r") as f:
            return sc.pricing_results(f)

    def test_closed_forms_within_4_standard_errors(self):
        got = self.results("np1")
        for name in CLOSED_FORM:
            with self.subTest(name):
                r = got[name]
                self.assertIn("reference_price", r)
                z = (r["price"] - r["reference_price"]) / r["stderr"]
                self.assertLess(abs(z), 4.0, f"{name}: {r['price']} vs {r['reference_price']} ({z:+.2f} se)")
                self.assertEqual(int(r["paths"]), PATHS)

    def test_independent_values_within_4_standard_errors(self):
        got = self.results("np1")
        for name, (value, se) in INDEPENDENT.items():
            with self.subTest(name):
                r = got[name]
                self.assertNotIn("reference_price", r, "no closed form: no reference_price")
                combined = (r["stderr"] ** 2 + se ** 2) ** 0.5
                z = (r["price"] - value) / combined
                self.assertLess(abs(z), 4.0, f"{name}: {r['price']} vs {value} ({z:+.2f} se)")

    def test_summary_covers_every_instrument(self):
        _, out = self.runs["np1"]
        self.results("np1")
        with h5py.File(out, "r") as f:
            table = f["pricing/summary"][()]
            names = sorted(sc.as_str(n) for n in table["name"])
            self.assertEqual(names, sorted(CLOSED_FORM + list(INDEPENDENT)))

    def test_bitwise_identical_for_ranks_and_chunks(self):
        ref = None
        for tag in ("np1", "np2", "np3_chunk"):
            self.results(tag)
            with h5py.File(self.runs[tag][1], "r") as f:
                got = sc.result_bits(f)
            if ref is None:
                ref = got
            else:
                self.assertEqual(got, ref, f"{tag} differs from 1 rank")


class PricingPayoffInput(sc.StrataTestCase):
    """Keys of another payoff type and impossible payoffs are input errors."""

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
option = "call"
maturity = 1.0
assets = ["A"]
"""

    def check_bad(self, extra, key, words):
        name = self.write("bad.toml", self.BASE + extra)
        res = self.strata("run", name)
        self.assertExit(res, 2)
        self.assertInOutput(key, res.stderr, res)
        for w in words:
            self.assertInOutput(w, res.stderr, res)
        self.assertEqual(sc.files_under(self.tmp, ".h5"), [])

    def test_key_of_another_type(self):
        self.check_bad('type = "barrier"\nbarrier = 90.0\nstrike = 100.0\ncash = 5.0\n',
                       "pricing.instrument.0.cash", ["bad.toml:", "does not apply to a barrier"])
        self.check_bad('type = "european"\nstrike = 100.0\naverage = "geometric"\n',
                       "pricing.instrument.0.average", ["does not apply to a european"])
        self.check_bad('type = "barrier"\nbarrier = 90.0\nstrike = 100.0\nfixings = 4\n',
                       "pricing.instrument.0.fixings", ["discrete monitoring"])

    def test_floating_strike_only_for_lookbacks(self):
        self.check_bad('type = "asian"\nstrike = "floating"\n', "pricing.instrument.0.strike", ["lookback"])
        self.check_bad('type = "lookback"\nstrike = "flaoting"\n', "pricing.instrument.0.strike",
                       ['"floating"'])

    def test_barrier_needs_a_level(self):
        self.check_bad('type = "barrier"\nstrike = 100.0\n', "pricing.instrument.0.barrier", ["barrier > 0"])


if __name__ == "__main__":
    sc.main()
