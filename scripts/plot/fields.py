#!/usr/bin/python3
"""PNG frames (and an animated GIF) of one field of a grid model's output.

    scripts/plot/fields.py OUT.h5 --field u [--frames all|N,M,...|N:M]
                           [--slice AXIS=mid|INDEX|COORD] [--out DIR] [--gif] [--fps F]

Works on every grid model (diffusion, shallow_water, euler2d): it reads the
axes and cell-centre coordinates from /grid, the frames from
/fields/<name> and their times from /fields/time. A 3-D field is cut
through one plane: by default the middle cell of the slowest axis (z for
[n_out, nz, ny, nx]); --slice z=12 takes cell 12, --slice y=0.25 the cell
nearest y = 0.25 m. Every frame shares one colour scale (the range over the
frames drawn), so an animation does not flicker. Writes
DIR/<stem>_<field>_<frame>.png and, with --gif, DIR/<stem>_<field>.gif
(matplotlib's PillowWriter; needs python3-pil, which Debian's
python3-matplotlib pulls in). Needs python3-h5py, python3-numpy and
python3-matplotlib.
"""

import argparse
import os
import textwrap
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display on cluster nodes
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

try:
    import h5py  # noqa: E402
except ImportError as err:  # pragma: no cover - environment problem
    sys.exit(f"fields.py needs h5py (Debian: python3-h5py, run with /usr/bin/python3): {err}")


def text_attr(obj, name, default=""):
    value = obj.attrs.get(name, default)
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return str(value)


def str_list(value):
    return [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in np.atleast_1d(value)]


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
        sys.exit(f"--frames {spec}: expected all, N,M,... or N:M")
    out = []
    for f in picked:
        g = f + count if f < 0 else f
        if not 0 <= g < count:
            sys.exit(f"--frames {spec}: frame {f} does not exist (the file has {count}: 0 to {count - 1})")
        out.append(g)
    if not out:
        sys.exit(f"--frames {spec}: selects no frame (the file has {count})")
    return out


def parse_slice(spec, axes, coords):
    """'AXIS=mid|INDEX|COORD' -> (position of AXIS among the frame's
    dimensions, cell index). `axes` are the frame's dimensions, slowest first."""
    if "=" not in spec:
        sys.exit(f"--slice {spec}: expected AXIS=mid, AXIS=INDEX or AXIS=COORDINATE")
    axis, where = (v.strip() for v in spec.split("=", 1))
    if axis not in axes:
        sys.exit(f"--slice {spec}: no axis {axis!r} (the field's axes are {', '.join(axes)})")
    c = coords[axis]
    if where == "mid":
        index = len(c) // 2
    elif where.lstrip("-").isdigit():
        index = int(where)
        if index < 0:
            index += len(c)
        if not 0 <= index < len(c):
            sys.exit(f"--slice {spec}: cell {where} is outside 0..{len(c) - 1}")
    else:
        try:
            value = float(where)
        except ValueError:
            sys.exit(f"--slice {spec}: {where!r} is neither mid, a cell index nor a coordinate")
        index = int(np.argmin(np.abs(c - value)))
    return axes.index(axis), index


