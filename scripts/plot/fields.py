#!/usr/bin/env python3
"""Figures of the fields of a grid model's output (diffusion, shallow_water,
euler2d): one PNG per frame and field, and an animated GIF on request.

    scripts/plot/fields.py OUT.h5 [OUT.h5 ...] [-o DIR] [--field NAME ...]
                           [--frames all|N,M,...|N:M] [--slice AXIS=mid|INDEX|COORD]
                           [--gif] [--fps F]

Reads the axes from /grid, the cell-centre coordinates from /x, /y[, /z],
the frames from the field /<name> and their times from /time, and writes
DIR/<stem>_<field>_<frame>.png (frame numbered as in the file) and, with
--gif, DIR/<stem>_<field>.gif. DIR is -o DIR, by default the folder of
OUT.h5. Without --field every field is drawn except one that is zero in
every frame drawn (v in the 1-D dam break).

2-D planes are colour maps with the colourbar the height of the axes; a
field that takes both signs (vorticity, vertical wind, anomalies) gets a
diverging map centred on zero, others a sequential one. Every frame of a
field shares one colour scale, so an animation does not flicker. A run one
cell wide (ny = 1: the dam break) is drawn as line plots, value against
position, with one more figure DIR/<stem>_<field>_profiles.png holding the
frames together. Axes are in km when the domain spans 5 km or more; frame
times are the stored ones (the first step at or after each output time),
every digit in the titles, in h or days when the run spans two of them.
A 3-D field is cut through one plane: by default the middle cell of the
slowest axis; --slice z=12 takes cell 12, --slice y=0.25 the cell nearest
y = 0.25 m.

Reads the file with the strata reader (python/: xarray and h5netcdf);
needs matplotlib (and python3-pil for --gif).
"""

import os
import sys
import textwrap

import plot_common as pc
from plot_common import PlotError, np

reader = pc.strata  # the strata reader package (python/)

import matplotlib.pyplot as plt  # noqa: E402
from mpl_toolkits.axes_grid1 import make_axes_locatable  # noqa: E402

GRID_MODELS = ("diffusion", "shallow_water", "euler2d")


def parse_frames(spec, count):
    """'all', 'N,M,...' or 'N:M' (Python slice, end exclusive) -> indices;
    negative indices count from the end."""
    if spec == "all":
        return list(range(count))
    try:
        if ":" in spec:
            lo, hi = (int(v) if v else None for v in spec.split(":", 1))
            picked = list(range(count))[slice(lo, hi)]
        else:
            picked = [int(v) for v in spec.split(",") if v.strip()]
    except ValueError:
        raise PlotError(f"--frames {spec}: expected all, N,M,... or N:M") from None
    out = []
    for f in picked:
        g = f + count if f < 0 else f
        if not 0 <= g < count:
            raise PlotError(f"--frames {spec}: frame {f} does not exist (the file has {count}: 0 to {count - 1})")
        out.append(g)
    if not out:
        raise PlotError(f"--frames {spec}: selects no frame (the file has {count})")
    return out


def parse_slice(spec, axes, coords):
    """'AXIS=mid|INDEX|COORD' -> (position of AXIS among the frame's
    dimensions, cell index). `axes` are the frame's dimensions, slowest first."""
    if "=" not in spec:
        raise PlotError(f"--slice {spec}: expected AXIS=mid, AXIS=INDEX or AXIS=COORDINATE")
    axis, where = (v.strip() for v in spec.split("=", 1))
    if axis not in axes:
        raise PlotError(f"--slice {spec}: no axis {axis!r} (the field's axes are {', '.join(axes)})")
    c = coords[axis]
    if where == "mid":
        index = len(c) // 2
    elif where.lstrip("-").isdigit():
        index = int(where)
        if index < 0:
            index += len(c)
        if not 0 <= index < len(c):
            raise PlotError(f"--slice {spec}: cell {where} is outside 0..{len(c) - 1}")
    else:
        try:
            value = float(where)
        except ValueError:
            raise PlotError(f"--slice {spec}: {where!r} is neither mid, a cell index nor a coordinate") from None
        index = int(np.argmin(np.abs(c - value)))
    return axes.index(axis), index


