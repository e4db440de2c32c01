#!/usr/bin/env python3
"""Every Python block of docs/output.md runs as it is written.

The outputs the blocks name are made first, each by the example input
that writes it (shrunk with --set), in a folder that stands for the
directory a user runs strata in: out/quickstart.h5, out/diffusion_gaussian.h5,
out/md_lj_liquid.h5, out/run.h5 (a run of the default output name) and
summary.h5 (a collected sweep). Then each block runs verbatim, in a child
Python in that folder, with warnings shown:

- blocks that import only what Debian packages (h5py, xarray, pandas,
  numpy) and `strata` (the repository's python/ on PYTHONPATH) run with
  this Python;
- the MDAnalysis block runs with the venv that tests/cli/test_mdanalysis.py
  keeps beside the binary (made here when missing and PyPI answers;
  skipped with a message otherwise);
- pyh5md's block is the one the page says is checked by hand.

A block that names an output file this test does not make fails: a
renamed example output or a changed recipe shows up here.
"""

import os
import re
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import test_mdanalysis as mdanalysis  # noqa: E402

DOC = os.path.join(sc.SOURCE_DIR, "docs", "output.md")

RUNS = {
    "out/quickstart": ("quickstart.toml", ["pricing.paths=4096"]),
    "out/diffusion_gaussian": ("diffusion/gaussian.toml", ["diffusion.nx=6", "diffusion.ny=5", "diffusion.nz=4",
                                                           "diffusion.sim_time=0.05",
                                                           "diffusion.output_interval=0.025"]),
    "out/run": ("diffusion/gaussian.toml", ["diffusion.nx=6", "diffusion.ny=5", "diffusion.nz=4",
                                            "diffusion.sim_time=0.05"]),
    # thermo rows at the frames' cadence: the MDAnalysis recipe needs them.
    "out/md_lj_liquid": ("md/lj_liquid.toml", ["md.cells=[2, 2, 2]", "md.steps=20", "md.thermo_every=10",
                                               "md.output_every=10"]),
}
# The sweep example with few paths: summary.h5 holds the columns the
# page's block selects.
with open(os.path.join(sc.SOURCE_DIR, "inputs", "sweeps", "pricing_vol_strike.toml"), encoding="utf-8") as f:
    SWEEP = re.sub(r"(?m)^paths = .*$", "paths = 1024", f.read())
    for old, new in (("count = 9", "count = 2"), ("[0.1, 0.2, 0.3, 0.4]", "[0.1, 0.2]"),
                     ('output_dir = "out/sweep-vol-strike"', 'output_dir = "sweep"')):
        assert old in SWEEP, f"the sweep example changed: no {old!r}"
        SWEEP = SWEEP.replace(old, new)
BY_HAND = ("pyh5md",)


def python_blocks(text):
    """(line number, code) of every ```python block."""
    blocks = []
    for m in re.finditer(r"(?ms)^```python\n(.*?)^```$", text):
        blocks.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    return blocks


class DocsSnippets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sc.check_binary()
        cls.tmp = sc.make_tmpdir("docs_snippets")
        os.makedirs(os.path.join(cls.tmp, "out"))
        sc.make_outputs(cls.tmp, RUNS, SWEEP)
        os.replace(os.path.join(cls.tmp, "sweep", "summary.h5"), os.path.join(cls.tmp, "summary.h5"))
        with open(DOC, encoding="utf-8") as f:
            cls.blocks = python_blocks(f.read())

    @classmethod
    def tearDownClass(cls):
        sc.remove_tmpdir(cls.tmp)

    def run_block(self, python, line, code):
        env = sc.child_env({"PYTHONPATH": os.path.join(sc.SOURCE_DIR, "python"), "MPLBACKEND": "Agg"})
        res = subprocess.run([python, "-W", "default", "-c", code], cwd=self.tmp, env=env, capture_output=True,
                             text=True, timeout=sc.TIMEOUT_S)
        self.assertEqual(res.returncode, 0, f"docs/output.md line {line} failed:\n{code}\n{res.stdout}{res.stderr}")
        return res

    def test_every_block_names_an_output_made_here(self):
        self.assertGreaterEqual(len(self.blocks), 7)
        for line, code in self.blocks:
            for name in re.findall(r'"([\w./-]+\.h5)"', code):
                self.assertTrue(os.path.exists(os.path.join(self.tmp, name)), f"line {line}: {name}")

    def test_every_block_runs(self):
        ran = []
        for line, code in self.blocks:
            with self.subTest(line=line):
                if any(f"import {m}" in code or f", {m}" in code for m in BY_HAND):
                    continue
                if "MDAnalysis" in code:
                    if not mdanalysis.venv_ready():
                        if not mdanalysis.pypi_reachable():
                            print(f"line {line}: MDAnalysis block skipped: no venv and no PyPI", file=sys.stderr)
                            continue
                        mdanalysis.make_venv()
                    res = self.run_block(mdanalysis.VENV_PYTHON, line, code)
                    # One line a frame: the recipe saw the 3 frames.
                    self.assertEqual(len(res.stdout.splitlines()), 3, res.stdout)
                else:
                    self.run_block(sys.executable, line, code)
                ran.append(line)
        print(f"ran the blocks at lines {ran}", file=sys.stderr)
        self.assertTrue(any("xr.open_dataset" in code for line, code in self.blocks if line in ran))
        self.assertTrue(any("import strata" in code for line, code in self.blocks if line in ran))


if __name__ == "__main__":
    unittest.main(verbosity=2)
