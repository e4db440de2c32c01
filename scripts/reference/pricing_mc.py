#!/usr/bin/python3
"""Independent reference values for the pricing tests that have no closed
form: arithmetic Asian, discretely monitored barrier and lookback options
under GBM. Written apart from strata's code (numpy, its own random numbers,
exact log-normal sampling at the monitoring dates only, so discrete
monitoring is exact), with many paths; the arithmetic Asian uses the
geometric Asian as a control variate (Kemna and Vorst 1990; Glasserman,
"Monte Carlo Methods in Financial Engineering", sec. 4.1.2).

Usage: scripts/reference/pricing_mc.py [--paths N] [--seed S]
Prints each value with its standard error; docs/validation.md records the
figures the tests use and the command that made them.
"""
import argparse
import math

import numpy as np

S0, R, Q, VOL, T = 100.0, 0.05, 0.02, 0.25, 1.0


def ncdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def geometric_asian_call(k, n):
    mean = math.log(S0) + (R - Q - 0.5 * VOL**2) * T * (n + 1) / (2 * n)
    sd = VOL * math.sqrt(T * (n + 1) * (2 * n + 1) / (6 * n * n))
    d2 = (mean - math.log(k)) / sd
    return math.exp(-R * T) * (math.exp(mean + 0.5 * sd * sd) * ncdf(d2 + sd) - k * ncdf(d2))


def paths_at(rng, n_paths, n_dates):
    """log S at T/n, ..., T (exact GBM), shape (n_paths, n_dates)."""
    dt = T / n_dates
    z = rng.standard_normal((n_paths, n_dates))
    steps = (R - Q - 0.5 * VOL**2) * dt + VOL * math.sqrt(dt) * z
    return math.log(S0) + np.cumsum(steps, axis=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--paths", type=int, default=20_000_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--batch", type=int, default=500_000)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    df = math.exp(-R * T)
    cases = {
        "asian arithmetic call K=100, 12 fixings (geometric control variate)": [],
        "barrier up-and-out call K=100 H=120, 12 fixings": [],
        "lookback floating put, 12 fixings (t=0 included)": [],
    }
    cv_pairs = []
    done = 0
    while done < args.paths:
        m = min(args.batch, args.paths - done)
        x = paths_at(rng, m, 12)
        s = np.exp(x)
        arith = df * np.maximum(s.mean(axis=1) - 100.0, 0.0)
        geo = df * np.maximum(np.exp(x.mean(axis=1)) - 100.0, 0.0)
        cv_pairs.append((arith, geo))
        knocked = (s >= 120.0).any(axis=1)
        cases["barrier up-and-out call K=100 H=120, 12 fixings"].append(
            np.where(knocked, 0.0, df * np.maximum(s[:, -1] - 100.0, 0.0)))
        smax = np.maximum(s.max(axis=1), S0)
        cases["lookback floating put, 12 fixings (t=0 included)"].append(df * (smax - s[:, -1]))
        done += m
    arith = np.concatenate([a for a, _ in cv_pairs])
    geo = np.concatenate([g for _, g in cv_pairs])
    # Control variate with the optimal coefficient (estimated; its bias is O(1/n)).
    c = np.cov(arith, geo)
    beta = c[0, 1] / c[1, 1]
    adjusted = arith - beta * (geo - geometric_asian_call(100.0, 12))
    cases["asian arithmetic call K=100, 12 fixings (geometric control variate)"] = [adjusted]
    print(f"S0={S0} r={R} q={Q} vol={VOL} T={T}; {args.paths} paths, seed {args.seed}")
    for name, parts in cases.items():
        v = np.concatenate(parts)
        print(f"{name}: {v.mean():.6f} +- {v.std(ddof=1) / math.sqrt(v.size):.6f}")


if __name__ == "__main__":
    main()