def edges(centres):
    """Cell edges from uniform cell centres (what pcolormesh wants)."""
    if len(centres) == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    d = centres[1] - centres[0]
    return np.concatenate([centres - d / 2, [centres[-1] + d / 2]])


def colour_scale(data):
    """(vmin, vmax, colour map): symmetric about zero and diverging for a
    field that takes both signs, else the data's range and sequential."""
    finite = [d[np.isfinite(d)] for d in data]
    finite = [d for d in finite if d.size]
    vmin = min(float(d.min()) for d in finite) if finite else 0.0
    vmax = max(float(d.max()) for d in finite) if finite else 1.0
    if vmin < 0.0 < vmax:
        bound = max(-vmin, vmax)
        return -bound, bound, "RdBu_r"
    if vmax <= vmin:
        pad = abs(vmin) * 1e-6 or 1.0
        vmin, vmax = vmin - pad, vmax + pad
    return vmin, vmax, "viridis"


class Field:
    """One field of one file: its frames (as float64 planes or lines), axes
    and labels."""

    def __init__(self, data, model, path, name, frames_spec, slice_spec):
        var = data[name]                      # (time, [z,] y, x): xarray names the axes
        times = data["time"].values
        axes = list(var.dims[1:])             # slowest first
        grid_axes = list(reversed(axes))      # fastest first
        coords = {a: data[a].values for a in axes}
        count = var.sizes["time"]
        if count == 0:
            raise PlotError(f"{path}: /{name} holds no frames yet")
        self.frames = parse_frames(frames_spec, count)
        self.times = [float(times[k]) for k in self.frames]
        if len(axes) == 3:
            cut_pos, cut_index = parse_slice(slice_spec or f"{axes[0]}=mid", axes, coords)
        elif slice_spec:
            raise PlotError(f"--slice: /{name} is 2-D ({', '.join(axes)}); nothing to slice")
        else:
            cut_pos = cut_index = None
        self.cut_text = ""
        if cut_pos is not None:
            a = axes[cut_pos]
            self.cut_text = f", {a} = {coords[a][cut_index]:.4g} m (cell {cut_index})"
        self.data = []
        for fr in self.frames:
            sel = {"time": fr}
            if cut_pos is not None:
                sel[axes[cut_pos]] = cut_index
            self.data.append(np.asarray(var.isel(sel).values, dtype=np.float64))
        self.plane_axes = [a for i, a in enumerate(axes) if i != cut_pos]   # [vertical, horizontal]
        # An axis one cell wide carries no information: a run with ny = 1
        # is a 1-D problem and reads best as a line.
        self.line_axes = [a for a in self.plane_axes if len(coords[a]) > 1]
        self.units = str(var.attrs.get("units", ""))
        self.long_name = str(var.attrs.get("long_name", name))
        # C-grid velocities sit on faces, half a cell before the centre
        # (their long_name says which face): draw them where they are.
        coords = dict(coords)
        for face, axis in (("west face", grid_axes[0]), ("south face", grid_axes[1] if len(grid_axes) > 1 else None)):
            if axis and face in self.long_name and len(coords[axis]) > 1:
                coords[axis] = coords[axis] - 0.5 * (coords[axis][1] - coords[axis][0])
        self.coords = coords
        self.name = name
        self.model = model
        span = max(float(np.ptp(edges(coords[a]))) for a in self.plane_axes)
        self.length = pc.length_unit(span)
        self.time_unit = pc.time_unit(float(np.max(times[:count])))

    def title(self, k):
        when = pc.time_text(self.times[k], self.time_unit)
        return f"{self.model}: {self.name} at t = {when}{self.cut_text}"

    def value_label(self, length_in=4.0, fontsize=10):
        """The long name and units, wrapped to fit along `length_in`
        inches of axis (long names run to a sentence)."""
        label = f"{self.long_name} [{self.units}]" if self.units else self.long_name
        # An average character is about 0.55 em wide.
        return textwrap.fill(label, max(18, int(length_in * 72 / (0.55 * fontsize))))


