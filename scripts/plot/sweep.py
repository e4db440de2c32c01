#!/usr/bin/env python3
"""Heat map of one result of a strata sweep over two swept parameters.

    scripts/plot/sweep.py SUMMARY [SUMMARY ...] [-o DIR] [--x KEY] [--y KEY] [--value COLUMN]

SUMMARY is what `strata sweep INPUT --collect summary.h5` writes: the HDF5
file or the CSV beside it (index, swept parameters, status, results); the
table is read from the HDF5 file where there is one (with the strata
reader), else from the CSV (with pandas). Defaults: the first two swept columns (x, then
y) and the first `.price` column (else the first numeric result). Each
cell is annotated with its value, in black or white, whichever reads on
the cell's colour. Cells of points that are not done (NaN) stay blank.
Axis and colourbar labels carry the units of the input keys, taken from
the summary where it names them, else from the input reference of this
checkout (docs/inputs.md). Writes DIR/<stem>_<value>.png; DIR is -o DIR,
by default the folder of SUMMARY.

Needs the strata reader (python/: numpy, h5py, pandas, xarray, h5netcdf)
and matplotlib.
"""

import math
import os
import re

import plot_common as pc
from plot_common import PlotError, np

import pandas

reader = pc.strata  # the strata reader package (python/)

import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
INPUT_REFERENCE = os.path.join(HERE, os.pardir, os.pardir, "docs", "inputs.md")

# Units of the result columns a pricing summary has (docs/output.md).
RESULT_UNITS = {"price": "currency", "stderr": "currency", "ci95_low": "currency", "ci95_high": "currency",
                "reference_price": "currency", "paths": "paths", "delta": "1", "gamma": "1/currency",
                "vega": "currency per unit vol", "rho": "currency per unit rate", "theta": "currency/year",
                "compute_seconds": "s", "option_paths_per_second": "1/s"}


def schema_units():
    """{(table, key): unit} from docs/inputs.md's tables (`### [table]`
    headings, then `| key | type | default | unit | ...` rows)."""
    units = {}
    try:
        with open(INPUT_REFERENCE, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return units
    table = None
    for line in lines:
        m = re.match(r"^### `\[+([\w.]+)\]+`", line)
        if m:
            table = m.group(1)
            continue
        # | `key` | type | default | unit | range | doc |; a type may hold "\|".
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)]
        if table and len(cells) >= 6 and re.fullmatch(r"`\w+`", cells[1]):
            units[(table, cells[1].strip("`"))] = cells[4]
    return units


def key_unit(column, schema, stored):
    """The unit of a swept key or result column, or ''."""
    if column in stored:
        return stored[column]
    parts = column.split(".")
    if len(parts) >= 2:
        key = parts[-1]
        # pricing.asset.0.vol or pricing.asset.SPX.vol -> table pricing.asset
        for cut in (len(parts) - 1, len(parts) - 2):
            unit = schema.get((".".join(parts[:cut]), key))
            if unit is not None:
                return unit
        if parts[-1] in RESULT_UNITS:
            return RESULT_UNITS[parts[-1]]
    return ""


def labelled(column, unit):
    return f"{column} [{unit}]" if unit and unit != "1" else column


def read_summary(path):
    """(columns, rows as dicts, units by column) of a sweep summary: the
    table of summary.h5 (given, or beside the CSV given) through the strata
    reader, else the CSV through pandas."""
    if not os.path.exists(path):
        raise PlotError(f"{path}: no such file")
    base, ext = os.path.splitext(path)
    h5_path = path if ext == ".h5" else base + ".h5"
    frame, units = None, {}
    if ext == ".h5" or os.path.exists(h5_path):
        try:
            run = reader.open_run(h5_path)
        except reader.OutputError:
            if ext == ".h5":
                raise PlotError(f"{path}: not a sweep summary; sweep.py plots the summary of strata sweep "
                                "--collect") from None
            run = None
        if run is not None and run.model != "sweep":
            hint = f" (for {run.model}: {pc.SCRIPT_OF_MODEL[run.model]})" if run.model in pc.SCRIPT_OF_MODEL else ""
            raise PlotError(f"{path}: no /summary: not a sweep summary; sweep.py plots the summary "
                            f"of strata sweep --collect{hint}")
        if run is not None:
            frame = reader.sweep_summary(h5_path)
            units = frame.attrs.get("units", {})
            frame = frame.reset_index()
    if frame is None:
        try:
            frame = pandas.read_csv(path, keep_default_na=False, na_values=["nan", "NaN"])
        except (UnicodeDecodeError, pandas.errors.ParserError):
            raise PlotError(f"{path}: not a text file; sweep.py plots the summary of strata sweep --collect") \
                from None
        except pandas.errors.EmptyDataError:
            frame = pandas.DataFrame()
    if frame.empty:
        raise PlotError(f"{path}: no points in the summary")
    return [str(c) for c in frame.columns], frame.to_dict("records"), units


