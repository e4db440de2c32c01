#!/usr/bin/env python3
"""The `md` model end to end: NVE energy drift and momentum, 1 vs N ranks,
checkpoint/restart bitwise, FP32 against FP64, the Langevin thermostat, the
H5MD layout and input errors.

Every figure is computed here from the output file (h5py), and every
tolerance is derived in the test from the scheme or from round-off, never
tuned. Systems are the smallest that test each claim: 500 atoms (5^3 fcc
cells) for everything but the energy drift, whose claim needs more atoms
(see test_nve_energy_drift_and_momentum).
"""

import math
import os
import re
import sys
import unittest
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
OBSERVABLES = ("temperature", "potential_energy", "kinetic_energy", "total_energy", "pressure")


def md_input(cells=5, steps=100, thermo_every=10, output_every=0, extra=""):
    return f"""[run]
model = "md"
output = "out/run.h5"

[md]
cells = [{cells}, {cells}, {cells}]
steps = {steps}
thermo_every = {thermo_every}
output_every = {output_every}
{extra}
"""


def last_frame_as_start(src, dst):
    """The last trajectory frame of an md output as an H5MD start file."""
    with h5py.File(src, "r") as f, h5py.File(dst, "w") as g:
        g["particles/all/box/edges"] = f["particles/all/box/edges/value"][-1]
        g["particles/all/id"] = f["particles/all/id"][()]
        for e in ("position", "velocity"):
            g[f"particles/all/{e}/value"] = f[f"particles/all/{e}/value"][-1:]


