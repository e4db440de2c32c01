#!/usr/bin/env python3
"""The plot scripts (scripts/plot/*.py) as a family, on a small output of
every model family and of the cases each script draws differently:

- run from a working directory that is neither the repository nor the
  data's folder, every script writes its PNGs beside its input by default
  (never into the current directory) and into -o DIR when given;
- `--help` works and documents -o DIR;
- a file of another model, a file that is not HDF5 and a missing file end
  with a one-line error naming the file (exit 2, no Python traceback);
- the figure each case asks for exists: line profiles for a run one cell
  wide (the dam break), temperature against the bath for a thermostatted md
  run, paths for a few-body nbody run, a density map for many bodies.

The outputs are tiny (a few cells, bodies or paths), so the whole file takes
well under a minute on 2 cores; the figures' looks are checked by eye, not
here.
"""

import os
import shutil
import unittest

import strata_cli as sc

PLOT_DIR = os.path.join(sc.SOURCE_DIR, "scripts", "plot")
SCRIPTS = ("fields", "particles", "pricing", "sweep")
INPUTS = os.path.join(sc.SOURCE_DIR, "inputs")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# name -> (input, --set overrides): one small output per family and case.
RUNS = {
    "pricing": ("quickstart.toml", ["pricing.paths=4096", 'pricing.greeks=["delta", "vega"]']),
    "book": ("pricing/book.toml", ["pricing.paths=1024"]),
    "plummer": ("nbody/plummer.toml", ["nbody.n=96", "nbody.t_end=0.0625", "nbody.output_every=4"]),
    "kepler": ("nbody/two_body.toml", ["nbody.steps=400", "nbody.output_every=20", "nbody.diag_every=20"]),
    "liquid": ("md/lj_liquid.toml", ["md.cells=[3, 3, 3]", "md.steps=20", "md.thermo_every=10",
                                     "md.output_every=10"]),
    "langevin": ("md/langevin.toml", ["md.cells=[3, 3, 3]", "md.steps=20", "md.thermo_every=10",
                                      "md.output_every=10"]),
    "vortex": ("shallow_water/vortex.toml", ["shallow_water.nx=16", "shallow_water.ny=16",
                                             "shallow_water.sim_time=172800", "shallow_water.output_interval=86400"]),
    "dam": ("shallow_water/dam_break.toml", ["shallow_water.nx=64", "shallow_water.sim_time=10",
                                             "shallow_water.output_interval=5"]),
    "bubble": ("euler2d/thermal.toml", ["euler2d.nx=20", "euler2d.nz=10", "euler2d.sim_time=100"]),
    "heat": ("diffusion/gaussian.toml", ["diffusion.nx=8", "diffusion.ny=8", "diffusion.nz=8",
                                         "diffusion.sim_time=0.05", "diffusion.output_interval=0.025"]),
}

SWEEP = """\
[run]
model = "pricing"
seed = 42

[pricing]
paths = 1024

[[pricing.asset]]
name = "A"
spot = 100.0
vol = 0.2

[[pricing.instrument]]
name = "call"
option = "call"
strike = 100.0
maturity = 1.0
assets = ["A"]

[sweep]
mode = "grid"
"pricing.asset.0.vol" = [0.1, 0.2]
"pricing.instrument.0.strike" = [90.0, 110.0]
output_dir = "sweep"
"""