def as_float(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def plot_file(path, args, schema):
    columns, rows, stored = read_summary(path)
    csv_path = path
    if "status" not in columns or "index" not in columns:
        raise PlotError(f"{csv_path}: no index and status columns: not a strata sweep summary")
    # Swept parameters sit between index and status.
    swept = columns[columns.index("index") + 1:columns.index("status")]
    results = columns[columns.index("status") + 1:]
    x = args.x or (swept[0] if swept else None)
    y = args.y or next((c for c in swept if c != x), None)
    numeric = [c for c in results if any(not math.isnan(as_float(r[c])) for r in rows)]
    value = args.value or next((c for c in results if c.endswith(".price")), None) or \
        (numeric[0] if numeric else None)
    for name, what in ((x, "--x"), (y, "--y"), (value, "--value")):
        if name is None:
            raise PlotError(f"{csv_path}: cannot pick {what}: columns are {', '.join(columns)}"
                            + (" (a heat map needs two swept parameters)" if what == "--y" else ""))
        if name not in columns:
            raise PlotError(f"{csv_path}: {what} {name}: no such column (columns: {', '.join(columns)})")

    xs = sorted({as_float(r[x]) for r in rows})
    ys = sorted({as_float(r[y]) for r in rows})
    grid = np.full((len(ys), len(xs)), np.nan)
    for r in rows:
        # With more than two swept parameters, the last point of a cell wins.
        grid[ys.index(as_float(r[y])), xs.index(as_float(r[x]))] = as_float(r[value])

    cell_w, cell_h = 0.78, 0.42
    fig, ax = plt.subplots(figsize=(max(5.0, 2.6 + cell_w * len(xs)), max(3.2, 1.7 + cell_h * len(ys))),
                           constrained_layout=True)
    cmap = plt.get_cmap("viridis")
    finite = grid[np.isfinite(grid)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    norm = plt.Normalize(vmin, vmax if vmax > vmin else vmin + 1.0)
    mesh = ax.imshow(np.ma.masked_invalid(grid), origin="lower", aspect="auto", cmap=cmap, norm=norm)
    ax.set_xticks(range(len(xs)), [f"{v:g}" for v in xs])
    ax.set_yticks(range(len(ys)), [f"{v:g}" for v in ys])
    ax.set_xlabel(labelled(x, key_unit(x, schema, stored)))
    ax.set_ylabel(labelled(y, key_unit(y, schema, stored)))
    value_label = labelled(value, key_unit(value, schema, stored))
    done = int(np.isfinite(grid).sum())
    ax.set_title(f"{value} over {len(xs)} x {len(ys)} points ({done} done)", fontsize=10)
    fig.colorbar(mesh, ax=ax, label=value_label)
    if len(xs) * len(ys) <= 400:
        size = 9 if len(xs) <= 12 else 7
        for i in range(len(ys)):
            for j in range(len(xs)):
                v = grid[i, j]
                if math.isnan(v):
                    continue
                r, g, b, _ = cmap(norm(v))
                # Relative luminance (ITU-R BT.709): dark text on light cells.
                colour = "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white"
                ax.text(j, i, f"{v:.4g}", ha="center", va="center", fontsize=size, color=colour)
    folder = pc.out_dir(args, path)
    safe = re.sub(r"[^\w.-]", "_", value)
    png = os.path.join(folder, f"{pc.stem(path)}_{safe}.png")
    fig.savefig(png, dpi=130)
    plt.close(fig)
    print(f"wrote {png}: {value} over {x} x {y} ({len(xs)} x {len(ys)})")


def main():
    ap = pc.parser(__doc__, "summary.h5 or summary.csv from strata sweep --collect")
    ap.add_argument("--x", metavar="KEY", help="swept parameter on the x axis (default: the first)")
    ap.add_argument("--y", metavar="KEY", help="swept parameter on the y axis (default: the second)")
    ap.add_argument("--value", metavar="COLUMN",
                    help="result column to colour by (default: the first .price, else the first numeric result)")
    args = ap.parse_args()
    schema = schema_units()
    for path in args.inputs:
        plot_file(path, args, schema)


if __name__ == "__main__":
    pc.run(main)
