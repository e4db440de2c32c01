#!/usr/bin/env python3
"""Converts a LAMMPS text dump into the H5MD file strata's `md` model starts
from (`initial = "file"`).

    scripts/convert/lammps_to_h5md.py DUMP OUT.h5 [--frame N]

DUMP is a `dump custom` / `write_dump custom` text file with an
`ITEM: ATOMS ...` header naming the columns, in any order: `id`, positions
as `x y z` (wrapped), `xu yu zu` (unwrapped) or `xs ys zs` (scaled by the
box), velocities `vx vy vz`. An orthogonal box (`ITEM: BOX BOUNDS` with
three `lo hi` lines) is required. The frame written is the first (or
--frame N, counting from 0) of the dump.

The output holds one frame, in the layout strata's reader takes
(engine/particles/h5md_input.hpp):

    /h5md                              version [1, 1], creator, author
    /particles/all/box                 dimension 3, boundary periodic x 3
    /particles/all/box/edges/value     [1, 3] xhi - xlo, ...; step and time
                                       hard links to position's (H5MD 1.1)
    /particles/all/id                  [N]   int64, ascending
    /particles/all/position/value      [1, N, 3] float64, minus (xlo, ylo, zlo)
    /particles/all/position/{step,time}
    /particles/all/velocity/value      [1, N, 3]

Strings are fixed-length, as H5MD 1.1 has them. No `unit` attributes: the
dump does not say which LAMMPS `units` style wrote it.

Atoms are sorted by id; positions are shifted so the box starts at 0 (strata's
boxes do), not wrapped (strata wraps them).
"""

import argparse
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError as err:
    sys.exit(f"lammps_to_h5md.py needs h5py and numpy (Debian: python3-h5py python3-numpy), which {sys.executable} "
             f"lacks ({err}): run it with one that has them: "
             f"{os.environ.get('STRATA_PYTHON') or 'the Python STRATA_PYTHON names (scripts/lib.sh)'} {sys.argv[0]}")


class DumpError(Exception):
    pass


def read_frame(path, wanted):
    """The `wanted`-th frame of a LAMMPS text dump: (step, lo, hi, columns dict)."""
    with open(path, encoding="utf-8") as f:
        lines = iter(enumerate(f, start=1))
        frame = -1
        step, n, lo, hi = None, None, None, None
        for number, line in lines:
            item = line.strip()
            if not item.startswith("ITEM:"):
                raise DumpError(f"{path}:{number}: expected an ITEM: line, got {item[:60]!r}")
            if item.startswith("ITEM: TIMESTEP"):
                frame += 1
                step = int(next(lines)[1].split()[0])
            elif item.startswith("ITEM: NUMBER OF ATOMS"):
                n = int(next(lines)[1])
            elif item.startswith("ITEM: BOX BOUNDS"):
                if "xy" in item.split():
                    raise DumpError(f"{path}:{number}: a triclinic box; strata's md box is orthogonal")
                bounds = [next(lines)[1].split() for _ in range(3)]
                lo = np.array([float(b[0]) for b in bounds])
                hi = np.array([float(b[1]) for b in bounds])
            elif item.startswith("ITEM: ATOMS"):
                names = item.split()[2:]
                if n is None or lo is None:
                    raise DumpError(f"{path}:{number}: ITEM: ATOMS before NUMBER OF ATOMS or BOX BOUNDS")
                rows = [next(lines)[1].split() for _ in range(n)]
                if frame == wanted:
                    table = np.array(rows, dtype=np.float64).reshape(n, len(names))
                    return step, lo, hi, {name: table[:, k] for k, name in enumerate(names)}
            else:
                raise DumpError(f"{path}:{number}: unknown item {item!r}")
    raise DumpError(f"{path}: has {frame + 1} frame(s), frame {wanted} asked for")


def positions(columns, lo, hi, path):
    for names, scaled in ((("x", "y", "z"), False), (("xu", "yu", "zu"), False), (("xs", "ys", "zs"), True)):
        if all(name in columns for name in names):
            p = np.stack([columns[name] for name in names], axis=1)
            return p * (hi - lo) if scaled else p - lo
    raise DumpError(f"{path}: the ATOMS columns name no positions (x y z, xu yu zu or xs ys zs)")


def convert(dump, out, wanted=0):
    step, lo, hi, columns = read_frame(dump, wanted)
    for name in ("id", "vx", "vy", "vz"):
        if name not in columns:
            raise DumpError(f"{dump}: the ATOMS columns have no {name!r} (found: {' '.join(columns)})")
    ids = columns["id"].astype(np.int64)
    order = np.argsort(ids, kind="stable")
    if np.any(np.diff(ids[order]) == 0):
        raise DumpError(f"{dump}: duplicate atom ids")
    pos = positions(columns, lo, hi, dump)[order]
    vel = np.stack([columns["vx"], columns["vy"], columns["vz"]], axis=1)[order]
    tmp = out + ".tmp"
    with h5py.File(tmp, "w") as f:
        h5md = f.create_group("h5md")
        h5md.attrs["version"] = np.array([1, 1], dtype=np.int64)
        # numpy bytes: h5py writes them as fixed-length strings.
        h5md.create_group("creator").attrs["name"] = np.bytes_("scripts/convert/lammps_to_h5md.py")
        author = os.environ.get("USER", "unknown")
        h5md.create_group("author").attrs["name"] = np.bytes_(author.encode("utf-8"))
        box = f.create_group("particles/all/box")
        box.attrs["dimension"] = 3
        box.attrs["boundary"] = np.array([b"periodic"] * 3)
        f.create_dataset("particles/all/id", data=ids[order])
        for name, values in (("position", pos), ("velocity", vel)):
            g = f.create_group(f"particles/all/{name}")
            g.create_dataset("value", data=values[np.newaxis, :, :])
            g.create_dataset("step", data=np.array([step], dtype=np.int64))
            g.create_dataset("time", data=np.array([0.0]))
        edges = box.create_group("edges")
        edges["step"] = f["particles/all/position/step"]
        edges["time"] = f["particles/all/position/time"]
        edges.create_dataset("value", data=(hi - lo)[np.newaxis, :])
    os.replace(tmp, out)
    return len(ids)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump", help="LAMMPS text dump (dump custom / write_dump custom)")
    ap.add_argument("out", help="H5MD file to write")
    ap.add_argument("--frame", type=int, default=0, help="frame of the dump to convert (from 0)")
    args = ap.parse_args()
    try:
        n = convert(args.dump, args.out, args.frame)
    except (DumpError, OSError, ValueError, StopIteration) as err:
        sys.exit(f"lammps_to_h5md.py: {err}")
    print(f"{args.out}: {n} atoms")


if __name__ == "__main__":
    main()
