#!/usr/bin/python3
"""PNGs of a particle model's H5MD output (nbody, md).

    scripts/plot/particles.py OUT.h5 [--out DIR] [--frame N|last] [--bins B] [--extent L]

Always writes DIR/<stem>_energy.png: the relative change of
/observables/total_energy, (E(t) - E(0)) / |E(0)|, against time (with
kinetic and potential energy in a second panel), for any particle output.
When the file has masses (/particles/all/mass: nbody) it also writes
DIR/<stem>_density.png: the surface density of frame N (default: the last)
projected on the x-y plane, a mass-weighted 2-D histogram of B x B bins
(default 200) over [-L, L]^2 (default: the half width holding 99% of the
bodies), log colour scale. Needs python3-h5py, python3-numpy and
python3-matplotlib.
"""

import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display on cluster nodes
import matplotlib.colors as colors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

try:
    import h5py  # noqa: E402
except ImportError as err:  # pragma: no cover - environment problem
    sys.exit(f"particles.py needs h5py (Debian: python3-h5py, run with /usr/bin/python3): {err}")


def series(f, name):
    g = f["observables"][name]
    return g["time"][()], g["value"][()]


def energy_plot(f, path, title):
    if "observables/total_energy" not in f:
        sys.exit(f"particles.py: {title}: no /observables/total_energy")
    t, e = series(f, "total_energy")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    scale = abs(e[0]) if e[0] != 0 else 1.0
    top.plot(t, (e - e[0]) / scale, lw=1)
    top.set_ylabel("(E - E0) / |E0|")
    top.set_title(f"{title}: energy drift (max {np.abs(e - e[0]).max() / scale:.2e})")
    top.grid(alpha=0.3)
    for name, label in (("kinetic_energy", "kinetic"), ("potential_energy", "potential"), ("total_energy", "total")):
        if f"observables/{name}" in f:
            tt, v = series(f, name)
            bottom.plot(tt, v, lw=1, label=label)
    bottom.set_xlabel("time")
    bottom.set_ylabel("energy")
    bottom.legend()
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def density_plot(f, path, title, frame, bins, extent):
    pos = f["particles/all/position/value"]
    times = f["particles/all/position/time"][()]
    k = len(times) - 1 if frame == "last" else int(frame)
    if not 0 <= k < len(times):
        sys.exit(f"particles.py: {title}: frame {frame} not in 0..{len(times) - 1}")
    x = pos[k]
    m = f["particles/all/mass"][()]
    centre = np.average(x, axis=0, weights=m)
    r = np.hypot(x[:, 0] - centre[0], x[:, 1] - centre[1])
    half = extent if extent else max(float(np.quantile(r, 0.99)), 1e-12)
    edges = np.linspace(-half, half, bins + 1)
    h, _, _ = np.histogram2d(x[:, 0] - centre[0], x[:, 1] - centre[1], bins=[edges, edges], weights=m)
    h /= (edges[1] - edges[0]) ** 2
    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    positive = h[h > 0]
    norm = colors.LogNorm(vmin=positive.min(), vmax=positive.max()) if positive.size else None
    im = ax.imshow(np.where(h > 0, h, np.nan).T, origin="lower", extent=[-half, half, -half, half],
                   norm=norm, cmap="magma", interpolation="nearest")
    fig.colorbar(im, ax=ax, label="surface density (mass / area)")
    ax.set_xlabel("x - x_cm")
    ax.set_ylabel("y - y_cm")
    ax.set_title(f"{title}: projected density, t = {times[k]:.4g} (frame {k})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("h5")
    ap.add_argument("--out", default=".")
    ap.add_argument("--frame", default="last")
    ap.add_argument("--bins", type=int, default=200)
    ap.add_argument("--extent", type=float, default=0.0)
    args = ap.parse_args()
    stem = os.path.splitext(os.path.basename(args.h5))[0]
    os.makedirs(args.out, exist_ok=True)
    written = []
    with h5py.File(args.h5, "r") as f:
        path = os.path.join(args.out, f"{stem}_energy.png")
        energy_plot(f, path, stem)
        written.append(path)
        if "particles/all/mass" in f and "particles/all/position/value" in f:
            path = os.path.join(args.out, f"{stem}_density.png")
            density_plot(f, path, stem, args.frame, args.bins, args.extent)
            written.append(path)
    for p in written:
        print(p)


if __name__ == "__main__":
    main()
