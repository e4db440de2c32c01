#!/usr/bin/env python3
"""Convergence plot of a pricing run: price and 95% confidence interval
against the number of paths, with the reference price as a line.

    scripts/plot/pricing.py OUT.h5 [OUT.h5 ...] [-o DIR] [--instrument NAME]
                            [--levels K] [--strata BIN] [--qmc | --greeks]

The run's stored configuration (/config) is priced again at paths / 2^k,
k = 1..K (default 6), with the same seed, so the points are the run's
own estimator at fewer paths; the run itself is the last point, and the
x axis has a tick at each path count used. Writes
DIR/<stem>_<instrument>_convergence.png for each instrument (or the one
named); DIR is -o DIR, by default the folder of OUT.h5. The reruns use
--strata BIN, by default $STRATA_BIN, else the build/strata of the
checkout this script lives in (installed: PREFIX/bin/strata), else
strata on PATH. Needs python3-h5py, python3-numpy and python3-matplotlib.

--qmc draws instead the quasi-Monte Carlo against Monte Carlo error plot:
the stored configuration at each path count with pricing.sampler =
"philox" and = "sobol" (its replicates, default 16), the standard errors
on log-log axes with N^-1/2 and N^-1 guides, to
DIR/<stem>_<instrument>_qmc.png.

--greeks draws instead the run's Greeks (pricing.greeks) as bars, one
panel per Greek, labelled with its units (per 1.0 of the input: vega
per unit volatility, rho per unit rate, theta per year), one bar per
instrument (per asset on baskets), with 2-standard-error whiskers and a
marker at the closed form where one exists, to DIR/<stem>_greeks.png.
No rerun.
"""

import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import tomllib

import plot_common as pc
from plot_common import PlotError, np

reader = pc.strata  # the strata reader package (python/)

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, NullLocator  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def results(path):
    """{instrument: (paths, price, ci_low, ci_high, reference or None, stderr)}."""
    out = {}
    for name, inst in reader.instruments(path).items():
        v = inst.values
        out[name] = (int(v["paths"]), v["price"], v["ci95_low"], v["ci95_high"], v.get("reference_price"),
                     v["stderr"])
    return out


def reference_method(path, name):
    """How the instrument's reference price was computed (its `method`)."""
    return str(reader.instruments(path)[name].attrs.get("reference_price", {}).get("method", ""))


def price_units(path):
    for inst in reader.instruments(path).values():
        if "price" in inst.values:
            return inst.units("price", "currency")
    return "currency"


def config_text(path):
    text = reader.open_run(path).config_text
    if not text:
        raise PlotError(f"{path}: no /config: cannot rerun the stored configuration")
    return text


