#!/usr/bin/env python3
"""md and nbody outputs to the letter of H5MD 1.1
(https://www.nongnu.org/h5md/h5md.html and its units module):

1. Every `unit` attribute follows H5MD's unit grammar (unit factors
   separated by one space; a factor is a number, first and at most once,
   or a unit symbol with an optional signed non-zero integer power; each
   symbol at most once) and is a fixed-length ASCII string. Checked on the
   outputs of every example input of inputs/md and inputs/nbody, shrunk to
   a few atoms or bodies and steps. strata's systems are reduced ("lj",
   "nbody" in /h5md/modules/units), whose units the grammar has no symbols
   for, so their elements carry none: a `unit` in such a file fails too.
2. H5MD's strings (creator name and version, author name, box boundary,
   the units module's system) are fixed-length.
3. The box is a time-dependent element, edges/{step, time, value}: step
   and time hard links to position's, one row per frame, each the box; a
   restart truncates the rows with the frames (restarted from step 2 of 4
   with md.steps = 3: 4 frames, 4 rows), and gives the fixed box of an
   output written before (a dataset edges [3]) a row per frame.
Sizes: 256 atoms (fcc 4^3, 2 steps), 16 bodies (2 steps).
"""

import glob
import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402
from test_md import md_input  # noqa: E402

# H5MD units module, "Unit string": "60 s", "10+3 m", "nm+3", "um+2 s-1".
POWER = r"(?:[+-][1-9][0-9]*)"
NUMBER = rf"(?:[0-9]+(?:\.[0-9]+)?{POWER}?)"
SYMBOL = rf"(?:[A-Za-z]+{POWER}?)"
UNIT = re.compile(rf"(?:{NUMBER}|{SYMBOL})(?: {SYMBOL})*")

SHRINK = {"md": ["md.cells=[4, 4, 4]", "md.steps=2", "md.thermo_every=1", "md.output_every=1"],
          "nbody": ["nbody.n=16", "nbody.steps=2", "nbody.diag_every=1", "nbody.output_every=1"]}


def unit_problem(text):
    """Why `text` breaks H5MD's unit grammar, or None."""
    if not UNIT.fullmatch(text):
        return "not unit factors separated by one space"
    symbols = [re.sub(POWER + "$", "", f) for f in text.split(" ") if not f[0].isdigit()]
    if len(set(symbols)) != len(symbols):
        return "a unit symbol twice"
    return None


def string_kind(attribute_id):
    """(fixed length?, ASCII?) of an HDF5 string attribute's type."""
    t = attribute_id.get_type()
    return not t.is_variable_str(), t.get_cset() == h5py.h5t.CSET_ASCII


class GrammarSelfCheck(unittest.TestCase):

    def test_the_grammar_takes_the_specs_examples_and_refuses_the_old_units(self):
        for good in ("nm+3", "um+2 s-1", "60 s", "10+3 m", "kJ mol-1", "1"):
            self.assertIsNone(unit_problem(good), good)
        for bad in ("sigma/tau", "epsilon/sigma^3", "m sigma/tau", "epsilon/k_B", "m  s", "s m s-1", "s 60",
                    "m+0", ""):
            self.assertIsNotNone(unit_problem(bad), bad)


