#!/usr/bin/env python3
"""How well the Longstaff-Schwartz fit of inputs/pricing/american.toml's
single-asset Americans is determined, apart from strata's code: numpy's
own GBM paths (as many as the input's regression_paths), the same basis
(plain Laguerre or monomials of x = S / K), the same solver (normal
equations scaled to a unit diagonal, eigen-decomposition, directions
below 1e-12 of the largest eigenvalue dropped), backward induction over
the in-the-money paths.

Per instrument it prints the scaled normal matrices' condition numbers
over the dates (median, largest), how many exercise decisions lie within
1e-6 K of the fitted boundary over all dates, and by how much one decision
flipped moves a fit's coefficients (its cash flow changed from the realised
continuation to the intrinsic value; median over dates, relative to the
largest coefficient). docs/validation.md ("Exercise coefficients
across backends and precisions") uses them to say which differences of
the fitted coefficients rounding explains.

Usage: scripts/reference/lsm_conditioning.py [--paths N] [--seed S]
"""
import argparse

import numpy as np


def basis(laguerre, degree, x):
    phi = [np.ones_like(x)]
    if degree >= 1:
        phi.append(1 - x if laguerre else x)
    for n in range(1, degree):
        phi.append(((2 * n + 1 - x) * phi[n] - n * phi[n - 1]) / (n + 1) if laguerre else phi[n] * x)
    return np.array(phi)


def solve(a, b):
    """strata's solve_normal_equations: unit-diagonal scaling, eigenvectors, 1e-12 cut."""
    s = 1 / np.sqrt(np.diag(a))
    w, v = np.linalg.eigh(a * np.outer(s, s))
    keep = w > 1e-12 * w.max()
    return s * (v[:, keep] @ ((v[:, keep].T @ (s * b)) / w[keep])), w.max() / w.min()


def fit(rng, paths, s0, k, r, q, vol, t, dates, call, laguerre, degree):
    dt = t / dates
    z = rng.standard_normal((paths, dates))
    s = np.exp(np.log(s0) + np.cumsum((r - q - 0.5 * vol * vol) * dt + vol * np.sqrt(dt) * z, axis=1))
    intrinsic = (lambda u: np.maximum(u - k, 0)) if call else (lambda u: np.maximum(k - u, 0))
    cash = np.exp(-r * t) * intrinsic(s[:, -1])
    conditions, near, flip = [], 0, []
    for f in range(dates - 2, -1, -1):
        d = np.exp(-r * (f + 1) * dt)
        u = s[:, f]
        itm = np.where(intrinsic(u) > 0)[0]
        phi = basis(laguerre, degree, u[itm] / k)
        y = cash[itm] / d
        a = phi @ phi.T
        beta, condition = solve(a, phi @ y)
        conditions.append(condition)
        gap = intrinsic(u[itm]) - beta @ phi
        near += int(np.sum(np.abs(gap) < 1e-6 * k))
        # The decision closest to the boundary flipped: that path's cash flow
        # becomes its intrinsic value instead of the continuation it
        # realised, which moves the fit of the date before by about as much
        # as this date's fit with that one cash flow changed.
        j = np.argmin(np.abs(gap))
        y2 = y.copy()
        y2[j] = intrinsic(u[itm][j])
        moved, _ = solve(a, phi @ y2)
        flip.append(np.max(np.abs(moved - beta)) / np.max(np.abs(beta)))
        exercise = itm[gap >= 0]
        cash[exercise] = d * intrinsic(u[exercise])
    return np.median(conditions), np.max(conditions), near, np.median(flip)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--paths", type=int, default=65536)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    cases = [("ls_put (Laguerre, degree 3)", 36.0, 40.0, 0.06, 0.0, False, True),
             ("call_no_dividend (Laguerre, degree 3)", 36.0, 40.0, 0.06, 0.0, True, True),
             ("call_dividend (monomials, degree 3)", 40.0, 35.0, 0.06, 0.1, True, False)]
    for name, s0, k, r, q, call, laguerre in cases:
        median, largest, near, flip = fit(rng, args.paths, s0, k, r, q, 0.2, 1.0, 50, call, laguerre, 3)
        print(f"{name}: condition median {median:.2e}, largest {largest:.2e}; decisions within 1e-6 K of the "
              f"boundary: {near}; one flipped decision moves the next fit by {flip:.1e} of its largest coefficient")


if __name__ == "__main__":
    main()