def edges(centres):
    """Cell edges from uniform cell centres (what pcolormesh wants)."""
    if len(centres) == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    d = centres[1] - centres[0]
    return np.concatenate([centres - d / 2, [centres[-1] + d / 2]])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("h5", help="output file of a grid model (diffusion, shallow_water, euler2d)")
    ap.add_argument("--field", required=True, help="name of a dataset in /fields (e.g. u, h, theta)")
    ap.add_argument("--frames", default="all", help="all (default), N,M,... or N:M; negative counts from the end")
    ap.add_argument("--slice", help="3-D fields: AXIS=mid|INDEX|COORD (default: middle of the slowest axis)")
    ap.add_argument("--out", default=None, help="output directory (default: DIR_OF_H5/plots)")
    ap.add_argument("--gif", action="store_true", help="also write an animated GIF of the frames")
    ap.add_argument("--fps", type=float, default=4.0, help="GIF frames per second (default 4)")
    args = ap.parse_args()

    with h5py.File(args.h5, "r") as f:
        if "grid" not in f or "fields" not in f:
            sys.exit(f"{args.h5}: no /grid or /fields: not the output of a grid model")
        fields = sorted(k for k in f["fields"] if k != "time")
        if args.field not in fields:
            sys.exit(f"{args.h5}: no field {args.field!r}; it has {', '.join(fields) or 'none'}")
        ds = f["fields/" + args.field]
        times = f["fields/time"][()]
        grid_axes = str_list(f["grid"].attrs["axes"])          # fastest first
        axes = list(reversed(grid_axes))                        # the frame's dimensions, slowest first
        coords = {a: f["grid/" + a][()] for a in axes}
        coord_units = {a: text_attr(f["grid/" + a], "units", "m") for a in axes}
        if ds.ndim != len(axes) + 1:
            sys.exit(f"{args.h5}: /fields/{args.field} has {ds.ndim} dimensions, expected time + {len(axes)}")
        count = min(ds.shape[0], len(times))
        if count == 0:
            sys.exit(f"{args.h5}: /fields/{args.field} holds no frames yet")
        frames = parse_frames(args.frames, count)

        if len(axes) == 3:
            cut_pos, cut_index = parse_slice(args.slice or f"{axes[0]}=mid", axes, coords)
        elif args.slice:
            sys.exit(f"--slice: /fields/{args.field} is 2-D ({', '.join(axes)}); nothing to slice")
        else:
            cut_pos = cut_index = None
        plane_axes = [a for i, a in enumerate(axes) if i != cut_pos]   # [vertical, horizontal]
        cut_text = ""
        if cut_pos is not None:
            a = axes[cut_pos]
            cut_text = f", {a} = {coords[a][cut_index]:.4g} {coord_units[a]} (cell {cut_index})"

        def plane(frame):
            if cut_pos is None:
                return ds[frame]
            sel = [frame, slice(None), slice(None), slice(None)]
            sel[1 + cut_pos] = cut_index
            return ds[tuple(sel)]

        data = [np.asarray(plane(fr), dtype=np.float64) for fr in frames]
        units = text_attr(ds, "units")
        long_name = text_attr(ds, "long_name", args.field)
        model = text_attr(f, "model", "")

    finite = [d[np.isfinite(d)] for d in data]
    finite = [d for d in finite if d.size]
    vmin = min(float(d.min()) for d in finite) if finite else 0.0
    vmax = max(float(d.max()) for d in finite) if finite else 1.0
    if vmax <= vmin:
        vmax = vmin + (abs(vmin) * 1e-6 or 1.0)

    out_dir = args.out or os.path.join(os.path.dirname(os.path.abspath(args.h5)), "plots")
    os.makedirs(out_dir, exist_ok=True)
    stem = f"{os.path.splitext(os.path.basename(args.h5))[0]}_{args.field}"
    v_axis, h_axis = plane_axes
    x_edges, y_edges = edges(coords[h_axis]), edges(coords[v_axis])

    fig, ax = plt.subplots(figsize=(6.4, 5.2), constrained_layout=True)
    mesh = ax.pcolormesh(x_edges, y_edges, data[0], vmin=vmin, vmax=vmax, cmap="viridis", shading="flat")
    ax.set_aspect("equal")
    ax.set_xlabel(f"{h_axis} [{coord_units[h_axis]}]")
    ax.set_ylabel(f"{v_axis} [{coord_units[v_axis]}]")
    bar = fig.colorbar(mesh, ax=ax)
    # Long names run to a sentence: wrap them so the label stays on the figure.
    label = f"{long_name} [{units}]" if units else long_name
    bar.set_label(textwrap.fill(label, 45))
    title = ax.set_title("")

    def draw(k):
        mesh.set_array(data[k].ravel())
        title.set_text(f"{model + ': ' if model else ''}{args.field} at t = {times[frames[k]]:.6g} s{cut_text}")
        return mesh, title

    written = []
    for k, fr in enumerate(frames):
        draw(k)
        path = os.path.join(out_dir, f"{stem}_{fr:04d}.png")
        fig.savefig(path, dpi=100)
        written.append(path)
    print(f"wrote {len(written)} PNG frame(s) of {args.field} to {out_dir}"
          f" (colour range {vmin:.6g} to {vmax:.6g} {units})")

    if args.gif:
        try:
            import PIL  # noqa: F401
            from matplotlib.animation import FuncAnimation, PillowWriter
        except ImportError:
            print("no GIF: python3-pil (Pillow) is not installed; the PNG frames are written",
                  file=sys.stderr)
        else:
            anim = FuncAnimation(fig, draw, frames=len(frames), blit=False)
            gif = os.path.join(out_dir, f"{stem}.gif")
            anim.save(gif, writer=PillowWriter(fps=args.fps), dpi=80)
            print(f"wrote {gif} ({len(frames)} frame(s), {args.fps:g} per second)")
    plt.close(fig)


if __name__ == "__main__":
    main()
