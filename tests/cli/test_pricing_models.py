#!/usr/bin/env python3
"""End to end: inputs/pricing/models.toml's asset models and baskets against
their references: Heston (QE and full truncation, one Feller-violating set)
against the semi-analytic price, Merton against its series, baskets on two
correlated GBM assets against Stulz's max/min and the geometric-basket
closed form (which checks the correlation), the arithmetic basket against
an independent numpy value (scripts/reference/pricing_mc.py).

2^16 paths on a 50-steps-a-year grid keep a run to a few seconds; the
discretisation bias at 50 steps, measured with 2^19 paths, is below half a
standard error there (docs/validation.md). A price passes within 4
(combined) standard errors. Then 3 ranks with another chunk size must give
the 1-rank bits.
"""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

BOOK = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "models.toml")
PATHS = 1 << 16
SETS = ["--set", f"pricing.paths={PATHS}", "--set", "pricing.steps_per_year=50"]

# scripts/reference/pricing_mc.py --paths 40000000 --seed 2026
INDEPENDENT = {"basket_average_call": (8.614970, 0.000121)}
CLOSED_FORM = ["heston_qe_call", "heston_ft_put", "heston_feller_call", "merton_call", "merton_put",
               "basket_max_call", "basket_min_put", "basket_geometric_call"]


class PricingModels(sc.PricingBook):
    BOOK = BOOK
    ARGS = SETS
    RUNS = [("np1", None, []), ("np3_chunk", 3, ["--set", "pricing.chunk_paths=30000"])]

    def test_references_within_4_standard_errors(self):
        self.check_references(CLOSED_FORM, INDEPENDENT)

    def test_bitwise_identical_for_ranks_and_chunks(self):
        self.check_same_bits()

    def test_stored_config_reruns_to_the_same_bits(self):
        self.results("np1")
        with h5py.File(self.runs["np1"][1], "r") as f:
            text = sc.read_config_text(f)
            want = sc.result_bits(f)
        path = os.path.join(self.tmp, "stored.toml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        out = os.path.join(self.tmp, "rerun.h5")
        res = sc.run_strata(["run", path, "-o", out], self.tmp)
        self.assertEqual(res.returncode, 0, res.describe())
        with h5py.File(out, "r") as f:
            self.assertEqual(sc.result_bits(f), want)


class PricingModelInput(sc.BadPricingInput):
    """Correlation matrices and model keys that cannot be right: exit 2, named."""

    BASE = """
[run]
model = "pricing"
[pricing]
paths = 1000
{extra}
[[pricing.asset]]
name = "A"
spot = 100.0
{asset}
[[pricing.asset]]
name = "B"
spot = 100.0
vol = 0.3
[[pricing.instrument]]
name = "x"
type = "basket"
basket = "max"
option = "call"
strike = 100.0
maturity = 1.0
assets = ["A", "B"]
"""

    def test_correlation_not_spd_or_wrong_size(self):
        vol = "vol = 0.2"
        self.check_bad("pricing.correlation", ["bad.toml:", "needs 2 rows"],
                       extra="correlation = [[1.0, 0.5], [0.5, 1.0], [0.0, 0.0]]", asset=vol)
        self.check_bad("pricing.correlation", ["not symmetric"],
                       extra="correlation = [[1.0, 0.5], [0.4, 1.0]]", asset=vol)
        # |rho| = 1 is positive semi-definite only.
        self.check_bad("pricing.correlation", ["not positive definite"],
                       extra="correlation = [[1.0, 1.0], [1.0, 1.0]]", asset=vol)
        self.check_bad("pricing.correlation", ["row 2 needs 2 entries"],
                       extra="correlation = [[1.0, 0.5], [0.5, 1.0, 0.1]]", asset=vol)

    def test_model_keys(self):
        self.check_bad("pricing.asset.0.kappa", ["does not apply to model gbm"],
                       extra="", asset="vol = 0.2\nkappa = 2.0")
        self.check_bad("pricing.asset.0.vol", ["does not apply to model heston"],
                       extra="", asset='model = "heston"\nvol = 0.2\nv0 = 0.04\nkappa = 1.0\ntheta = 0.04\nxi = 0.5')
        self.check_bad("pricing.asset.0.xi", ["required for model heston"],
                       extra="", asset='model = "heston"\nv0 = 0.04\nkappa = 1.0\ntheta = 0.04')
        self.check_bad("pricing.asset.0.vol", ["required for model gbm"], extra="", asset="")


if __name__ == "__main__":
    sc.main()
