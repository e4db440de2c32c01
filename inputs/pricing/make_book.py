#!/usr/bin/env python3
"""Writes a large instrument book for strata's pricing model:
book_10k.toml and book_10k.csv (10,000 instruments by default) into the
given folder (default: out/, which git ignores; the CSV is ~0.6 MB).

    inputs/pricing/make_book.py [--instruments N] [--out DIR]
    build/strata run out/book_10k.toml

The book mixes every payoff type over four GBM assets and one Heston asset,
strikes from 70 to 130 and maturities 0.25, 0.5, 1 and 2 years, so its
instruments fall into a few dozen path groups (same asset and time grid);
each group is simulated once for all its instruments.
"""
import argparse
import os
import random

ASSETS = """
[[pricing.asset]]
name = "S1"
spot = 100.0
dividend = 0.01
vol = 0.2

[[pricing.asset]]
name = "S2"
spot = 100.0
vol = 0.3

[[pricing.asset]]
name = "S3"
spot = 100.0
dividend = 0.02
vol = 0.25

[[pricing.asset]]
name = "S4"
spot = 100.0
vol = 0.15

[[pricing.asset]]
name = "H"
spot = 100.0
model = "heston"
v0 = 0.04
kappa = 1.5
theta = 0.04
xi = 0.5
rho = -0.7
"""

COLUMNS = ["name", "type", "option", "strike", "maturity", "assets", "cash", "fixings", "average", "barrier",
           "barrier_type", "monitoring", "rebate", "basket", "weights"]


def row(i, rng):
    kind = rng.choice(["european"] * 4 + ["digital", "asian", "asian", "barrier", "barrier", "lookback", "basket"])
    asset = rng.choice(["S1", "S2", "S3", "S4", "H"])
    r = dict.fromkeys(COLUMNS, "")
    r.update(name=f"i{i:05d}", type=kind, option=rng.choice(["call", "put"]),
             strike=str(rng.randrange(70, 131, 5)), maturity=str(rng.choice([0.25, 0.5, 1.0, 2.0])), assets=asset)
    if kind == "digital":
        r["cash"] = "10"
    elif kind == "asian":
        r["fixings"] = "12"
        r["average"] = rng.choice(["arithmetic", "geometric"])
    elif kind == "barrier":
        up = rng.random() < 0.5
        r["barrier"] = str(rng.randrange(110, 141, 10) if up else rng.randrange(60, 91, 10))
        r["barrier_type"] = ("up" if up else "down") + rng.choice(["-and-out", "-and-in"])
        r["rebate"] = rng.choice(["", "1"])
    elif kind == "lookback":
        if rng.random() < 0.5:
            r["strike"] = "floating"
    elif kind == "basket":
        r["assets"] = "S1;S2"
        r["basket"] = rng.choice(["max", "min"])
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--instruments", type=int, default=10_000)
    ap.add_argument("--out", default="out")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    name = f"book_{args.instruments // 1000}k" if args.instruments % 1000 == 0 else f"book_{args.instruments}"
    with open(os.path.join(args.out, name + ".csv"), "w", encoding="utf-8") as f:
        f.write(",".join(COLUMNS) + "\n")
        for i in range(args.instruments):
            r = row(i, rng)
            f.write(",".join(r[c] for c in COLUMNS) + "\n")
    with open(os.path.join(args.out, name + ".toml"), "w", encoding="utf-8") as f:
        f.write(f"""# {args.instruments} instruments from {name}.csv (inputs/pricing/make_book.py).
[run]
model = "pricing"
seed = 5
output = "{name}.h5"

[pricing]
paths = 65_536
rate = 0.03
steps_per_year = 52
portfolio_file = "{name}.csv"
correlation = [[1.0, 0.5, 0.0, 0.0, 0.0],
               [0.5, 1.0, 0.0, 0.0, 0.0],
               [0.0, 0.0, 1.0, 0.0, 0.0],
               [0.0, 0.0, 0.0, 1.0, 0.0],
               [0.0, 0.0, 0.0, 0.0, 1.0]]
{ASSETS}""")
    print(f"wrote {os.path.join(args.out, name)}.toml and .csv ({args.instruments} instruments)")


if __name__ == "__main__":
    main()
