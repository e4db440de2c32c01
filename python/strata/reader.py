"""The readers behind `import strata` (see the package's docstring)."""

import dataclasses
import os

import h5py
import numpy as np
import pandas as pd
import xarray as xr

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    tomllib = None

GRID_MODELS = ("diffusion", "euler2d", "shallow_water")
PARTICLE_MODELS = ("md", "nbody")
MODELS = ("pricing",) + GRID_MODELS + PARTICLE_MODELS

# xarray's engine for every netCDF read: h5netcdf sits on h5py, which strata's
# readers need anyway, and reads the same on every xarray since 2023.
ENGINE = "h5netcdf"


class OutputError(Exception):
    """A file that is missing, not HDF5, not strata's, or of another kind
    than the reader asked for. The message names the file."""


def text(value):
    """An HDF5 string attribute or scalar as str (h5py gives bytes or str)."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.ndarray) and value.shape == ():
        return text(value[()])
    return str(value)


def _open_h5(path):
    if not os.path.exists(path):
        raise OutputError(f"{path}: no such file")
    if os.path.isdir(path):
        raise OutputError(f"{path}: a folder, not an output file")
    if not h5py.is_hdf5(path):
        raise OutputError(f"{path}: not an HDF5 file")
    try:
        return h5py.File(path, "r")
    except OSError as err:
        raise OutputError(f"{path}: cannot open: {err}") from None


@dataclasses.dataclass
class Run:
    """What a strata output says about its run: the root attributes, the
    resolved configuration, and whether it is complete."""

    path: str
    model: str
    status: str
    attrs: dict
    config_text: str

    @property
    def complete(self):
        """True only when the run wrote everything: never trust another status."""
        return self.status == "complete"

    @property
    def config(self):
        """The resolved input as a dict (every key, defaults included)."""
        if tomllib is None:
            raise OutputError(f"{self.path}: reading the configuration needs Python 3.11's tomllib")
        return tomllib.loads(self.config_text)

    def performance(self):
        """The run's own figures, /performance/<figure>, as {name: (value, units)}."""
        with _open_h5(self.path) as f:
            if "performance" not in f:
                return {}
            return {name: (ds[()].item(), text(ds.attrs.get("units", "")))
                    for name, ds in f["performance"].items() if isinstance(ds, h5py.Dataset)}


def open_run(path):
    """The Run of a strata output file (or of a sweep summary, model 'sweep')."""
    with _open_h5(path) as f:
        attrs = {k: _attr(v) for k, v in f.attrs.items()}
        if "model" in attrs:
            model = attrs["model"]
        elif "summary" in f and "sweep_input" in attrs:
            model = "sweep"
        else:
            raise OutputError(f"{path}: not a strata output (no 'model' attribute)")
        config = text(f["config"][()]) if "config" in f else ""
    return Run(path=path, model=model, status=attrs.get("status", ""), attrs=attrs, config_text=config)


def status(path):
    """The file's status: 'complete', 'running', 'failed: ...', 'stopped: checkpointed', ..."""
    return open_run(path).status


def _expect(path, models, what):
    run = open_run(path)
    if run.model not in models:
        raise OutputError(f"{path}: output of the {run.model} model, which has no {what} "
                          f"(they are in the output of {', '.join(models)})")
    return run


def fields(path, decode_times=True):
    """A grid model's fields: an xarray Dataset with dimensions (time, [z,] y, x)
    (euler2d: (time, z, x)) and their coordinates, read lazily from the file.
    Time decodes to datetime64 from the file's epoch (1970-01-01 is t = 0);
    decode_times=False gives the model's seconds."""
    _expect(path, GRID_MODELS, "fields")
    return xr.open_dataset(path, engine=ENGINE, decode_times=decode_times)


def diagnostics(path, decode_times=True):
    """A grid model's diagnostics rows: an xarray Dataset along their own time
    (decoded as fields() does)."""
    _expect(path, GRID_MODELS, "diagnostics")
    return xr.open_dataset(path, group="diagnostics", engine=ENGINE, decode_times=decode_times)


def table(path, group):
    """A table strata wrote as a group of one 1-D dataset per column: a pandas
    DataFrame with strings decoded, each column's units in df.attrs['units']."""
    with _open_h5(path) as f:
        if group not in f or not isinstance(f[group], h5py.Group):
            raise OutputError(f"{path}: no table /{group}")
    with xr.open_dataset(path, group=group, engine=ENGINE) as ds:
        frame = ds.load().to_dataframe()
        # The columns in the table's order (HDF5 lists them by name).
        order = [str(c) for c in np.atleast_1d(ds.attrs.get("columns", []))]
        frame = frame[[c for c in order if c in frame.columns] + [c for c in frame.columns if c not in order]]
        frame.attrs["units"] = {name: ds[name].attrs["units"] for name in ds.variables
                                if "units" in ds[name].attrs}
    return frame


def pricing_summary(path):
    """One row per instrument: price, standard error, confidence bounds, paths,
    reference, and the Greeks where the run estimated them."""
    _expect(path, ("pricing",), "pricing summary")
    return table(path, "pricing/summary")


