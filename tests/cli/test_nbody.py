#!/usr/bin/env python3
"""The nbody model against what it must reproduce.

Each test runs the strata binary and reads the H5MD output with h5py: the
layout and the XDMF sidecar, bitwise equal trajectories on 1, 2 and 3
ranks, the Kepler orbit's energy error and its second order, the Plummer
sphere's virial equilibrium and energy, FP32 against FP64, restart, a start
from an H5MD file, bad input and the example inputs. Tolerances and why are
in docs/validation.md ("N-body").
"""

import math
import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

ONE_THREAD = {"OMP_NUM_THREADS": "1"}
INPUTS = os.path.join(sc.SOURCE_DIR, "inputs", "nbody")
OBSERVABLES = ("kinetic_energy", "potential_energy", "total_energy", "momentum", "angular_momentum",
               "virial_ratio")
PARTICLES_PY = os.path.join(sc.SOURCE_DIR, "scripts", "plot", "particles.py")
PERIOD = 2 * math.pi   # Kepler orbit with a = G = M = 1


def nbody_input(output="out/run.h5", checkpoint_steps=0, **keys):
    lines = ["[run]", 'model = "nbody"', f'output = "{output}"', "",
             "[checkpoint]", f"every_steps = {checkpoint_steps}", "every_seconds = 0", "", "[nbody]"]
    for key, value in keys.items():
        if isinstance(value, str):
            value = f'"{value}"'
        elif isinstance(value, bool):
            value = "true" if value else "false"
        lines.append(f"{key} = {value!r}" if isinstance(value, float) else f"{key} = {value}")
    return "\n".join(lines) + "\n"


def read(path):
    """{name: array} of the trajectory and every observable."""
    with h5py.File(path, "r") as f:
        out = {k: f["particles/all"][k]["value"][()] for k in ("position", "velocity")}
        out.update({k: f["observables"][k]["value"][()] for k in OBSERVABLES})
        out["step"] = f["observables/total_energy/step"][()]
        out["status"] = sc.as_str(f.attrs["status"])
    return out


SMALL_PLUMMER = dict(initial="plummer", n=301, softening=0.01, dt=1.0 / 128, t_end=0.25, diag_every=4,
                     output_every=8)


