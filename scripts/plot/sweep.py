#!/usr/bin/python3
"""Heat map of one result of a strata sweep over two swept parameters.

    scripts/plot/sweep.py summary.csv [--x KEY] [--y KEY] [--value COLUMN] [-o sweep.png]

Reads the CSV that `strata sweep INPUT --collect summary.h5` writes beside
summary.h5 (index, swept parameters, status, results). Defaults: the first
two swept columns (x, then y) and the first `.price` column. Cells of points
that are not done (NaN) stay blank. Needs python3-numpy and python3-matplotlib.
"""

import argparse
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display on cluster nodes
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
        if not rows:
            sys.exit(f"{path}: no points in the summary")
        return list(rows[0].keys()), rows


def as_float(text):
    try:
        return float(text)
    except ValueError:
        return math.nan


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="summary.csv from strata sweep --collect")
    ap.add_argument("--x", help="swept parameter on the x axis (default: the first)")
    ap.add_argument("--y", help="swept parameter on the y axis (default: the second)")
    ap.add_argument("--value", help="result column to colour by (default: the first .price)")
    ap.add_argument("-o", "--output", default="sweep.png", help="PNG to write (default sweep.png)")
    args = ap.parse_args()

    columns, rows = read_csv(args.csv)
    if "status" not in columns:
        sys.exit(f"{args.csv}: no status column: not a strata sweep summary")
    # Swept parameters sit between index and status.
    swept = columns[columns.index("index") + 1:columns.index("status")]
    results = columns[columns.index("status") + 1:]
    x = args.x or (swept[0] if swept else None)
    y = args.y or next((c for c in swept if c != x), None)
    value = args.value or next((c for c in results if c.endswith(".price")), None)
    for name, what in ((x, "--x"), (y, "--y"), (value, "--value")):
        if name is None:
            sys.exit(f"{args.csv}: cannot pick {what}: columns are {', '.join(columns)}")
        if name not in columns:
            sys.exit(f"{args.csv}: {what} {name}: no such column (columns: {', '.join(columns)})")

    xs = sorted({as_float(r[x]) for r in rows})
    ys = sorted({as_float(r[y]) for r in rows})
    grid = np.full((len(ys), len(xs)), np.nan)
    for r in rows:
        # With more than two swept parameters, the last point of a cell wins.
        grid[ys.index(as_float(r[y])), xs.index(as_float(r[x]))] = as_float(r[value])

    fig, ax = plt.subplots(figsize=(1.2 + 0.6 * len(xs), 1.2 + 0.5 * len(ys)), constrained_layout=True)
    mesh = ax.imshow(np.ma.masked_invalid(grid), origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(xs)), [f"{v:g}" for v in xs])
    ax.set_yticks(range(len(ys)), [f"{v:g}" for v in ys])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.set_title(value)
    fig.colorbar(mesh, ax=ax, label=value)
    if len(xs) * len(ys) <= 150:
        for i in range(len(ys)):
            for j in range(len(xs)):
                if not math.isnan(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.3g}", ha="center", va="center", fontsize=7, color="w")
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}: {value} over {x} x {y} ({len(xs)} x {len(ys)})")


if __name__ == "__main__":
    main()
