#!/usr/bin/python3
"""Convergence plot of a pricing run: price and 95% confidence interval
against the number of paths, with the reference price as a line.

    scripts/plot/pricing.py OUT.h5 [--instrument NAME] [--levels K]
                            [--strata build/strata] [--out DIR] [--qmc | --greeks]

The run's stored configuration (/config) is priced again at paths / 2^k,
k = 1..K (default 6), with the same seed, so the points are the run's
own estimator at fewer paths; the run itself is the last point. Writes
DIR/<stem>_<instrument>_convergence.png for each instrument (or the one
named). Needs python3-h5py, python3-numpy and python3-matplotlib.

--qmc draws instead the quasi-Monte Carlo against Monte Carlo error plot:
the stored configuration at each path count with pricing.sampler =
"philox" and = "sobol" (its replicates, default 16), the standard errors
on log-log axes with N^-1/2 and N^-1 guides, to
DIR/<stem>_<instrument>_qmc.png.

--greeks draws instead the run's Greeks (pricing.greeks) as bars, one
panel per Greek (each has its own units), one bar per instrument (per
asset on baskets), with 2-standard-error whiskers and a marker at the
closed form where one exists, to DIR/<stem>_greeks.png. No rerun.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")  # files only: no display on cluster nodes
import matplotlib.pyplot as plt  # noqa: E402

try:
    import h5py  # noqa: E402
except ImportError as err:  # pragma: no cover - environment problem
    sys.exit(f"pricing.py needs h5py (Debian: python3-h5py, run with /usr/bin/python3): {err}")


def results(path):
    """{instrument: (paths, price, ci_low, ci_high, reference or None)}."""
    out = {}
    with h5py.File(path, "r") as f:
        for name, g in f["pricing"].items():
            if name == "summary":
                continue
            ref = g["reference_price"][()] if "reference_price" in g else None
            out[name] = (int(g["paths"][()]), g["price"][()], g["ci95_low"][()], g["ci95_high"][()], ref,
                         g["stderr"][()])
    return out


def config_text(path):
    with h5py.File(path, "r") as f:
        value = f["config"][()]
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def rerun(strata, cfg, tmp, paths, extra=()):
    """results() of the stored configuration at `paths` paths."""
    h5 = os.path.join(tmp, "rerun.h5")
    subprocess.run([strata, "run", cfg, "--set", f"pricing.paths={paths}", "-o", h5, "--overwrite",
                    "--set", "checkpoint.every_seconds=0", *extra], check=True, stdout=subprocess.DEVNULL)
    return results(h5)


GREEK_ORDER = ["delta", "gamma", "vega", "vega_v0", "vega_theta", "vega_xi", "rho", "theta"]


def greeks_of(path, names):
    """{greek: [(label, value, stderr, reference or None)]} of the instruments named."""
    out = {}
    with h5py.File(path, "r") as f:
        for name in names:
            g = f["pricing"][name]
            for greek in GREEK_ORDER:
                if greek not in g:
                    continue
                value, se = g[greek][()], g[greek + "_stderr"][()]
                ref = g[greek + "_reference"][()] if greek + "_reference" in g else None
                if value.shape == ():
                    out.setdefault(greek, []).append((name, float(value), float(se), ref))
                else:
                    assets = [a.decode() if isinstance(a, bytes) else str(a) for a in g[greek].attrs["assets"]]
                    for a, v, e in zip(assets, value, se):
                        out.setdefault(greek, []).append((f"{name}[{a}]", float(v), float(e), None))
    return out


def greeks_plot(args, names, stem):
    """Bars of each Greek with 2-sigma whiskers and closed-form markers."""
    greeks = greeks_of(args.output, names)
    if not greeks:
        sys.exit(f"{args.output}: no Greeks (set pricing.greeks)")
    fig, axes = plt.subplots(len(greeks), 1, figsize=(7.0, 2.2 * len(greeks)), squeeze=False)
    for ax, greek in zip(axes[:, 0], [g for g in GREEK_ORDER if g in greeks]):
        rows = greeks[greek]
        x = range(len(rows))
        ax.bar(x, [r[1] for r in rows], yerr=[2 * r[2] for r in rows], capsize=3, color="tab:blue",
               label="Monte Carlo, 2 se")
        refs = [(i, r[3]) for i, r in enumerate(rows) if r[3] is not None]
        if refs:
            ax.plot([i for i, _ in refs], [v for _, v in refs], "kD", markersize=5, label="closed form or semi-analytic")
        ax.axhline(0.0, color="k", linewidth=0.5)
        ax.set_xticks(list(x))
        ax.set_xticklabels([r[0] for r in rows], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(greek)
        ax.legend(fontsize=7)
    axes[0, 0].set_title(f"{stem}: Greeks")
    fig.tight_layout()
    os.makedirs(args.out, exist_ok=True)
    png = os.path.join(args.out, f"{stem}_greeks.png")
    fig.savefig(png, dpi=120)
    plt.close(fig)
    print(png)


def qmc_plot(args, cfg, tmp, names, total, stem):
    """Standard error against paths, Philox and Sobol', per instrument."""
    samplers = {"philox": "Monte Carlo (Philox)", "sobol": "quasi-Monte Carlo (scrambled Sobol')"}
    series = {s: {name: [] for name in names} for s in samplers}
    for k in range(args.levels, -1, -1):
        paths = total >> k
        if paths < 1024:
            continue
        for sampler in samplers:
            got = rerun(args.strata, cfg, tmp, paths, ["--set", f"pricing.sampler={sampler}"])
            for name in names:
                series[sampler][name].append((got[name][0], got[name][5]))
    for name in names:
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        for sampler, label in samplers.items():
            pts = series[sampler][name]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
        first = series["philox"][name][0]
        n = [p[0] for p in series["philox"][name]]
        ax.plot(n, [first[1] * (first[0] / x) ** 0.5 for x in n], "k:", linewidth=1, label="N^-1/2")
        ax.plot(n, [first[1] * first[0] / x for x in n], "k--", linewidth=1, label="N^-1")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("paths")
        ax.set_ylabel("standard error")
        ax.set_title(f"{stem}: {name}")
        ax.legend()
        fig.tight_layout()
        png = os.path.join(args.out, f"{stem}_{name}_qmc.png")
        fig.savefig(png, dpi=120)
        plt.close(fig)
        print(png)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("output", help="a pricing run's HDF5 output")
    ap.add_argument("--instrument", help="only this instrument")
    ap.add_argument("--levels", type=int, default=6, help="halvings of the path count (default 6)")
    ap.add_argument("--strata", default=os.path.join("build", "strata"), help="the strata binary")
    ap.add_argument("--out", default=".", help="folder for the PNG files")
    ap.add_argument("--qmc", action="store_true", help="the Sobol'-against-Philox standard-error plot instead")
    ap.add_argument("--greeks", action="store_true", help="a bar chart of the run's Greeks instead")
    args = ap.parse_args()

    final = results(args.output)
    names = [args.instrument] if args.instrument else sorted(final)
    for name in names:
        if name not in final:
            sys.exit(f"{args.output}: no instrument {name!r} (has: {', '.join(sorted(final))})")
    stem = os.path.splitext(os.path.basename(args.output))[0]
    if args.greeks:
        greeks_plot(args, names, stem)
        return
    total = next(iter(final.values()))[0]
    series = {name: [] for name in names}
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "run.toml")
        with open(cfg, "w", encoding="utf-8") as f:
            f.write(config_text(args.output))
        if args.qmc:
            qmc_plot(args, cfg, tmp, names, total, stem)
            return
        for k in range(args.levels, 0, -1):
            paths = total >> k
            if paths < 2:
                continue
            got = rerun(args.strata, cfg, tmp, paths)
            for name in names:
                series[name].append(got[name])
    for name in names:
        series[name].append(final[name])

    for name in names:
        pts = series[name]
        paths = [p[0] for p in pts]
        price = [p[1] for p in pts]
        lo = [p[1] - p[2] for p in pts]
        hi = [p[3] - p[1] for p in pts]
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        ax.errorbar(paths, price, yerr=[lo, hi], fmt="o-", capsize=3, label="Monte Carlo, 95% CI")
        ref = pts[-1][4]
        if ref is not None:
            ax.axhline(ref, color="k", linestyle="--", linewidth=1, label=f"reference {ref:.6g}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("paths")
        ax.set_ylabel("price")
        ax.set_title(f"{stem}: {name}")
        ax.legend()
        fig.tight_layout()
        png = os.path.join(args.out, f"{stem}_{name}_convergence.png")
        fig.savefig(png, dpi=120)
        plt.close(fig)
        print(png)


if __name__ == "__main__":
    main()
