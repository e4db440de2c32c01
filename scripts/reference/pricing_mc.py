#!/usr/bin/env python3
"""Independent reference values for the pricing tests that have no closed
form: arithmetic Asian, discretely monitored barrier and lookback options
under GBM, and an arithmetic basket of two correlated GBM assets. Written apart from strata's code (numpy, its own random numbers,
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
    basket(rng, args)


def basket(rng, args):
    """inputs/pricing/models.toml's arithmetic basket: call K=100, T=1 on
    (B1 + B2)/2, B1: S=100 q=1% vol=20%, B2: S=95 q=0 vol=30%, rho=0.6,
    r=3%; the geometric basket (closed form) as control variate."""
    r, t, k, rho = 0.03, 1.0, 100.0, 0.6
    s0, q, vol = np.array([100.0, 95.0]), np.array([0.01, 0.0]), np.array([0.2, 0.3])
    var = 0.25 * t * (vol[0] ** 2 + vol[1] ** 2 + 2 * rho * vol[0] * vol[1])
    mean = 0.5 * np.sum(np.log(s0) + (r - q - 0.5 * vol ** 2) * t)
    sd = math.sqrt(var)
    d2 = (mean - math.log(k)) / sd
    geo_exact = math.exp(-r * t) * (math.exp(mean + 0.5 * var) * ncdf(d2 + sd) - k * ncdf(d2))
    arith, geo = [], []
    done = 0
    while done < args.paths:
        m = min(args.batch, args.paths - done)
        z1 = rng.standard_normal(m)
        z2 = rho * z1 + math.sqrt(1 - rho * rho) * rng.standard_normal(m)
        x = np.log(s0)[:, None] + ((r - q - 0.5 * vol ** 2) * t)[:, None] + (vol * math.sqrt(t))[:, None] * np.stack([z1, z2])
        df = math.exp(-r * t)
        arith.append(df * np.maximum(np.exp(x).mean(axis=0) - k, 0.0))
        geo.append(df * np.maximum(np.exp(x.mean(axis=0)) - k, 0.0))
        done += m
    a, g = np.concatenate(arith), np.concatenate(geo)
    c = np.cov(a, g)
    v = a - c[0, 1] / c[1, 1] * (g - geo_exact)
    print(f"basket arithmetic average call K=100 (geometric control variate): {v.mean():.6f} +- "
          f"{v.std(ddof=1) / math.sqrt(v.size):.6f}")


if __name__ == "__main__":
    main()