class MdTest(sc.StrataTestCase):

    # --- conservation ------------------------------------------------------------

    def test_nve_energy_drift_and_momentum(self):
        # Shifted LJ at rc = 2.5, dt = 0.005, density 0.8442, 1000 steps NVE.
        # The claim is |drift| <= 1e-5 of |E|, drift being the least-squares
        # slope of E(t) times the run's duration. It is measured on a liquid
        # (200 steps from the fcc start first: melting shifts the shadow
        # energy of velocity Verlet by O(dt^2), about 2e-4 of E, which is not
        # drift). The force is discontinuous at rc, so every pair crossing it
        # kicks E a little: a random walk whose relative size falls as
        # 1/sqrt(N). Measured (strata and lmp alike) it is about 1.3e-5 rms at
        # 500 atoms, so 500 atoms cannot test 1e-5; 13^3 fcc cells (8788
        # atoms) bring the expected size to 1.3e-5 sqrt(500/8788) = 3e-6, a
        # third of the bound.
        self.write("eq.toml", md_input(cells=13, steps=200, thermo_every=200))
        self.run_ok("eq.toml", "-o", "eq.h5")
        last_frame_as_start(self.path("eq.h5"), self.path("liquid.h5"))
        self.write("nve.toml", md_input(cells=13, steps=1000, thermo_every=10,
                                        extra='initial = "file"\ninitial_file = "liquid.h5"'))
        self.run_ok("nve.toml", "-o", "nve.h5")
        f = self.open("nve.h5")
        e = f["observables/total_energy/value"][()]
        t = f["observables/total_energy/time"][()]
        self.assertEqual(len(e), 101)
        slope = np.polyfit(t, e, 1)[0]
        drift = abs(slope) * t[-1] / abs(e[0])
        print(f"\n  NVE 8788 atoms, 1000 steps: drift {drift:.2e} of |E| (bound 1e-5), "
              f"rms fluctuation {np.std(e) / abs(e[0]):.2e}", file=sys.stderr)
        self.assertLessEqual(drift, 1e-5)
        # Momentum: the start has zero total momentum to round-off, and each
        # step changes it by dt sum_i F_i, where the full lists give every
        # pair force twice with opposite signs; what remains is the rounding
        # of each atom's force sum (<= m eps sum_j |f_ij| for m ~ 80
        # neighbours, sum_j |f_ij| < 100 in a liquid at this density) and of
        # the velocity updates (eps |v| per atom): per step at most
        # N (dt 80 eps 100 + 2 eps 4).
        n = len(f["particles/all/id"])
        p = f["observables/momentum/value"][()]
        bound = 1000 * n * (0.005 * 80 * EPS64 * 100 + 2 * EPS64 * 4)
        print(f"  |P| max {np.abs(p).max():.2e} (bound {bound:.2e})", file=sys.stderr)
        self.assertLessEqual(float(np.abs(p).max()), bound)

    # --- decomposition ---------------------------------------------------------------

    def test_one_and_several_ranks_agree_to_round_off(self):
        self.write("in.toml", md_input(steps=100, thermo_every=10))
        runs = {}
        for ranks in (1, 2, 4):
            self.run_ok("in.toml", "-o", f"np{ranks}.h5", ranks=ranks)
            runs[ranks] = self.open(f"np{ranks}.h5")
        ref = runs[1]
        box = ref["particles/all/box/edges/value"][-1]
        for ranks in (2, 4):
            f = runs[ranks]
            # The start is the same atoms and velocities (made by index), and
            # the thermo sums are exact, so step 0's temperature is bitwise equal.
            self.assertEqual(f["observables/temperature/value"][0], ref["observables/temperature/value"][0])
            # After that, forces sum the same pairs in another order (ghosts
            # are shifted images), so positions differ by round-off that the
            # dynamics amplifies: over t = 0.5 by at most e^(lambda t) with
            # lambda < 10 / tau for the LJ liquid, 150 times; 1e-15 of round-
            # off per step, 100 steps, times 150: 1.5e-11. Bound 1e-10.
            worst = 0.0
            for name in OBSERVABLES:
                a, b = ref[f"observables/{name}/value"][()], f[f"observables/{name}/value"][()]
                err = np.max(np.abs(a - b) / np.maximum(np.abs(a), 1.0))
                worst = max(worst, float(err))
                self.assertLessEqual(err, 1e-10, f"{name} on {ranks} ranks")
            d = ref["particles/all/position/value"][-1] - f["particles/all/position/value"][-1]
            d -= box * np.round(d / box)
            print(f"\n  {ranks} ranks vs 1 after 100 steps: thermo {worst:.1e} relative, positions "
                  f"{float(np.abs(d).max()):.1e}", file=sys.stderr)
            self.assertLessEqual(float(np.abs(d).max()), 1e-10 * float(box[0]), f"positions on {ranks} ranks")
            self.assertTrue(np.array_equal(ref["particles/all/id"][()], f["particles/all/id"][()]))

    # --- restart -------------------------------------------------------------------

    def test_restart_is_bitwise(self):
        for thermostat in ("none", "langevin"):
            with self.subTest(thermostat=thermostat):
                extra = f'thermostat = "{thermostat}"\ndamp = 0.5\n'
                extra += "\n[checkpoint]\nevery_steps = 30\nevery_seconds = 0\nkeep = 5\n"
                self.write("in.toml", md_input(steps=100, thermo_every=10, output_every=20, extra=extra))
                self.run_ok("in.toml", "--overwrite", ranks=2)
                with h5py.File(self.path("out/run.h5"), "r") as f:
                    ref = {k: f[k][()] for k in self.series_keys(f)}
                chk = sorted(n for n in os.listdir(self.path("out", "run.chk")) if n.endswith(".h5"))
                self.assertEqual(len(chk), 3, chk)   # steps 30, 60, 90
                res = self.run_ok("in.toml", "--restart", os.path.join("out", "run.chk", chk[0]), ranks=2)
                self.assertInOutput("restarted from", res.stdout, res, "stdout")
                with h5py.File(self.path("out/run.h5"), "r") as f:
                    for k, v in ref.items():
                        self.assertTrue(np.array_equal(f[k][()], v), f"{k} after the restart from {chk[0]}")
                # On another rank count the atoms sum their forces in another
                # order: the same run to round-off (bound as in the
                # decomposition test).
                res = self.run_ok("in.toml", "--restart", os.path.join("out", "run.chk", chk[1]), ranks=1)
                with h5py.File(self.path("out/run.h5"), "r") as f:
                    for name in OBSERVABLES:
                        a, b = ref[f"observables/{name}/value"], f[f"observables/{name}/value"][()]
                        self.assertEqual(a.shape, b.shape, name)
                        err = float(np.max(np.abs(a - b) / np.maximum(np.abs(a), 1.0)))
                        self.assertLessEqual(err, 1e-10, f"{name} after restarting on 1 rank from {chk[1]}")

    @staticmethod
    def series_keys(f):
        keys = []
        f.visititems(lambda name, obj: keys.append(name) if isinstance(obj, h5py.Dataset)
                     and (name.startswith("observables/") or name.startswith("particles/all/p")
                          or name.startswith("particles/all/v")) else None)
        return keys

    # --- precision -------------------------------------------------------------------

    def test_fp32_agrees_with_fp64(self):
        self.write("in.toml", md_input(steps=100, thermo_every=10))
        self.run_ok("in.toml", "-o", "f64.h5")
        self.run_ok("in.toml", "-o", "f32.h5", "--precision", "fp32")
        f64, f32 = self.open("f64.h5"), self.open("f32.h5")
        # Step 0: the same lattice and velocities rounded to float. Each
        # atom's energy and virial are sums of ~80 pair terms, each good to a
        # few eps32, summed with at most 80 eps32 of the sum of magnitudes;
        # the magnitudes (repulsive and attractive parts) are at most 10
        # times the net values here: 10 * 100 * eps32 = 1.2e-4 relative.
        tol0 = 10 * 100 * EPS32
        worst = 0.0
        for name in OBSERVABLES:
            a, b = f64[f"observables/{name}/value"][0], f32[f"observables/{name}/value"][0]
            worst = max(worst, abs(a - b) / max(abs(a), 1.0))
            self.assertLessEqual(abs(a - b), tol0 * max(abs(a), 1.0), f"{name} at step 0")
        # Later the trajectories part (chaos), but energy is conserved in both:
        # E32 stays within the fp64 run's fluctuation (2e-4 of E, the O(dt^2)
        # shadow shift of melting) plus fp32 round-off accumulated over 100
        # steps (100 * 100 eps32 of |E|).
        e64, e32 = f64["observables/total_energy/value"][()], f32["observables/total_energy/value"][()]
        tol = 2e-4 + 100 * 100 * EPS32
        spread = float(np.max(np.abs(e32 - e64[0]))) / abs(e64[0])
        print(f"\n  fp32 vs fp64: step 0 {worst:.1e} relative (bound {tol0:.1e}); E32 within {spread:.1e} of E64(0) "
              f"(bound {tol:.1e})", file=sys.stderr)
        self.assertLessEqual(spread, tol)
        self.assertGreater(float(np.max(np.abs(e32 - e64))), 0.0, "fp32 really ran in fp32")

    # --- thermostat -------------------------------------------------------------------

    def test_langevin_holds_the_temperature_on_any_rank_count(self):
        # From T = 1.44 the crystal melts and the kinetic energy halves; the
        # bath at T = 1.0 with damp = 0.1 (20 steps) brings it back.
        extra = 'thermostat = "langevin"\ntemperature = 1.0\ndamp = 0.1\n'
        self.write("in.toml", md_input(steps=1000, thermo_every=10, extra=extra))
        self.run_ok("in.toml", "-o", "np1.h5")
        self.run_ok("in.toml", "-o", "np2.h5", ranks=2)
        f1, f2 = self.open("np1.h5"), self.open("np2.h5")
        t1 = f1["observables/temperature/value"][()]
        # Noise keyed by (seed, atom, step): 2 ranks follow the 1-rank run to
        # round-off (amplified as in the decomposition test, but damped).
        t2 = f2["observables/temperature/value"][()]
        self.assertLessEqual(float(np.max(np.abs(t1 - t2))), 1e-9)
        # The second half (t >= 2.5 = 25 damping times) is in equilibrium: the
        # canonical fluctuation of T is T sqrt(2 / (3N - 3)) per row, rows 10
        # steps apart are correlated over about damp / (10 dt) = 2 rows, so the
        # mean of the 50 rows has standard error T sqrt(2 / (3N - 3)) / 5;
        # allow 4 of them.
        n = len(f1["particles/all/id"])
        tail = t1[len(t1) // 2:]
        sigma = 1.0 * math.sqrt(2.0 / (3 * n - 3)) / math.sqrt(len(tail) / 2)
        print(f"\n  Langevin T = {tail.mean():.4f} (bath 1.0, 4 sigma = {4 * sigma:.4f})", file=sys.stderr)
        self.assertLessEqual(abs(tail.mean() - 1.0), 4 * sigma)

    # --- layout and errors --------------------------------------------------------------

    def test_h5md_layout(self):
        self.write("in.toml", md_input(steps=20, thermo_every=5, output_every=10))
        res = self.run_ok("in.toml")
        self.assertInOutput("Step Temp E_pair E_mol TotEng Press", res.stdout, res, "stdout")
        f = self.open("out/run.h5")
        self.assertEqual(list(f["h5md"].attrs["version"]), [1, 1])
        self.assertEqual(f["particles/all/position/value"].shape, (3, 500, 3))
        self.assertEqual(list(f["particles/all/position/step"][()]), [0, 10, 20])
        self.assertEqual(list(f["observables/temperature/step"][()]), [0, 5, 10, 15, 20])
        self.assertEqual(f["observables/momentum/value"].shape, (5, 3))
        box = f["particles/all/box/edges/value"][-1]
        self.assertAlmostEqual(float(box[0]), 5 * (4 / 0.8442) ** (1 / 3), places=12)
        pos = f["particles/all/position/value"][()]
        self.assertTrue(np.all(pos >= 0) and np.all(pos < box[0]), "positions wrapped into the box")
        # Exactly T = 1.44 at step 0 (3N - 3 degrees of freedom).
        v = f["particles/all/velocity/value"][0]
        self.assertAlmostEqual(float(np.sum(v * v)) / (3 * 500 - 3), 1.44, delta=1e-13)
        self.assertLessEqual(float(np.abs(v.sum(axis=0)).max()), 500 * 4 * EPS64 * 4)
        # The XDMF sidecar: a temporal collection of 3 Polyvertex frames of 500 atoms.
        root = ET.parse(self.path("out/run.xmf")).getroot()
        frames = [g for g in root.iter("Grid") if g.get("GridType") == "Uniform"]
        self.assertEqual(len(frames), 3)
        for g in frames:
            topology = g.find("Topology")
            self.assertEqual((topology.get("TopologyType"), topology.get("NumberOfElements")), ("Polyvertex", "500"))

    def test_bad_input(self):
        cases = [
            ('initial = "file"', "md.initial_file"),
            ('initial = "file"\ninitial_file = "nowhere.h5"', "nowhere.h5"),
            ("cutoff = 0", "md.cutoff"),
        ]
        for extra, needle in cases:
            with self.subTest(extra=extra):
                self.write("in.toml", md_input(extra=extra))
                res = self.strata("run", "in.toml", "--overwrite")
                self.assertExit(res, 2)
                self.assertInOutput(needle, res.stderr, res)
                self.assertFalse(os.path.exists(self.path("out/run.h5")), "nothing written")
        # Too many ranks for the box: 3^3 cells (L = 5.04) over 4 ranks gives
        # sub-boxes 2.52 wide, less than cutoff + skin.
        self.write("in.toml", md_input(cells=3))
        res = self.strata("run", "in.toml", "--overwrite", ranks=4)
        self.assertExit(res, 2)
        self.assertInOutput("md.cells", res.stderr, res)
        self.assertFalse(os.path.exists(self.path("out/run.h5")), "nothing written")

    def test_nan_fails_the_run_after_writing_the_state(self):
        self.write("in.toml", md_input(steps=40, thermo_every=10, extra="\n[health]\nevery_steps = 5\n"))
        res = self.strata("run", "in.toml", env={"STRATA_TEST_INJECT_NAN": "12:1"}, ranks=2)
        self.assertExit(res, 3)
        with h5py.File(self.path("out/run.h5"), "r") as f:
            self.assertTrue(sc.as_str(f.attrs["status"]).startswith("failed"), sc.as_str(f.attrs["status"]))
            steps = list(f["particles/all/position/step"][()])
            self.assertEqual(steps, [0, 15], "the first frame and the failing state")
            self.assertTrue(np.isnan(f["particles/all/velocity/value"][-1]).any())

    def test_blow_up_row_is_the_failing_step_and_the_same_on_any_rank_count(self):
        # dt = 0.1 sends an atom past the neighbour list's reach part-way
        # through a step: the failure's row must carry that step (the one the
        # error names) and no stale value, whatever the rank count.
        rows = {}
        for ranks in (1, 2):
            with self.subTest(ranks=ranks):
                self.write("in.toml", md_input(steps=40, extra="dt = 0.1"))
                res = self.strata("run", "in.toml", "--overwrite", ranks=ranks)
                self.assertExit(res, 3)
                named = re.search(r"at step (\d+)", res.stderr)
                self.assertIsNotNone(named, res.describe())
                with h5py.File(self.path("out/run.h5"), "r") as f:
                    step = int(f["observables/potential_energy/step"][-1])
                    values = [float(f[f"observables/{name}/value"][-1]) for name in OBSERVABLES]
                self.assertEqual(step, int(named.group(1)), res.describe())
                rows[ranks] = (step, values)
        self.assertEqual(rows[1][0], rows[2][0])
        self.assertTrue(all(np.isnan(v) for v in rows[1][1]), rows)
        self.assertTrue(all(np.isnan(v) for v in rows[2][1]), rows)


if __name__ == "__main__":
    sc.main()