class PlotScripts(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        sc.check_binary()
        cls.tmp = sc.make_tmpdir("plots")
        cls.data = os.path.join(cls.tmp, "data")
        os.makedirs(cls.data)
        sc.make_outputs(cls.data, RUNS, SWEEP)

    @classmethod
    def tearDownClass(cls):
        sc.remove_tmpdir(cls.tmp)

    def setUp(self):
        # A fresh working directory per test that holds none of the data.
        self.cwd = os.path.join(self.tmp, self.id().rsplit(".", 1)[-1])
        os.makedirs(self.cwd)

    def plot(self, script, *args):
        """Runs scripts/plot/SCRIPT.py ARGS from self.cwd."""
        return sc.run_command([sc.PYTHON, os.path.join(PLOT_DIR, script + ".py"), *args], self.cwd,
                              env={"STRATA_PLOT_DEBUG": None})

    def copy(self, name, folder):
        """The output NAME.h5 copied into FOLDER (under the test's tmp):
        a folder of its own, so the PNGs found there are this call's."""
        os.makedirs(folder, exist_ok=True)
        shutil.copy(os.path.join(self.data, name + ".h5"), folder)
        return os.path.join(folder, name + ".h5")

    def assertPngs(self, folder, names, res):
        found = sc.files_under(folder, ".png")
        for name in names:
            self.assertIn(name, found, res.describe())
            with open(os.path.join(folder, name), "rb") as f:
                self.assertEqual(f.read(8), PNG_MAGIC, name)
            self.assertGreater(os.path.getsize(os.path.join(folder, name)), 5000, name)

    def assertNothingHere(self, res):
        self.assertEqual(sc.files_under(self.cwd), [], "the script wrote into its working directory" + res.describe())

    def assertCleanError(self, res, *needles):
        self.assertEqual(res.returncode, 2, res.describe())
        self.assertNotIn("Traceback", res.stderr, res.describe())
        lines = res.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, res.describe())
        self.assertIn("error:", lines[0], res.describe())
        for needle in needles:
            self.assertIn(needle, lines[0], res.describe())

    # --- the default folder and -o DIR, from a foreign working directory ----------------

    def test_fields_beside_the_input_and_in_out_dir(self):
        beside = os.path.join(self.tmp, "fields-beside")
        paths = [self.copy(n, beside) for n in ("vortex", "dam", "bubble", "heat")]
        res = self.plot("fields", *paths, "--frames", "0,-1")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertNothingHere(res)
        self.assertPngs(beside, ["vortex_vorticity_0000.png", "vortex_h_0002.png", "bubble_theta_0002.png",
                                 "bubble_wwnd_0000.png", "heat_u_0000.png"], res)
        # ny = 1: a line per frame and the frames together.
        self.assertPngs(beside, ["dam_h_0000.png", "dam_h_0002.png", "dam_h_profiles.png"], res)
        # ... and no figure of a field that is zero throughout (v of a 1-D run).
        self.assertNotIn("dam_v_0000.png", sc.files_under(beside), res.describe())
        self.assertIn("v is zero in every frame drawn", res.stderr, res.describe())
        res = self.plot("fields", paths[0], "-o", "figs", "--field", "h", "--frames", "-1")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(sc.files_under(os.path.join(self.cwd, "figs")), ["vortex_h_0002.png"], res.describe())

    def test_particles_beside_the_input_and_in_out_dir(self):
        beside = os.path.join(self.tmp, "particles-beside")
        paths = [self.copy(n, beside) for n in ("plummer", "kepler", "liquid", "langevin")]
        res = self.plot("particles", *paths)
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertNothingHere(res)
        self.assertPngs(beside, ["plummer_energy.png", "plummer_density.png", "kepler_energy.png",
                                 "kepler_orbits.png", "liquid_energy.png", "langevin_temperature.png"], res)
        # A thermostatted run has no energy-drift figure: its energy is not conserved.
        self.assertNotIn("langevin_energy.png", sc.files_under(beside))
        res = self.plot("particles", paths[0], "-o", "figs")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(sc.files_under(os.path.join(self.cwd, "figs")),
                         ["plummer_density.png", "plummer_energy.png"], res.describe())

    def test_pricing_beside_the_input_and_in_out_dir(self):
        beside = os.path.join(self.tmp, "pricing-beside")
        path = self.copy("pricing", beside)
        # The reruns find the binary from $STRATA_BIN (ctest sets it).
        res = self.plot("pricing", path, "--instrument", "spx_atm_call", "--levels", "2")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertNothingHere(res)
        self.assertPngs(beside, ["pricing_spx_atm_call_convergence.png"], res)
        # A portfolio file named relative to the input: the reruns find it.
        res = self.plot("pricing", self.copy("book", beside), "--instrument", "atm_call", "--levels", "1")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertPngs(beside, ["book_atm_call_convergence.png"], res)
        res = self.plot("pricing", path, "--greeks", "-o", "figs")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(sc.files_under(os.path.join(self.cwd, "figs")), ["pricing_greeks.png"], res.describe())

    def test_sweep_beside_the_input_and_in_out_dir(self):
        summary = os.path.join(self.data, "sweep", "summary.csv")
        res = self.plot("sweep", summary)
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertNothingHere(res)
        self.assertPngs(os.path.join(self.data, "sweep"), ["summary_pricing.call.price.png"], res)
        # The HDF5 summary reads the same; -o DIR is a folder, as for the others.
        res = self.plot("sweep", summary[:-4] + ".h5", "-o", "figs", "--value", "pricing.call.stderr")
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertEqual(sc.files_under(os.path.join(self.cwd, "figs")), ["summary_pricing.call.stderr.png"],
                         res.describe())

    # --- --help and clear errors ------------------------------------------------------------

    def test_help_documents_the_shared_options(self):
        for script in SCRIPTS:
            res = self.plot(script, "--help")
            self.assertEqual(res.returncode, 0, res.describe())
            text = " ".join(res.stdout.split())   # argparse wraps to the terminal's width
            self.assertIn("-o DIR, --out DIR", text, script)
            self.assertIn("default: each input's own folder", text, script)
            self.assertEqual(res.stderr, "", script)

    def test_a_file_of_another_model_is_a_clear_error(self):
        wrong = {"fields": ("liquid", "scripts/plot/particles.py"),
                 "particles": ("bubble", "scripts/plot/fields.py"),
                 "pricing": ("plummer", "scripts/plot/particles.py"),
                 "sweep": ("pricing", "scripts/plot/pricing.py")}
        for script, (name, right) in wrong.items():
            path = os.path.join(self.data, name + ".h5")
            res = self.plot(script, path)
            self.assertCleanError(res, path, right)
            self.assertNothingHere(res)

    def test_missing_and_non_hdf5_files_are_clear_errors(self):
        toml = os.path.join(self.data, "sweep.toml")
        for script in SCRIPTS:
            self.assertCleanError(self.plot(script, "no-such.h5"), "no-such.h5", "no such file")
            res = self.plot(script, toml)
            self.assertCleanError(res, toml)
        # A bad option value of a valid file: the same one line.
        self.assertCleanError(self.plot("fields", os.path.join(self.data, "vortex.h5"), "--frames", "7"),
                              "--frames 7")


