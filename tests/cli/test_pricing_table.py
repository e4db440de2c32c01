#!/usr/bin/env python3
"""The printed pricing tables: columns as wide as their longest entry, and
no negative zero.

1. An instrument and an asset named with 30 characters: every line of the
   price table and of the Greek table is as long as its header (the last
   column is right-aligned), and each row's type and asset columns start
   where their headers do.
2. A floating-strike lookback's gamma is zero up to round-off (its payoff
   is homogeneous of degree one in the spot, so d2V/dS2 = 0): its value
   prints as 0.00000000, never -0.00000000, and no number in either table
   is a negative zero.
3. With two references, a note under the table says the instruments share
   their random numbers, so their diff/se values are correlated.
8192 paths, 50 steps a year: the claims are about layout, not accuracy.
"""

import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402

LONG = "a_thirty_character_option_name"
ASSET = "an_asset_with_thirty_chars_xyz"

INPUT = f"""[run]
model = "pricing"
output = "table.h5"

[pricing]
paths = 8192
steps_per_year = 50
greeks = ["delta", "gamma"]

[[pricing.asset]]
name = "{ASSET}"
spot = 100.0
dividend = 0.02
vol = 0.25

[[pricing.instrument]]
name = "{LONG}"
type = "lookback"
option = "call"
strike = "floating"
maturity = 1.0
assets = ["{ASSET}"]

[[pricing.instrument]]
name = "call"
option = "call"
strike = 100.0
maturity = 1.0
assets = ["{ASSET}"]
"""


def table(lines, header_start):
    """The header that starts with header_start and the rows under it (up to a blank line)."""
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 1:]:
        if not line.strip() or not line.startswith((LONG, "call ")):
            break
        rows.append(line)
    return lines[start], rows


class PricingTable(sc.StrataTestCase):

    def test_long_names_aligned_and_no_negative_zero(self):
        self.assertEqual((len(LONG), len(ASSET)), (30, 30))
        self.write("table.toml", INPUT)
        res = self.run_ok("table.toml")
        lines = res.stdout.splitlines()
        prices_header, prices = table(lines, "instrument ")
        greeks_start = lines.index(prices_header) + 1 + len(prices)
        greeks_header, greeks = table(lines[greeks_start:], "instrument ")
        self.assertEqual(len(prices), 2, res.describe())
        self.assertEqual(len(greeks), 4, res.describe())
        for header, rows, column, values in ((prices_header, prices, "type", ("lookback", "european")),
                                             (greeks_header, greeks, "asset", (ASSET,))):
            for row in rows:
                with self.subTest(row=row):
                    self.assertEqual(len(row), len(header), f"row and header of different widths:\n{header}\n{row}")
                    value = next(v for v in values if f" {v} " in row)
                    self.assertEqual(row.index(f" {value} ") + 1, header.index(f" {column} ") + 1,
                                     f"{column} column misaligned:\n{header}\n{row}")
        gamma = next(row for row in greeks if row.startswith(LONG) and " gamma " in row)
        self.assertRegex(gamma, r" 0\.00000000 ")
        self.assertIsNone(re.search(r"-0\.0+(?![0-9])", "\n".join(prices + greeks)), res.stdout)
        self.assertIn("The instruments share their random numbers", res.stdout)
        self.assertIn("the diff/se values move together", res.stdout)


if __name__ == "__main__":
    unittest.main()