def sweep_summary(path):
    """One row per point of a collected sweep (`strata sweep --collect`)."""
    _expect(path, ("sweep",), "sweep summary")
    return table(path, "summary")


def timers(path):
    """Wall seconds per phase (min, avg, max over ranks), one row per phase."""
    open_run(path)
    return table(path, "timers")


@dataclasses.dataclass
class Trajectory:
    """A particle group's frames, as arrays with the frame first."""

    step: np.ndarray       # [frames]
    time: np.ndarray       # [frames]
    position: np.ndarray   # [frames, n, 3]
    velocity: object       # [frames, n, 3], or None where not written
    box: np.ndarray        # [frames, 3]: the box edges at each frame
    id: np.ndarray         # [n]
    mass: object           # [n], or None where all masses are 1
    units: dict            # element -> its CF units ("" where none is written)
    available: int         # frames in the file (the arrays hold those asked for)

    @property
    def frames(self):
        return len(self.step)


def _element(group, name):
    """An H5MD element: a dataset (time-independent) or a group with value."""
    item = group[name]
    return item["value"] if isinstance(item, h5py.Group) else item


def trajectory(path, group="all", frames=None):
    """The H5MD particle group `group` of an md or nbody output: every frame,
    or those `frames` selects (a slice, or increasing frame numbers; a slice
    of none reads only what every frame shares)."""
    _expect(path, PARTICLE_MODELS, "particle trajectory")
    with _open_h5(path) as f:
        if f"particles/{group}" not in f:
            raise OutputError(f"{path}: no particle group /particles/{group}")
        g = f["particles"][group]
        pos = g["position"]
        sel = slice(None) if frames is None else frames
        step = pos["step"][sel]
        box = _element(g["box"], "edges")
        if box.ndim == 1:  # a time-independent box (files of strata before 0.1.0's H5MD box)
            box = np.broadcast_to(box[()], (len(step), box.shape[0])).copy()
        else:
            box = box[sel]
        units = {}
        for name in ("position", "velocity", "mass"):
            if name in g:
                units[name] = text(_element(g, name).attrs.get("units", ""))
        return Trajectory(
            step=step, time=pos["time"][sel], position=pos["value"][sel],
            velocity=g["velocity"]["value"][sel] if "velocity" in g else None,
            box=box, id=_element(g, "id")[()],
            mass=_element(g, "mass")[()] if "mass" in g else None, units=units,
            available=pos["value"].shape[0])


def observables(path):
    """The H5MD observables of an md or nbody output: one row per step, the
    column `time`, and one column per observable (vectors as NAME_x, _y, _z);
    df.attrs['units'] and df.attrs['long_name'] by observable."""
    _expect(path, PARTICLE_MODELS, "observables")
    columns, units, long_names = {}, {}, {}
    with _open_h5(path) as f:
        if "observables" not in f:
            raise OutputError(f"{path}: no /observables")
        index = None
        for name, g in f["observables"].items():
            step, time, value = g["step"][()], g["time"][()], g["value"][()]
            units[name] = text(g["value"].attrs.get("units", ""))
            long_names[name] = text(g["value"].attrs.get("long_name", ""))
            if index is None:
                units["time"] = text(g["time"].attrs.get("units", ""))
            if index is None:
                index, columns["time"] = step, time
            elif not np.array_equal(step, index):
                raise OutputError(f"{path}: observable {name} has other steps than the others")
            if value.ndim == 1:
                columns[name] = value
            else:
                for k in range(value.shape[1]):
                    columns[f"{name}_{'xyz'[k] if value.shape[1] == 3 else k}"] = value[:, k]
    frame = pd.DataFrame(columns, index=pd.Index(index, name="step"))
    frame.attrs["units"] = units   # by observable (a vector's columns share it)
    frame.attrs["long_name"] = long_names
    return frame


@dataclasses.dataclass
class Instrument:
    """One instrument of a pricing output, /pricing/<name>: every dataset's
    value (a number or an array) and attributes, and the group's own."""

    name: str
    values: dict   # dataset name -> value
    attrs: dict    # dataset name -> {attribute: value}
    group_attrs: dict

    def units(self, key, default=""):
        return text(self.attrs.get(key, {}).get("units", default))


def instruments(path):
    """{name: Instrument} of a pricing output, in the file's order."""
    _expect(path, ("pricing",), "instruments")
    out = {}
    with _open_h5(path) as f:
        for name, g in f["pricing"].items():
            if name == "summary" or not isinstance(g, h5py.Group):
                continue
            values, attrs = {}, {}
            for key, ds in g.items():
                if isinstance(ds, h5py.Dataset):
                    values[key] = ds[()].item() if ds.shape == () else ds[()]
                    attrs[key] = {a: _attr(v) for a, v in ds.attrs.items()}
            out[name] = Instrument(name, values, attrs, {a: _attr(v) for a, v in g.attrs.items()})
    return out


def _attr(value):
    if isinstance(value, (bytes, np.bytes_)):
        return text(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "OSU":
        return [text(v) for v in value]
    return value