class Nbody(sc.StrataTestCase):

    def run_nbody(self, name, ranks=None, args=(), code=0, env=None, **keys):
        self.write(name + ".toml", nbody_input(output=name + ".h5", **keys))
        res = self.strata("run", name + ".toml", *args, ranks=ranks, env={**ONE_THREAD, **(env or {})})
        self.assertExit(res, code)
        return res

    # --- output layout ------------------------------------------------------------

    def test_h5md_layout_and_xdmf(self):
        self.run_nbody("run", **{**SMALL_PLUMMER, "n": 64}, ranks=2)
        with h5py.File(self.path("run.h5"), "r") as f:
            self.assertEqual(list(f["h5md"].attrs["version"]), [1, 1])
            self.assertEqual(sc.as_str(f["h5md/creator"].attrs["name"]), "strata")
            self.assertIn("version", f["h5md/creator"].attrs)
            self.assertIn("name", f["h5md/author"].attrs)
            box = f["particles/all/box"]
            self.assertEqual(int(box.attrs["dimension"]), 3)
            self.assertEqual(sc.str_list(box.attrs["boundary"]), ["none"] * 3)
            self.assertEqual(box["edges/value"].shape, (5, 3))
            self.assertEqual(list(f["particles/all/id"][()]), list(range(64)))
            self.assertEqual(f["particles/all/id"].dtype.kind, "i")
            self.assertTrue(np.all(f["particles/all/mass"][()] == 1 / 64))
            for element in ("position", "velocity"):
                g = f["particles/all"][element]
                self.assertEqual(g["value"].shape, (5, 64, 3))
                self.assertEqual(list(g["step"][()]), [0, 8, 16, 24, 32])
                self.assertEqual(g["step"].dtype.kind, "i")
                self.assertEqual(list(g["time"][()]), [s / 128 for s in (0, 8, 16, 24, 32)])
                self.assertNotIn("unit", g["value"].attrs)   # reduced units: /h5md/modules/units
                self.assertIn("units", g["value"].attrs)
            for name in OBSERVABLES:
                g = f["observables"][name]
                width = (3,) if name in ("momentum", "angular_momentum") else ()
                self.assertEqual(g["value"].shape, (9,) + width, name)
                self.assertEqual(list(g["step"][()]), list(range(0, 33, 4)))
                self.assertIn("long_name", g["value"].attrs)
            # Centre of mass at rest: total momentum at round-off.
            self.assertLess(np.abs(f["observables/momentum/value"][()]).max(), 1e-15)
            self.assertEqual(sc.as_str(f.attrs["status"]), "complete")
        self.assertEqual(sc.check_particle_xdmf(self.path("run.xmf")), 5)
        # The plots: energy drift and projected density.
        res = sc.run_command([sc.PYTHON, PARTICLES_PY, "run.h5", "--out", "png"], self.tmp)
        self.assertEqual(res.returncode, 0, res.describe())
        for png in ("run_energy.png", "run_density.png"):
            self.assertGreater(os.path.getsize(self.path("png", png)), 1000, png)

    # --- reproducibility ---------------------------------------------------------------

    def test_bitwise_equal_on_1_2_3_ranks(self):
        self.run_nbody("r1", **SMALL_PLUMMER)
        ref = read(self.path("r1.h5"))
        self.assertEqual(ref["position"].shape, (5, 301, 3))
        for ranks in (2, 3):
            with self.subTest(ranks=ranks):
                self.run_nbody(f"r{ranks}", ranks=ranks, **SMALL_PLUMMER)
                got = read(self.path(f"r{ranks}.h5"))
                for key in ("position", "velocity") + OBSERVABLES:
                    self.assertTrue(np.array_equal(got[key], ref[key]), f"{key} differs on {ranks} ranks")

    def test_restart_is_bitwise(self):
        keys = {**SMALL_PLUMMER, "t_end": 0.5}
        self.write("in.toml", nbody_input(checkpoint_steps=16, **keys))
        # From the oldest kept checkpoint (step 32 of 64), on two ranks.
        ref, again = sc.run_and_restart_from_oldest(self, "in.toml", read, ONE_THREAD)
        for key in ("position", "velocity", "step") + OBSERVABLES:
            self.assertTrue(np.array_equal(again[key], ref[key]), f"{key} differs after the restart")
        self.assertEqual(sc.check_particle_xdmf(self.path("ref.xmf")), 9)
        # Stopped by SIGTERM at step 16 (held there until it came), then restarted on three ranks.
        sc.stop_held_run(self, ["run", "in.toml"], self.path("out", "run.chk"), 16, ONE_THREAD)
        self.assertExit(self.strata("run", "in.toml", "--restart", ranks=3, env=ONE_THREAD), 0)
        resumed = read(self.path("out", "run.h5"))
        self.assertEqual(resumed["status"], "complete")
        for key in ("position", "velocity", "step") + OBSERVABLES:
            self.assertTrue(np.array_equal(resumed[key], ref[key]), f"{key} differs after SIGTERM and restart")

    # --- validation -------------------------------------------------------------------

    def kepler(self, name, steps_per_orbit, orbits):
        # Diagnostics at the same 100 phases of every orbit for any dt.
        self.run_nbody(name, initial="two_body", eccentricity=0.5, softening=0.0, dt=PERIOD / steps_per_orbit,
                       steps=steps_per_orbit * orbits, diag_every=steps_per_orbit // 100, output_every=0)
        with h5py.File(self.path(name + ".h5"), "r") as f:
            e = f["observables/total_energy/value"][()]
            lz = f["observables/angular_momentum/value"][:, 2]
            pos = f["particles/all/position/value"][()]
        return np.abs((e - e[0]) / e[0]).max(), np.abs((lz - lz[0]) / lz[0]).max(), pos

    def test_kepler_energy_error_is_second_order_and_angular_momentum_exact(self):
        de1, dl1, pos = self.kepler("k1000", 1000, 100)
        de2, _, _ = self.kepler("k2000", 2000, 100)
        order = math.log2(de1 / de2)
        print(f"\n  Kepler e=0.5, 100 orbits: max |dE/E| = {de1:.3e} (1000 steps/orbit), {de2:.3e} (2000); "
              f"order {order:.3f}; max |dL/L| = {dl1:.2e}", file=sys.stderr)
        # Leapfrog's error is bounded (symplectic) and O(dt^2): "about 1e-4"
        # at 1000 steps per orbit; the order from halving dt within 0.1 of 2.
        self.assertLess(de1, 2e-4)
        self.assertGreater(de1, 5e-5)
        self.assertAlmostEqual(order, 2.0, delta=0.1)
        # Central forces: the kicks and drifts conserve L up to round-off,
        # a random walk of ~1e-16 over 1e5 steps.
        self.assertLess(dl1, 1e-12)
        # After 100 whole orbits the bodies are back near apocentre (x = -+0.75).
        self.assertAlmostEqual(abs(pos[-1][0][0]), 0.75, delta=0.01)

    def test_plummer_2048_virial_equilibrium_and_energy(self):
        # The validation case: N = 2048, softening 0.01, dt = 1/128, to t = 10
        # (1280 steps, 5.4e9 pair interactions; ~35 s on 2 cores).
        self.run_nbody("plummer", env={"OMP_NUM_THREADS": "2"}, initial="plummer", n=2048, softening=0.01,
                       dt=1.0 / 128, t_end=10.0, diag_every=16, output_every=0)
        with h5py.File(self.path("plummer.h5"), "r") as f:
            q = f["observables/virial_ratio/value"][()]
            e = f["observables/total_energy/value"][()]
        de = np.abs((e - e[0]) / e[0]).max()
        print(f"\n  Plummer N=2048 to t=10: 2K/|W| at the end {q[-1]:.4f}, mean {q.mean():.4f}, "
              f"range [{q.min():.4f}, {q.max():.4f}]; max |dE/E| = {de:.2e}", file=sys.stderr)
        self.assertAlmostEqual(q[0], 1.0, delta=1e-12)   # virialised exactly at t = 0
        self.assertTrue(0.98 <= q[-1] <= 1.02, q[-1])
        self.assertTrue(0.98 <= q.mean() <= 1.02, q.mean())
        self.assertLessEqual(de, 3e-4)

    def test_fp32_matches_fp64(self):
        # FP32 rounds each of the N = 512 pair sums with relative error
        # ~sqrt(N) eps32 = 1.4e-6; a random walk over 128 steps gives
        # sqrt(128) x 1.4e-6 = 1.5e-5 of the energy, the bound used. Positions
        # (|x| ~ 1) drift by that force error times t^2 / 2, amplified by
        # close encounters over one crossing time: 1e-4 leaves a factor ~10.
        keys = {**SMALL_PLUMMER, "n": 512, "t_end": 1.0, "diag_every": 16, "output_every": 0}
        self.run_nbody("fp64", **keys)
        self.run_nbody("fp32", args=("--precision", "fp32"), **keys)
        a, b = read(self.path("fp64.h5")), read(self.path("fp32.h5"))
        de = np.abs(a["total_energy"] - b["total_energy"]).max() / abs(a["total_energy"][0])
        dx = np.linalg.norm(a["position"][-1] - b["position"][-1], axis=1).max()
        print(f"\n  FP32 vs FP64, Plummer N=512 to t=1: max |dE|/|E| = {de:.2e}, max |dx| = {dx:.2e}",
              file=sys.stderr)
        self.assertLess(de, 1.5e-5)
        self.assertLess(dx, 1e-4)

    def test_console_energy_error_is_the_plotted_definition(self):
        # One definition everywhere: (E(t) - E(0)) / |E(0)|, as particles.py
        # plots it. Each printed row (%+.3e: a relative rounding of at most
        # 5e-4) against the stored total energy; a bound system has E(0) < 0,
        # so the old (E - E0) / E0 had the opposite sign.
        res = self.run_nbody("de", **SMALL_PLUMMER)
        printed = [float(m) for m in re.findall(r"dE/\|E0\| ([-+][0-9.e+-]+)", res.stdout)]
        e = read(self.path("de.h5"))["total_energy"]
        self.assertLess(e[0], 0.0)
        self.assertEqual(len(printed), len(e), res.stdout)
        want = (e - e[0]) / abs(e[0])
        self.assertTrue(np.any(want != 0.0))
        for p, w in zip(printed, want):
            self.assertLessEqual(abs(p - w), 5e-4 * abs(w) + 1e-300, f"printed {p:+.3e}, file {w:+.3e}")

    # --- input --------------------------------------------------------------------------

    def test_start_from_an_h5md_file(self):
        # The first frame of another run's output, asked for, is the starting
        # configuration (the default, the last frame: tests/cli/test_start_frame.py).
        self.run_nbody("first", **{**SMALL_PLUMMER, "n": 50})
        self.run_nbody("second", ranks=2, initial="file", initial_file="first.h5", initial_frame=0, dt=1.0 / 128,
                       steps=2, diag_every=1, output_every=1)
        with h5py.File(self.path("first.h5"), "r") as a, h5py.File(self.path("second.h5"), "r") as b:
            for element in ("position", "velocity"):
                self.assertTrue(np.array_equal(a["particles/all"][element]["value"][0],
                                               b["particles/all"][element]["value"][0]), element)
            self.assertTrue(np.array_equal(a["particles/all/mass"][()], b["particles/all/mass"][()]))

    def test_bad_input_names_the_key_and_dataset(self):
        with h5py.File(self.path("no_velocity.h5"), "w") as f:
            f["particles/all/position/value"] = np.zeros((1, 4, 3))
        cases = [({"initial": "file"}, "nbody.initial_file"),
                 ({"initial": "file", "initial_file": "missing.h5"}, "missing.h5"),
                 ({"initial": "file", "initial_file": "no_velocity.h5"}, "/particles/all/velocity/value"),
                 ({"eccentricity": 1.0}, "nbody.eccentricity"),
                 ({"dt": 0.0}, "nbody.dt"),
                 ({"initial": "collision", "n": 2}, "nbody.n")]
        for keys, needle in cases:
            with self.subTest(needle=needle):
                self.write("bad.toml", nbody_input(output="bad.h5", **keys))
                res = self.strata("run", "bad.toml", env=ONE_THREAD)
                self.assertExit(res, 2)
                self.assertInOutput(needle, res.stderr, res)
                self.assertFalse(os.path.exists(self.path("bad.h5")))

    def test_nonfinite_state_fails_with_exit_3_after_recording_it(self):
        self.write("nan.toml", nbody_input(output="nan.h5", n=64, steps=20) + "\n[health]\nevery_steps = 1\n")
        res = self.strata("run", "nan.toml", env={**ONE_THREAD, "STRATA_TEST_INJECT_NAN": "5"})
        self.assertExit(res, 3)
        self.assertInOutput("non-finite position", res.stderr, res)
        with h5py.File(self.path("nan.h5"), "r") as f:
            self.assertTrue(sc.as_str(f.attrs["status"]).startswith("failed: non-finite"))
            # The failing state is the last frame and observables row.
            self.assertEqual(list(f["particles/all/position/step"][()]), [0, 5])
            self.assertEqual(list(f["observables/total_energy/step"][()]), [0, 5])
            self.assertTrue(np.isnan(f["particles/all/position/value"][-1]).any())

    def test_dry_run_prints_the_memory_plan_for_ten_million_bodies(self):
        self.write("big.toml", nbody_input(output="big.h5", n=10_000_000))
        res = self.strata("run", "big.toml", "--dry-run", "--precision", "fp32")
        self.assertExit(res, 0)
        self.assertInOutput("10000000 bodies", res.stdout, res, "stdout")
        self.assertInOutput("memory per rank", res.stdout, res, "stdout")
        self.assertFalse(os.path.exists(self.path("big.h5")))

    def test_example_inputs(self):
        names = sorted(n for n in os.listdir(INPUTS) if n.endswith(".toml"))
        self.assertTrue(names)
        for name in names:
            with self.subTest(input=name):
                res = self.strata("run", os.path.join(INPUTS, name), "-o", name[:-5] + ".h5",
                                  "--set", "nbody.steps=4", "--set", "nbody.output_every=2",
                                  "--set", "nbody.n=256", env=ONE_THREAD)
                self.assertExit(res, 0)
                self.assertEqual(sc.check_particle_xdmf(self.path(name[:-5] + ".xmf")), 3)


if __name__ == "__main__":
    sc.main()
