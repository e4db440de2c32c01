#!/usr/bin/env python3
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


class PricingPayoffs(sc.PricingBook):
    BOOK = BOOK
    ARGS = ["--set", f"pricing.paths={PATHS}"]
    RUNS = [("np1", None, []), ("np2", 2, []), ("np3_chunk", 3, ["--set", "pricing.chunk_paths=20000"])]

    def test_references_within_4_standard_errors(self):
        self.check_references(CLOSED_FORM, INDEPENDENT)
        for name, r in self.results("np1").items():
            self.assertEqual(int(r["paths"]), PATHS, name)

    def test_summary_covers_every_instrument(self):
        self.results("np1")
        with h5py.File(self.runs["np1"][1], "r") as f:
            names = sorted(sc.read_table(f["pricing/summary"])["name"])
        self.assertEqual(names, sorted(CLOSED_FORM + list(INDEPENDENT)))

    def test_bitwise_identical_for_ranks_and_chunks(self):
        self.check_same_bits()


class PricingPayoffInput(sc.BadPricingInput):
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
{extra}
"""

    def test_key_of_another_type(self):
        self.check_bad("pricing.instrument.0.cash", ["bad.toml:", "does not apply to a barrier"],
                       extra='type = "barrier"\nbarrier = 90.0\nstrike = 100.0\ncash = 5.0\n')
        self.check_bad("pricing.instrument.0.average", ["does not apply to a european"],
                       extra='type = "european"\nstrike = 100.0\naverage = "geometric"\n')
        self.check_bad("pricing.instrument.0.fixings", ["discrete monitoring"],
                       extra='type = "barrier"\nbarrier = 90.0\nstrike = 100.0\nfixings = 4\n')

    def test_floating_strike_only_for_lookbacks(self):
        self.check_bad("pricing.instrument.0.strike", ["lookback"], extra='type = "asian"\nstrike = "floating"\n')
        self.check_bad("pricing.instrument.0.strike", ['"floating"'],
                       extra='type = "lookback"\nstrike = "flaoting"\n')

    def test_barrier_needs_a_level(self):
        self.check_bad("pricing.instrument.0.barrier", ["barrier > 0"], extra='type = "barrier"\nstrike = 100.0\n')


if __name__ == "__main__":
    sc.main()