def find_strata(given):
    """--strata, $STRATA_BIN, this checkout's build/strata (installed:
    PREFIX/bin/strata for PREFIX/share/strata/scripts/plot), or strata on PATH."""
    for candidate in (given, os.environ.get("STRATA_BIN"),
                      os.path.join(HERE, os.pardir, os.pardir, "build", "strata"),
                      os.path.join(HERE, os.pardir, os.pardir, os.pardir, os.pardir, "bin", "strata")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
        if candidate and candidate == given:
            raise PlotError(f"--strata {given}: no such executable")
    found = shutil.which("strata")
    if found:
        return found
    raise PlotError("no strata binary to rerun the configuration: build it (scripts/run builds build/strata), "
                    "or give --strata BIN or STRATA_BIN")


def rerun(strata, cfg, tmp, paths, extra=()):
    """results() of the stored configuration at `paths` paths."""
    h5 = os.path.join(tmp, "rerun.h5")
    cmd = [strata, "run", cfg, "--set", f"pricing.paths={paths}", "-o", h5, "--overwrite",
           "--set", "checkpoint.every_seconds=0", *extra]
    env = dict(os.environ, STRATA_PROGRESS="off")
    res = subprocess.run(cmd, cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if res.returncode != 0:
        tail = res.stderr.strip().splitlines()[-1:] or ["(no message)"]
        raise PlotError(f"rerunning the configuration at {paths} paths failed (exit {res.returncode}): {tail[0]}")
    return results(h5)


def path_count_label(n):
    """2^k where n is one, else n shortened: 2M, 62.5k, 976."""
    k = n.bit_length() - 1
    if n == 1 << k:
        return f"$2^{{{k}}}$"
    for size, suffix in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if n >= size:
            return f"{n / size:.4g}{suffix}"
    return str(n)


def path_ticks(ax, counts):
    """A tick at each path count used, labelled short (path_count_label);
    where the labels would still run into each other, every other one (or
    third, ...) from the largest down. Call it last, with the legend placed."""
    counts = sorted(set(int(c) for c in counts))
    ax.xaxis.set_major_locator(FixedLocator(counts))
    ax.xaxis.set_minor_locator(NullLocator())
    labels = [path_count_label(n) for n in counts]
    ax.set_xticklabels(labels)
    fig = ax.figure
    for step in range(1, len(counts) + 1):
        shown = [label if (len(counts) - 1 - i) % step == 0 else "" for i, label in enumerate(labels)]
        ax.set_xticklabels(shown)
        fig.canvas.draw()   # the layout as saved: the legend beside the axes narrows them
        boxes = [t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()]
        if all(a.x1 + 4 <= b.x0 for a, b in zip(boxes, boxes[1:])):
            return


MIN_SLOTS = 8
GREEK_ORDER = ["delta", "gamma", "vega", "vega_v0", "vega_theta", "vega_xi", "rho", "theta"]
GREEK_SYMBOL = {"delta": "Δ", "gamma": "Γ", "vega": "vega", "vega_v0": "vega (v0)", "vega_theta": "vega (θ)",
                "vega_xi": "vega (ξ)", "rho": "ρ", "theta": "Θ"}


def greeks_of(path, names):
    """({greek: [(label, value, stderr, reference or None)]}, {greek: units})."""
    out, units = {}, {}
    insts = reader.instruments(path)
    for name in names:
        inst = insts[name]
        v = inst.values
        for greek in GREEK_ORDER:
            if greek not in v:
                continue
            units.setdefault(greek, inst.units(greek))
            value, se = np.asarray(v[greek]), np.asarray(v[greek + "_stderr"])
            ref = v.get(greek + "_reference")
            if value.shape == ():
                out.setdefault(greek, []).append((name, float(value), float(se), ref))
            else:
                assets = inst.attrs[greek]["assets"]
                refs = list(ref) if ref is not None and np.ndim(ref) != 0 else [None] * len(assets)
                for a, x, e, r in zip(assets, value, se, refs):
                    # One instrument: the assets alone label the bars (the title names it).
                    label = a if len(names) == 1 else f"{name}[{a}]"
                    out.setdefault(greek, []).append((label, float(x), float(e), r))
    return out, units


def greeks_plot(path, args, names, stem, folder):
    """Bars of each Greek with 2-sigma whiskers and closed-form markers."""
    greeks, units = greeks_of(path, names)
    if not greeks:
        raise PlotError(f"{path}: no Greeks in the file (the run had no pricing.greeks)")
    order = [g for g in GREEK_ORDER if g in greeks]
    rows = max(len(greeks[g]) for g in order)
    width = min(max(5.0, 0.55 * rows + 3.0), 16.0)
    fig, axes = plt.subplots(len(order), 1, figsize=(width, 1.9 * len(order) + 1.2), squeeze=False,
                             constrained_layout=True)
    any_ref = False
    for ax, greek in zip(axes[:, 0], order):
        entries = greeks[greek]
        x = range(len(entries))
        ax.bar(x, [r[1] for r in entries], yerr=[2 * r[2] for r in entries], capsize=3, color="tab:blue",
               width=0.6)
        refs = [(i, r[3]) for i, r in enumerate(entries) if r[3] is not None]
        if refs:
            any_ref = True
            ax.plot([i for i, _ in refs], [v for _, v in refs], "kD", markersize=5)
        ax.axhline(0.0, color="k", linewidth=0.5)
        # At least MIN_SLOTS bar widths per panel, the bars centred: a panel
        # of one Greek (Heston's vega_xi) keeps the bar width of the others.
        spare = max(MIN_SLOTS - len(entries), 0) / 2
        ax.set_xlim(-0.5 - spare, len(entries) - 0.5 + spare)
        ax.set_xticks(list(x))
        ax.set_xticklabels([r[0] for r in entries], rotation=30 if len(entries) > 3 else 0,
                           ha="right" if len(entries) > 3 else "center", fontsize=8)
        unit = units.get(greek) or ""
        ax.set_ylabel(f"{GREEK_SYMBOL[greek]}\n[{unit}]" if unit else GREEK_SYMBOL[greek], fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    # One legend for the figure, above the panels, where it hides no bar.
    handles = [plt.Rectangle((0, 0), 1, 1, color="tab:blue"),
               plt.Line2D([], [], color="k", marker="|", linestyle="none", markersize=10)]
    labels = ["Monte Carlo estimate", "± 2 standard errors"]
    if any_ref:
        handles.append(plt.Line2D([], [], color="k", marker="D", linestyle="none", markersize=5))
        labels.append("closed form or semi-analytic")
    axes[0, 0].legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.02), ncol=len(labels),
                      fontsize=8, frameon=False)
    fig.suptitle(f"pricing {stem}: Greeks" + (f" of {names[0]}, per asset" if len(names) == 1 else ""), fontsize=10)
    png = os.path.join(folder, f"{stem}_greeks.png")
    fig.savefig(png, dpi=120)
    plt.close(fig)
    print(png)


def qmc_plot(args, strata, cfg, tmp, names, total, stem, folder, extra):
    """Standard error against paths, Philox and Sobol', per instrument."""
    samplers = {"philox": "Monte Carlo (Philox)", "sobol": "quasi-Monte Carlo (scrambled Sobol')"}
    series = {s: {name: [] for name in names} for s in samplers}
    for k in range(args.levels, -1, -1):
        paths = total >> k
        if paths < 1024:
            continue
        for sampler in samplers:
            got = rerun(strata, cfg, tmp, paths, ["--set", f"pricing.sampler={sampler}", *extra])
            for name in names:
                series[sampler][name].append((got[name][0], got[name][5]))
    if not series["philox"][names[0]]:
        raise PlotError(f"--qmc needs at least 1024 paths in the run (it has {total})")
    units = args.price_units
    for name in names:
        fig, ax = plt.subplots(figsize=(7.4, 4.2), constrained_layout=True)
        for sampler, label in samplers.items():
            pts = series[sampler][name]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
        first = series["philox"][name][0]
        n = [p[0] for p in series["philox"][name]]
        ax.plot(n, [first[1] * (first[0] / x) ** 0.5 for x in n], "k:", linewidth=1, label="$\\propto N^{-1/2}$")
        ax.plot(n, [first[1] * first[0] / x for x in n], "k--", linewidth=1, label="$\\propto N^{-1}$")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("paths N")
        ax.set_ylabel(f"standard error [{units}]")
        ax.set_title(f"pricing {stem}: {name}", fontsize=10)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        path_ticks(ax, n)
        png = os.path.join(folder, f"{stem}_{name}_qmc.png")
        fig.savefig(png, dpi=120)
        plt.close(fig)
        print(png)


def portfolio_override(path, text):
    """--set for a portfolio file named relative to the original input: the
    rerun's configuration lives elsewhere, so give it the file's absolute
    path (looked up beside the input as the run named it, from the current
    directory or from the output's folder and its parent)."""
    try:
        name = tomllib.loads(text).get("pricing", {}).get("portfolio_file", "")
    except tomllib.TOMLDecodeError:
        return []
    if not name or os.path.isabs(name):
        return []
    input_file = str(reader.open_run(path).attrs.get("input_file", ""))
    out_dir = os.path.dirname(os.path.abspath(path))
    for base in (os.getcwd(), out_dir, os.path.dirname(out_dir)):
        candidate = os.path.join(base, os.path.dirname(input_file), name)
        if os.path.isfile(candidate):
            return ["--set", f"pricing.portfolio_file={json.dumps(os.path.abspath(candidate))}"]
    raise PlotError(f"{path}: the run priced the portfolio file {name!r} beside its input {input_file}, "
                    "which is not found from here: run from the directory the run was started in")


def convergence_plot(args, strata, path, names, final, stem, folder):
    total = next(iter(final.values()))[0]
    series = {name: [] for name in names}
    text = config_text(path)
    extra = portfolio_override(path, text)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "run.toml")
        with open(cfg, "w", encoding="utf-8") as f:
            f.write(text)
        if args.qmc:
            qmc_plot(args, strata, cfg, tmp, names, total, stem, folder, extra)
            return
        for k in range(args.levels, 0, -1):
            paths = total >> k
            if paths < 2:
                continue
            got = rerun(strata, cfg, tmp, paths, extra)
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
        fig, ax = plt.subplots(figsize=(7.4, 4.2), constrained_layout=True)
        ax.errorbar(paths, price, yerr=[lo, hi], fmt="o-", capsize=3, label="Monte Carlo, 95% CI")
        ref = pts[-1][4]
        if ref is not None:
            method = reference_method(path, name)
            ax.axhline(ref, color="k", linestyle="--", linewidth=1,
                       label=f"reference {ref:.6g}" + ("\n" + textwrap.fill(f"({method})", 30) if method else ""))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("paths")
        ax.set_ylabel(f"price [{args.price_units}]")
        ax.set_title(f"pricing {stem}: {name}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        path_ticks(ax, paths)
        png = os.path.join(folder, f"{stem}_{name}_convergence.png")
        fig.savefig(png, dpi=120)
        plt.close(fig)
        print(png)


def plot_file(path, args):
    f, _ = pc.open_output(path, ("pricing",), "pricing outputs")
    with f:
        if "pricing" not in f:
            raise PlotError(f"{path}: no /pricing group: the run wrote no prices (status {pc.attr(f, 'status')})")
    final = results(path)
    if not final:
        raise PlotError(f"{path}: no instruments under /pricing")
    names = [args.instrument] if args.instrument else sorted(final)
    for name in names:
        if name not in final:
            raise PlotError(f"{path}: no instrument {name!r} (has: {', '.join(sorted(final))})")
    stem = pc.stem(path)
    folder = pc.out_dir(args, path)
    args.price_units = price_units(path)
    if args.greeks:
        greeks_plot(path, args, names, stem, folder)
        return
    convergence_plot(args, find_strata(args.strata), path, names, final, stem, folder)


def main():
    ap = pc.parser(__doc__, "a pricing run's HDF5 output")
    ap.add_argument("--instrument", help="only this instrument (default: every one)")
    ap.add_argument("--levels", type=int, default=6, help="halvings of the path count to rerun (default 6)")
    ap.add_argument("--strata", metavar="BIN", default=None,
                    help="the strata binary for the reruns (default: $STRATA_BIN, this checkout's build/strata, "
                         "or strata on PATH)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--qmc", action="store_true", help="the Sobol'-against-Philox standard-error plot instead")
    mode.add_argument("--greeks", action="store_true", help="a bar chart of the run's Greeks instead (no rerun)")
    args = ap.parse_args()
    if args.levels < 1:
        raise PlotError(f"--levels {args.levels}: at least 1")
    for path in args.inputs:
        plot_file(path, args)


if __name__ == "__main__":
    pc.run(main)