def plot_line(field, folder, prefix):
    """ny = 1: the field against its one long axis, each frame alone and
    all frames together."""
    (axis,) = field.line_axes
    lname, lsize = field.length
    x = field.coords[axis] / lsize
    values = [d.ravel() for d in field.data]
    vmin, vmax, _ = colour_scale(values)
    pad = 0.05 * (vmax - vmin)
    written = []
    fig, ax = plt.subplots(figsize=(7.0, 4.0), constrained_layout=True)
    (line,) = ax.plot(x, values[0], lw=1.5)
    x_edges = edges(field.coords[axis]) / lsize
    ax.set_xlim(x_edges[0], x_edges[-1])
    ax.set_ylim(vmin - pad, vmax + pad)
    ax.set_xlabel(f"{axis} [{lname}]")
    ax.set_ylabel(field.value_label())
    ax.grid(alpha=0.3)
    title = ax.set_title("")
    for k, fr in enumerate(field.frames):
        line.set_ydata(values[k])
        title.set_text(field.title(k))
        path = os.path.join(folder, f"{prefix}_{fr:04d}.png")
        fig.savefig(path, dpi=120)
        written.append(path)
    plt.close(fig)

    if len(field.frames) > 1:
        fig, ax = plt.subplots(figsize=(7.0, 4.0), constrained_layout=True)
        cmap = plt.get_cmap("viridis")
        # Rounded in the legend; the per-frame figures' titles give every digit.
        name, size = field.time_unit
        times = pc.legend_times([field.times[k] / size for k in range(len(field.frames))])
        for k in range(len(field.frames)):
            colour = cmap(k / max(len(field.frames) - 1, 1))
            ax.plot(x, values[k], lw=1.2, color=colour, label=f"t = {times[k]} {name}")
        ax.set_xlim(x_edges[0], x_edges[-1])
        ax.set_xlabel(f"{axis} [{lname}]")
        ax.set_ylabel(field.value_label())
        ax.grid(alpha=0.3)
        ax.set_title(f"{field.model}: {field.name}{field.cut_text}")
        if len(field.frames) <= 12:
            ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        else:
            sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(field.times[0] / field.time_unit[1],
                                                                     field.times[-1] / field.time_unit[1]))
            fig.colorbar(sm, ax=ax, label=f"t [{field.time_unit[0]}]")
        path = os.path.join(folder, f"{prefix}_profiles.png")
        fig.savefig(path, dpi=120)
        written.append(path)
        plt.close(fig)
    return written, None