class H5mdLetter(sc.StrataTestCase):

    def check_units(self, f, name):
        units = []

        def visit(path, obj):
            for key in obj.attrs:
                if key == "unit":
                    units.append((path, obj.attrs.get_id("unit")))
        f.visititems(visit)
        for path, attribute_id in units:
            text = sc.as_str(f[path].attrs["unit"])
            self.assertIsNone(unit_problem(text), f"{name}: {path} unit {text!r}: {unit_problem(text)}")
            self.assertEqual(string_kind(attribute_id), (True, True), f"{name}: {path} unit is not fixed ASCII")
        system = sc.as_str(f["h5md/modules/units"].attrs["system"])
        if system in ("lj", "nbody"):
            self.assertEqual([p for p, _ in units], [], f"{name}: reduced units ({system}) carry no H5MD unit")

    def check_strings(self, f, name):
        for obj, key in (("h5md/creator", "name"), ("h5md/creator", "version"), ("h5md/author", "name"),
                         ("particles/all/box", "boundary"), ("h5md/modules/units", "system")):
            fixed, _ = string_kind(f[obj].attrs.get_id(key))
            self.assertTrue(fixed, f"{name}: {obj} attribute {key} is not a fixed-length string")

    def check_box(self, f, name):
        box = f["particles/all/box"]
        position = f["particles/all/position"]
        edges = box["edges"]
        self.assertIsInstance(edges, h5py.Group, f"{name}: box/edges is not a time-dependent element")
        for part in ("step", "time"):
            self.assertEqual(edges[part].id, position[part].id, f"{name}: box/edges/{part} is not position's")
        value = edges["value"][()]
        frames = position["value"].shape[0]
        self.assertEqual(value.shape, (frames, 3), name)
        self.assertTrue(np.all(value == value[0]) and np.all(value[0] > 0), f"{name}: {value}")

    def test_every_example_output(self):
        inputs = sorted(glob.glob(os.path.join(sc.SOURCE_DIR, "inputs", "md", "*.toml"))
                        + glob.glob(os.path.join(sc.SOURCE_DIR, "inputs", "nbody", "*.toml")))
        self.assertGreaterEqual(len(inputs), 2)
        start = None
        # from_file.toml starts from another example's output: run it last.
        for path in sorted(inputs, key=lambda p: "initial = \"file\"" in open(p, encoding="utf-8").read()):
            model = os.path.basename(os.path.dirname(path))
            name = f"{model}/{os.path.basename(path)}"
            out = name.replace("/", "_").replace(".toml", ".h5")
            sets = list(SHRINK[model])
            if "initial = \"file\"" in open(path, encoding="utf-8").read():
                self.assertIsNotNone(start, "an md example that starts from scratch runs first")
                sets = [s for s in sets if not s.startswith("md.cells")] + [f"md.initial_file={self.path(start)}"]
            args = [path, "-o", out]
            for s in sets:
                args += ["--set", s]
            with self.subTest(name):
                self.run_ok(*args)
                if model == "md" and start is None:
                    start = out
                with h5py.File(self.path(out), "r") as f:
                    self.check_units(f, name)
                    self.check_strings(f, name)
                    self.check_box(f, name)

    def restart_from_step_2(self, before_restart=None, steps=4):
        """md, 4 steps, a frame and a checkpoint each; restarted from step
        2 with md.steps = `steps`, after before_restart(h5py file)."""
        checkpoints = "[checkpoint]\nevery_steps = 1\nevery_seconds = 0\nkeep = 10\n"
        self.write("md.toml", md_input(cells=4, steps=4, thermo_every=1, output_every=1, extra=checkpoints))
        self.run_ok("md.toml", "-o", "md.h5")
        if before_restart is not None:
            with h5py.File(self.path("md.h5"), "a") as f:
                before_restart(f)
        res = self.strata("run", "md.toml", "-o", "md.h5", "--restart", os.path.join("md.chk", sc.checkpoint_name(2)),
                          "--set", f"md.steps={steps}")
        self.assertExit(res, 0)
        return self.open("md.h5")

    def test_a_restart_truncates_the_box_with_the_frames(self):
        f = self.restart_from_step_2(steps=3)
        self.assertEqual(list(f["particles/all/position/step"][()]), [0, 1, 2, 3])
        self.check_box(f, "restarted md")

    def test_a_restart_gives_an_older_outputs_fixed_box_its_rows(self):
        def fixed_box(f):
            box = f["particles/all/box/edges/value"][0]
            del f["particles/all/box/edges"]
            f["particles/all/box/edges"] = box
        f = self.restart_from_step_2(before_restart=fixed_box)
        self.assertEqual(list(f["particles/all/position/step"][()]), [0, 1, 2, 3, 4])
        self.check_box(f, "restarted md with a fixed box")


if __name__ == "__main__":
    sc.main()
