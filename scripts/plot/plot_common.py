"""What the plot scripts share: one command-line convention, clear errors,
and the unit choices every figure makes the same way.

The convention: `SCRIPT.py INPUT [INPUT ...] [-o DIR] [options]`. Each
input's figures go to DIR, by default the input's own folder (never the
current directory, so a script run from anywhere writes beside the data).
Every error is one line on stderr, `SCRIPT.py: error: ...`, and exit 2; no
Python traceback unless STRATA_PLOT_DEBUG=1 asks for one.
"""

import argparse
import os
import sys

try:
    import h5py
    import matplotlib
    import numpy as np
except ImportError as err:  # pragma: no cover - environment problem
    sys.exit(f"{os.path.basename(sys.argv[0])}: error: needs h5py, numpy and matplotlib "
             f"(Debian: python3-h5py python3-numpy python3-matplotlib), which {sys.executable} lacks ({err}): "
             f"run it with one that has them: "
             f"{os.environ.get('STRATA_PYTHON') or 'the Python STRATA_PYTHON names (scripts/lib.sh)'} {sys.argv[0]}")

matplotlib.use("Agg")  # files only: no display on cluster nodes


def _reader():
    """The strata reader package (python/ of the checkout, `pip install
    ./python`): the one installed in this Python, else the copy two folders
    up from these scripts (the checkout's python/, or share/strata/python
    of an installed tree)."""
    try:
        import strata as package
    except ImportError:
        beside = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python")
        if not os.path.isfile(os.path.join(beside, "strata", "__init__.py")):
            raise
        sys.path.insert(0, os.path.abspath(beside))
        import strata as package
    return package


try:
    strata = _reader()
except ImportError as err:  # pragma: no cover - environment problem
    sys.exit(f"{os.path.basename(sys.argv[0])}: error: the strata reader (python/ of the strata checkout) needs "
             f"pandas, xarray and h5netcdf (Debian: python3-pandas python3-xarray python3-h5netcdf), which "
             f"{sys.executable} lacks ({err})")

# Which script draws which model's output: named in the error for a file of
# another model, so the user learns the right command. A sibling of the
# script that runs, by the path it was started with (scripts/plot/ in a
# checkout, PREFIX/share/strata/scripts/plot/ where strata is installed).
SCRIPT_OF_MODEL = {model: os.path.join(os.path.dirname(sys.argv[0]), name) for model, name in {
    "pricing": "pricing.py",
    "nbody": "particles.py",
    "md": "particles.py",
    "shallow_water": "fields.py",
    "euler2d": "fields.py",
    "diffusion": "fields.py",
}.items()}


class PlotError(Exception):
    """A problem the user can fix (wrong file, wrong option): one line, exit 2."""


def script_name():
    return os.path.basename(sys.argv[0]) or "plot"


def parser(doc, inputs_help):
    """The shared argument parser: INPUT..., -o DIR, and the module's
    docstring as the description (so --help explains every option)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", metavar="INPUT", help=inputs_help)
    ap.add_argument("-o", "--out", metavar="DIR", default=None,
                    help="folder for the figures (created if missing; default: each input's own folder)")
    return ap


def out_dir(args, input_path):
    """The folder for INPUT's figures: -o DIR, else INPUT's own folder."""
    folder = os.path.abspath(args.out) if args.out else os.path.dirname(os.path.abspath(input_path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as err:
        raise PlotError(f"cannot create the output folder {folder}: {err.strerror}") from None
    if not os.access(folder, os.W_OK):
        raise PlotError(f"cannot write to the output folder {folder} (give another with -o DIR)")
    return folder


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


text = strata.reader.text   # an HDF5 string (bytes or str) as str


def attr(obj, name, default=""):
    return text(obj.attrs[name]) if name in obj.attrs else default


def open_output(path, models, what):
    """Open a strata HDF5 output of one of `models` for reading; a missing
    file, a file that is not HDF5 or the output of another model is a
    PlotError naming the file and, for another model, the script to use."""
    if not os.path.exists(path):
        raise PlotError(f"{path}: no such file")
    if os.path.isdir(path):
        raise PlotError(f"{path}: a folder, not an output file")
    if not h5py.is_hdf5(path):
        raise PlotError(f"{path}: not an HDF5 file; {script_name()} plots {what}")
    try:
        f = h5py.File(path, "r")
    except OSError as err:
        raise PlotError(f"{path}: cannot open: {err}") from None
    model = attr(f, "model", "")
    if model not in models:
        f.close()
        if model in SCRIPT_OF_MODEL:
            raise PlotError(f"{path}: output of the {model} model; {script_name()} plots {what}"
                            f" (for {model}: {SCRIPT_OF_MODEL[model]})")
        raise PlotError(f"{path}: not a strata output (no 'model' attribute naming one of "
                        f"{', '.join(sorted(SCRIPT_OF_MODEL))}); {script_name()} plots {what}")
    return f, model


def run(main):
    """Call main(); turn every error into one line on stderr and exit 2."""
    try:
        main()
    except PlotError as err:
        print(f"{script_name()}: error: {err}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as err:  # noqa: BLE001 - one line for the user, the traceback on request
        if os.environ.get("STRATA_PLOT_DEBUG"):
            raise
        print(f"{script_name()}: error: {type(err).__name__}: {err} "
              f"(STRATA_PLOT_DEBUG=1 shows where)", file=sys.stderr)
        sys.exit(2)


def plain_number(value):
    """The shortest decimal that reads back as `value` (no exponent for
    ordinary magnitudes): frame times print exactly as stored."""
    value = float(value)
    if value == 0:
        return "0"
    if 1e-4 <= abs(value) < 1e9:
        return np.format_float_positional(value, unique=True, trim="-")
    return np.format_float_scientific(value, unique=True, trim="-")


# Time units for a duration in seconds: the largest unit the run spans twice
# (minutes are skipped: 1000 s reads better than 16.67 min).
_TIME_UNITS = [("days", 86400.0), ("h", 3600.0), ("s", 1.0)]


def legend_times(values):
    """Labels for the times of a legend: three significant digits, more only
    where two times would read alike (a frame at 5.02516 s reads 5.03)."""
    for digits in range(3, 16):
        labels = [f"{v:.{digits}g}" for v in values]
        if len(set(labels)) == len(set(float(v) for v in values)):
            return labels
    return [repr(float(v)) for v in values]


def run_title(model, stem):
    """A figure's name for a run: its file stem, after the model where the
    stem does not already start with it ("md lj" but "md_langevin")."""
    return stem if stem.startswith(model) else f"{model} {stem}"


def time_unit(seconds_span):
    """(name, seconds per unit) that reads best for a span of time in s."""
    for name, size in _TIME_UNITS:
        if seconds_span >= 2 * size:
            return name, size
    return "s", 1.0


def time_text(t, unit):
    """t (s) in `unit`: exact when the unit divides it (3600 s -> 1 h);
    otherwise the stored seconds beside the rounded value."""
    name, size = unit
    if size == 1.0:
        return f"{plain_number(t)} s"
    value = float(t) / size
    short = round(value, 4)
    if short * size == float(t):
        return f"{plain_number(short)} {name}"
    return f"{value:.4g} {name} ({plain_number(t)} s)"


def length_unit(span_m):
    """(name, metres per unit): km for domains of 5 km and more."""
    return ("km", 1000.0) if span_m >= 5000.0 else ("m", 1.0)