def plot_plane(field, folder, prefix, gif, fps):
    v_axis, h_axis = field.plane_axes
    lname, lsize = field.length
    x_edges = edges(field.coords[h_axis]) / lsize
    y_edges = edges(field.coords[v_axis]) / lsize
    vmin, vmax, cmap = colour_scale(field.data)

    # The figure takes the domain's aspect ratio, so the axes fill it and
    # the colourbar beside them has their height.
    aspect = (y_edges[-1] - y_edges[0]) / (x_edges[-1] - x_edges[0])
    width = 6.4
    height = min(max(width * 0.78 * aspect + 1.1, 2.6), 9.0)
    fig, ax = plt.subplots(figsize=(width, height))
    mesh = ax.pcolormesh(x_edges, y_edges, field.data[0], vmin=vmin, vmax=vmax, cmap=cmap, shading="flat")
    ax.set_aspect("equal")
    ax.set_xlabel(f"{h_axis} [{lname}]")
    ax.set_ylabel(f"{v_axis} [{lname}]")
    cax = make_axes_locatable(ax).append_axes("right", size="4%", pad=0.12)
    bar = fig.colorbar(mesh, cax=cax)
    # The axes' height once the aspect ratio is applied: the label fits along it.
    axes_height = min(height - 1.1, (width * 0.78) * aspect)
    bar.set_label(field.value_label(0.95 * axes_height, 9), fontsize=9)
    title = ax.set_title("", fontsize=10)
    fig.tight_layout()

    def draw(k):
        mesh.set_array(field.data[k].ravel())
        title.set_text(field.title(k))
        return mesh, title

    written = []
    for k, fr in enumerate(field.frames):
        draw(k)
        path = os.path.join(folder, f"{prefix}_{fr:04d}.png")
        fig.savefig(path, dpi=120, bbox_inches="tight", pad_inches=0.08)
        written.append(path)

    gif_path = None
    if gif:
        try:
            import PIL  # noqa: F401
            from matplotlib.animation import FuncAnimation, PillowWriter
        except ImportError:
            print("no GIF: python3-pil (Pillow) is not installed; the PNG frames are written", file=sys.stderr)
        else:
            anim = FuncAnimation(fig, draw, frames=len(field.frames), blit=False)
            gif_path = os.path.join(folder, f"{prefix}.gif")
            anim.save(gif_path, writer=PillowWriter(fps=fps), dpi=80)
    plt.close(fig)
    return written, gif_path


def plot_file(path, args):
    f, model = pc.open_output(path, GRID_MODELS, "the fields of grid models (diffusion, shallow_water, euler2d)")
    with f:
        if "grid" not in f or "time" not in f:
            raise PlotError(f"{path}: no /grid or /time: the run wrote no frames")
    with reader.fields(path, decode_times=False) as data:
        # The fields: the variables over time and space.
        available = sorted(k for k, v in data.data_vars.items() if v.ndim > 1)
        names = args.field or available
        for name in names:
            if name not in available:
                raise PlotError(f"{path}: no field {name!r}; it has {', '.join(available) or 'none'}")
        fields = [Field(data, model, path, name, args.frames, args.slice) for name in names]
    folder = pc.out_dir(args, path)
    for field in fields:
        if not args.field and all(not d.any() for d in field.data):
            # v and the vorticity of the 1-D dam break: a flat zero is no figure.
            print(f"{path}: {field.name} is zero in every frame drawn; no figure (--field {field.name} "
                  "draws it anyway)", file=sys.stderr)
            continue
        prefix = f"{pc.stem(path)}_{field.name}"
        if len(field.line_axes) == 1:
            if args.gif:
                print(f"{field.name}: a 1-D field; the profiles figure holds the frames, no GIF", file=sys.stderr)
            written, gif_path = plot_line(field, folder, prefix)
        else:
            written, gif_path = plot_plane(field, folder, prefix, args.gif, args.fps)
        print(f"wrote {len(written)} PNG(s) of {field.name} to {folder}")
        if gif_path:
            print(f"wrote {gif_path} ({len(field.frames)} frame(s), {args.fps:g} per second)")


def main():
    ap = pc.parser(__doc__, "output file of a grid model (diffusion, shallow_water, euler2d)")
    ap.add_argument("--field", action="append", metavar="NAME",
                    help="a field (a dataset at the root, e.g. h, vorticity, theta); repeat for several "
                         "(default: every field)")
    ap.add_argument("--frames", default="all",
                    help="frames to draw: all (default), N,M,... or N:M; negative counts from the end")
    ap.add_argument("--slice", metavar="AXIS=WHERE",
                    help="3-D fields: the plane drawn, AXIS=mid|INDEX|COORD in m (default: middle of the slowest axis)")
    ap.add_argument("--gif", action="store_true", help="also write an animated GIF of the frames of each 2-D field")
    ap.add_argument("--fps", type=float, default=4.0, help="GIF frames per second (default 4)")
    args = ap.parse_args()
    if args.fps <= 0:
        raise PlotError(f"--fps {args.fps:g}: must be positive")
    for path in args.inputs:
        plot_file(path, args)


if __name__ == "__main__":
    pc.run(main)