class PlotText(unittest.TestCase):
    """What the figures say, checked on the scripts' own functions: tick
    labels that do not run into each other, legend times rounded, titles
    that do not repeat the model."""

    @classmethod
    def setUpClass(cls):
        import sys
        sys.path.insert(0, PLOT_DIR)
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import plot_common
        import pricing
        cls.plt, cls.pc, cls.pricing = plt, plot_common, pricing

    def test_convergence_ticks_of_the_quickstart_do_not_overlap(self):
        # The quickstart's 2,000,000 paths and its 6 halvings, on the
        # convergence figure's size with a reference legend beside it.
        counts = [2_000_000 >> k for k in range(6, -1, -1)]
        fig, ax = self.plt.subplots(figsize=(7.4, 4.2), constrained_layout=True)
        self.addCleanup(self.plt.close, fig)
        ax.errorbar(counts, [10.0] * len(counts), yerr=[[0.1] * len(counts)] * 2, fmt="o-",
                    label="Monte Carlo, 95% CI")
        ax.axhline(10.0, label="reference 10.4506\n(Black-Scholes formula with a\ncontinuous dividend yield)")
        ax.set_xscale("log", base=2)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        self.pricing.path_ticks(ax, counts)
        fig.canvas.draw()
        shown = [t for t in ax.get_xticklabels() if t.get_text()]
        self.assertGreaterEqual(len(shown), 3)
        self.assertEqual(shown[-1].get_text(), "2M")
        boxes = [t.get_window_extent() for t in shown]
        for a, b in zip(boxes, boxes[1:]):
            self.assertLess(a.x1, b.x0, [t.get_text() for t in shown])

    def test_legend_times_are_rounded(self):
        self.assertEqual(self.pc.legend_times([0.0, 5.02516, 10.0]), ["0", "5.03", "10"])
        # More digits only where needed to tell two times apart.
        self.assertEqual(self.pc.legend_times([1.0, 1.0001]), ["1", "1.0001"])

    def test_titles_do_not_repeat_the_model(self):
        self.assertEqual(self.pc.run_title("md", "md_langevin"), "md_langevin")
        self.assertEqual(self.pc.run_title("md", "liquid"), "md liquid")


if __name__ == "__main__":
    unittest.main(verbosity=2)
