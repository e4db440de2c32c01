#!/usr/bin/env python3
"""Figures of a particle model's H5MD output (nbody, md).

    scripts/plot/particles.py OUT.h5 [OUT.h5 ...] [-o DIR] [--frame N|last]
                              [--bins B] [--smooth S] [--extent L]

For each OUT.h5, in DIR (-o DIR, by default the folder of OUT.h5):

- DIR/<stem>_energy.png, for runs without a thermostat: the relative
  energy error dE/E = (E(t) - E(0)) / |E(0)| against time (the sign is
  kept: negative means energy lost), and the kinetic, potential and total
  energies below it (nbody adds the virial ratio 2K/|W|).
- DIR/<stem>_temperature.png instead, for thermostatted runs (md with
  thermostat = "langevin"): the temperature against the bath's target,
  where the total energy is not conserved and its drift means nothing.
- DIR/<stem>_density.png, for nbody runs of more than 8 bodies: the
  surface density of frame N (default: the last) projected on the x-y
  plane about the centre of the densest region (shrinking spheres), on
  B x B cells (default 128) over [-L, L]^2 (default: the half width
  holding 99% of the bodies), on a log scale. Each body is spread as a
  Gaussian half as wide as the distance to its 16th nearest neighbour in
  projection, and at least S cells (default 1.5), so a few thousand
  bodies show their structure (a sharp core, a smooth halo) rather than a
  speckle of single bodies. Above 20000 bodies, or with --smooth 0, a
  mass-weighted histogram smoothed by S cells.
- DIR/<stem>_orbits.png instead, for 8 bodies or fewer stored in 20
  frames or more that trace their paths: each body's path in the x-y
  plane through the frames.

Units: md works in Lennard-Jones units (length sigma, energy epsilon, time
tau, temperature epsilon/k_B); nbody in N-body units (G = M = 1, so length,
time and energy are in units of the initial scales the input sets). Where
a dataset carries a unit other than "1" that one is shown.

Needs the strata reader (python/: numpy, h5py, pandas, xarray, h5netcdf)
and matplotlib.
"""

import sys
import tomllib

import plot_common as pc
from plot_common import PlotError, np

reader = pc.strata  # the strata reader package (python/)

import matplotlib.colors as colors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

# What each quantity is measured in, per model, where the file says "1".
UNITS = {
    "md": {"length": "σ", "time": "τ", "energy": "ε", "temperature": "ε/k_B", "density": "m/σ²",
           "system": "Lennard-Jones units"},
    "nbody": {"length": "N-body units", "time": "N-body units", "energy": "N-body units",
              "temperature": "", "density": "N-body units", "system": "N-body units: G = M = 1"},
}


# Fewer frames than this draw no path (two_body.toml stores one frame per
# orbit: every frame at the same point).
MIN_ORBIT_FRAMES = 20

# Few-body runs (Kepler) show paths; more bodies than this, a density map.
ORBIT_MAX_BODIES = 8

# Neighbours whose distance sets a body's smoothing width in the density map.
NEIGHBOURS = 16


class Run:
    """A particle output through the strata reader: its trajectory, its
    observables and its configuration, read once."""

    def __init__(self, path, model):
        self.path = path
        self.model = model
        self.stem = pc.stem(path)
        try:
            self.config = reader.open_run(path).config
        except tomllib.TOMLDecodeError:
            self.config = {}
        self.units = UNITS[model]
        # What every frame shares (ids, masses, the frame count); frames on demand.
        self.traj = reader.trajectory(path, frames=slice(0, 0))
        try:
            self.obs = reader.observables(path)
        except reader.OutputError:
            self.obs = None

    def unit(self, kind, quantity=None):
        """The unit of a quantity: its own if it says more than "1", else
        the model's unit system."""
        own = quantity.units if quantity is not None else ""
        # "1" (dimensionless) or the name of a unit system says no more
        # than the model's own units do.
        if own and own not in ("1", "lj", "nbody", "LJ"):
            return own
        return self.units[kind]

    def series(self, name):
        """(time, values, Quantity) of an observable, or None."""
        if self.obs is None or name not in self.obs.attrs["units"]:
            return None
        what = Quantity(self.obs.attrs["units"][name], self.obs.attrs["long_name"][name])
        return self.obs["time"].to_numpy(), self.obs[name].to_numpy(), what

    def label(self, what, kind, quantity=None):
        u = self.unit(kind, quantity)
        return f"{what} [{u}]" if u else what


