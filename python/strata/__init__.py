"""Read strata's output files with the tools the field already uses.

    import strata
    run = strata.open_run("out/quickstart.h5")   # status, model, config
    strata.fields("out/gaussian.h5")             # xarray.Dataset (time, z, y, x)
    strata.diagnostics("out/gaussian.h5")        # xarray.Dataset (time)
    strata.trajectory("out/lj_liquid.h5")        # Trajectory: arrays per frame
    strata.observables("out/lj_liquid.h5")       # pandas.DataFrame by step
    strata.pricing_summary("out/quickstart.h5")  # pandas.DataFrame by instrument
    strata.instruments("out/quickstart.h5")      # every dataset of each instrument
    strata.sweep_summary("sweep/summary.h5")     # pandas.DataFrame by point
    strata.timers("out/gaussian.h5")             # pandas.DataFrame by phase

Grids are CF netCDF-4 files, read by xarray (h5netcdf engine); tables are
groups of one column each along a dimension, read by xarray and handed to
pandas; particle files are H5MD, read with h5py. Every problem with a file
raises `OutputError` naming it.
"""

from .reader import (
    OutputError,
    Run,
    Instrument,
    Trajectory,
    diagnostics,
    fields,
    instruments,
    observables,
    open_run,
    pricing_summary,
    status,
    sweep_summary,
    table,
    timers,
    trajectory,
)

__all__ = [
    "OutputError",
    "Run",
    "Instrument",
    "Trajectory",
    "diagnostics",
    "fields",
    "instruments",
    "observables",
    "open_run",
    "pricing_summary",
    "status",
    "sweep_summary",
    "table",
    "timers",
    "trajectory",
]
__version__ = "0.1.0"