class Quantity:
    """An observable's units and long name."""

    def __init__(self, units, long_name):
        self.units, self.long_name = units, long_name


def time_axis(ax, run):
    ax.set_xlabel(run.label("time", "time"))


def energy_plot(run, folder):
    got = run.series("total_energy")
    if got is None:
        raise PlotError(f"{run.path}: no /observables/total_energy: the run wrote no observables")
    t, e, ds = got
    virial = run.series("virial_ratio")
    rows = 3 if virial is not None else 2
    fig, axes = plt.subplots(rows, 1, figsize=(7.0, 2.3 * rows + 0.6), sharex=True, constrained_layout=True)
    top, bottom = axes[0], axes[1]
    scale = abs(e[0]) if e[0] != 0 else 1.0
    rel = (e - e[0]) / scale
    top.plot(t, rel, lw=1, color="k")
    top.axhline(0.0, color="0.6", lw=0.6)
    top.set_ylabel("dE/E = (E(t) - E(0)) / |E(0)|", fontsize=9)
    worst = int(np.argmax(np.abs(rel)))
    top.plot(t[worst], rel[worst], "o", color="tab:red", ms=4,
             label=f"largest |dE/E|:\n{rel[worst]:+.2e} at t = {t[worst]:.4g}")
    top.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    fig.suptitle(f"{pc.run_title(run.model, run.stem)}: energy ({run.units['system']})", fontsize=10)
    top.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
    top.grid(alpha=0.3)
    for name, label in (("kinetic_energy", "kinetic K"), ("potential_energy", "potential W"),
                        ("total_energy", "total E")):
        got = run.series(name)
        if got is not None:
            bottom.plot(got[0], got[1], lw=1, label=label)
    per_atom = "per atom" in ds.long_name
    bottom.set_ylabel(run.label("energy per atom" if per_atom else "energy", "energy", ds))
    bottom.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    bottom.grid(alpha=0.3)
    if virial is not None:
        axes[2].plot(virial[0], virial[1], lw=1, color="tab:purple")
        axes[2].axhline(1.0, color="k", lw=0.8, ls="--", label="virial equilibrium")
        axes[2].set_ylabel("2K / |W|")
        axes[2].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        axes[2].grid(alpha=0.3)
    time_axis(axes[-1], run)
    path = f"{folder}/{run.stem}_energy.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def temperature_plot(run, folder, target):
    got = run.series("temperature")
    if got is None:
        raise PlotError(f"{run.path}: a thermostatted run without /observables/temperature")
    t, temp, ds = got
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.0, 5.2), sharex=True, constrained_layout=True)
    top.plot(t, temp, lw=1, color="tab:red", label="temperature")
    top.axhline(target, color="k", ls="--", lw=1, label=f"thermostat target T = {pc.plain_number(target)}")
    # After the first quarter, as the bath has had time to act.
    settled = temp[len(temp) // 4:]
    top.plot([], [], " ", label=f"mean after t = {t[len(temp) // 4]:.4g}: {settled.mean():.4f}")
    fig.suptitle(f"{pc.run_title(run.model, run.stem)}: Langevin thermostat ({run.units['system']})", fontsize=10)
    top.set_ylabel(run.label("temperature", "temperature", ds))
    top.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    top.grid(alpha=0.3)
    e_ds = None
    for name, label in (("kinetic_energy", "kinetic K"), ("potential_energy", "potential W"),
                        ("total_energy", "total E")):
        got = run.series(name)
        if got is not None:
            bottom.plot(got[0], got[1], lw=1, label=label)
            e_ds = got[2]
    per_atom = e_ds is not None and "per atom" in e_ds.long_name
    bottom.set_ylabel(run.label("energy per atom" if per_atom else "energy", "energy", e_ds))
    bottom.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    bottom.grid(alpha=0.3)
    time_axis(bottom, run)
    path = f"{folder}/{run.stem}_temperature.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def frame_index(run, spec, count):
    if spec == "last":
        return count - 1
    try:
        k = int(spec)
    except ValueError:
        raise PlotError(f"--frame {spec}: expected a frame number or last") from None
    k = k + count if k < 0 else k
    if not 0 <= k < count:
        raise PlotError(f"{run.path}: --frame {spec}: the file has frames 0 to {count - 1}")
    return k


def gaussian_smooth(h, sigma_bins):
    """h convolved with a normalised Gaussian of sigma_bins along each axis
    (zero outside the window: mass leaving it is not folded back in)."""
    if sigma_bins <= 0:
        return h
    half = int(np.ceil(4 * sigma_bins))
    k = np.exp(-0.5 * (np.arange(-half, half + 1) / sigma_bins) ** 2)
    k /= k.sum()
    h = np.apply_along_axis(lambda v: np.convolve(v, k, mode="same"), 0, h)
    return np.apply_along_axis(lambda v: np.convolve(v, k, mode="same"), 1, h)


def adaptive_density(p, m, centres, neighbours, floor):
    """Projected surface density on the grid `centres` x `centres`: each
    body a 2-D Gaussian of width half the distance to its `neighbours`-th
    nearest neighbour in projection (at least `floor`), so the dense core
    stays sharp and the sparse halo smooth instead of a speckle of single
    bodies (the adaptive kernel estimate of SPH-style density maps)."""
    n = len(p)
    k = min(neighbours, n - 1)
    width = np.empty(n)
    for lo in range(0, n, 512):
        d2 = ((p[lo:lo + 512, None, :] - p[None, :, :]) ** 2).sum(axis=2)
        width[lo:lo + 512] = np.sqrt(np.partition(d2, k, axis=1)[:, k]) / 2
    width = np.maximum(width, floor)
    gx = centres[:, None]
    rho = np.zeros((len(centres), len(centres)))
    for lo in range(0, n, 256):
        w = width[lo:lo + 256]
        ex = np.exp(-0.5 * ((gx - p[None, lo:lo + 256, 0]) / w) ** 2)   # [grid x, body]
        ey = np.exp(-0.5 * ((gx - p[None, lo:lo + 256, 1]) / w) ** 2)   # [grid y, body]
        rho += (ex * (m[lo:lo + 256] / (2 * np.pi * w ** 2))) @ ey.T
    return rho


# Above this many bodies the neighbour search (N^2 distances) is too slow
# for a plot: a fixed-width smoothed histogram instead.
ADAPTIVE_MAX_BODIES = 20000


def density_centre(x, m):
    """The centre of the densest region by shrinking spheres (Power et al.
    2003, MNRAS 338, 14): the centre of mass of the bodies within a sphere
    shrunk by 2.5% a step, until 1% of them (at least 32) remain. Unlike the
    centre of mass it stays on a core that ejected bodies pull away from."""
    centre = np.average(x, axis=0, weights=m)
    radius = float(np.sqrt(((x - centre) ** 2).sum(axis=1)).max())
    keep = max(32, len(m) // 100)
    inside = np.ones(len(m), dtype=bool)
    while inside.sum() > keep:
        radius *= 0.975
        inside = ((x - centre) ** 2).sum(axis=1) < radius ** 2
        if inside.sum() < keep:
            break
        centre = np.average(x[inside], axis=0, weights=m[inside])
    return centre


def density_plot(run, folder, frame, bins, smooth, extent):
    k = frame_index(run, frame, run.traj.available)
    drawn = reader.trajectory(run.path, frames=slice(k, k + 1))
    x, m, t_k = drawn.position[0], drawn.mass, drawn.time[0]
    centre = density_centre(x, m)
    p = np.stack([x[:, 0] - centre[0], x[:, 1] - centre[1]], axis=1)
    half = extent if extent else max(float(np.quantile(np.abs(p).max(axis=1), 0.99)), 1e-12)
    edges = np.linspace(-half, half, bins + 1)
    cell = edges[1] - edges[0]
    if smooth > 0 and len(m) <= ADAPTIVE_MAX_BODIES:
        h = adaptive_density(p, m, 0.5 * (edges[:-1] + edges[1:]), NEIGHBOURS, smooth * cell)
        what = f"adaptive Gaussian kernels ({NEIGHBOURS}th neighbour, at least {smooth:g} bins)"
    else:
        h, _, _ = np.histogram2d(p[:, 0], p[:, 1], bins=[edges, edges], weights=m)
        h = gaussian_smooth(h, smooth) / cell ** 2
        what = f"Gaussian smoothing {smooth:g} bins" if smooth > 0 else "unsmoothed histogram"
    fig, ax = plt.subplots(figsize=(6.4, 5.4), constrained_layout=True)
    positive = h[h > 0]
    # Three decades below the peak: what lies further down is the kernels' tails.
    norm = colors.LogNorm(vmin=max(positive.min(), positive.max() * 1e-3), vmax=positive.max()) \
        if positive.size else None
    im = ax.imshow(np.where(h > 0, h, np.nan).T, origin="lower", extent=[-half, half, -half, half],
                   norm=norm, cmap="magma", interpolation="bilinear")
    ax.set_facecolor("black")
    fig.colorbar(im, ax=ax, shrink=0.92, extend="min",
                 label=run.label("projected surface density", "density"))
    ax.set_xlabel(run.label("x - x_c", "length"))
    ax.set_ylabel(run.label("y - y_c", "length"))
    ax.set_aspect("equal")
    ax.set_title(f"nbody {run.stem}: {len(m)} bodies at t = {t_k:.4g} (frame {k})\n"
                 f"{bins} x {bins} cells, {what};\ncentred on the densest region (shrinking spheres)", fontsize=9)
    path = f"{folder}/{run.stem}_density.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def paths_resolved(run):
    """Whether the frames trace the bodies' paths: a body moves across a
    fifth of the system's extent. Frames one orbit apart (two_body.toml)
    find every body where it was, and draw no path."""
    pos = reader.trajectory(run.path).position[:, :, :2]
    size = float(np.ptp(pos[0], axis=0).max())
    travel = float(np.ptp(pos, axis=0).max())
    return size > 0 and travel > 0.2 * size


def orbits_plot(run, folder):
    every = reader.trajectory(run.path)
    pos, times = every.position, every.time
    fig, ax = plt.subplots(figsize=(6.0, 5.6), constrained_layout=True)
    for i in range(pos.shape[1]):
        (line,) = ax.plot(pos[:, i, 0], pos[:, i, 1], lw=0.8, marker="." if len(times) < 50 else None,
                          ms=3, label=f"body {i}")
        ax.plot(pos[-1, i, 0], pos[-1, i, 1], "o", color=line.get_color(), ms=5)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel(run.label("x", "length"))
    ax.set_ylabel(run.label("y", "length"))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_title(f"nbody {run.stem}: paths through {len(times)} frames, t = {times[0]:.4g} to "
                 f"{times[-1]:.4g} (dot: the last)\n{run.units['system']}", fontsize=9)
    path = f"{folder}/{run.stem}_orbits.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_file(path, args):
    f, model = pc.open_output(path, ("nbody", "md"), "particle outputs (nbody, md)")
    f.close()
    run = Run(path, model)
    folder = pc.out_dir(args, path)
    written = []
    md = run.config.get("md", {})
    if model == "md" and md.get("thermostat", "none") != "none":
        written.append(temperature_plot(run, folder, float(md.get("temperature", float("nan")))))
    else:
        written.append(energy_plot(run, folder))
    if run.traj.mass is not None:
        frames, bodies = run.traj.available, len(run.traj.id)
        if bodies > ORBIT_MAX_BODIES:
            written.append(density_plot(run, folder, args.frame, args.bins, args.smooth, args.extent))
        elif frames >= MIN_ORBIT_FRAMES and paths_resolved(run):
            written.append(orbits_plot(run, folder))
        else:
            print(f"{path}: no paths figure: {frames} frame(s) do not trace the orbits "
                  "(a lower nbody.output_every stores more)", file=sys.stderr)
    for p in written:
        print(p)


def main():
    ap = pc.parser(__doc__, "H5MD output of a particle model (nbody, md)")
    ap.add_argument("--frame", default="last", help="nbody density: the frame drawn, a number or last (default)")
    ap.add_argument("--bins", type=int, default=128, help="nbody density: cells per axis (default 128)")
    ap.add_argument("--smooth", type=float, default=1.5,
                    help="nbody density: smallest smoothing width in cells (default 1.5; 0 = a plain histogram)")
    ap.add_argument("--extent", type=float, default=0.0,
                    help="nbody density: half width L of the window, in length units (default: 99%% of the bodies)")
    args = ap.parse_args()
    if args.bins < 2:
        raise PlotError(f"--bins {args.bins}: at least 2")
    if args.smooth < 0 or args.extent < 0:
        raise PlotError("--smooth and --extent must not be negative")
    for path in args.inputs:
        plot_file(path, args)


if __name__ == "__main__":
    pc.run(main)
