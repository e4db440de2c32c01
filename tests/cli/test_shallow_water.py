#!/usr/bin/env python3
"""The shallow_water model against what it must reproduce.

Each test runs the strata binary on a small grid and reads the HDF5 output:
mass to round-off, the discretely balanced jet steady, linear gravity waves
at the scheme's second order, Stoker's dam break, bitwise equal results on
1 to 6 ranks and after a restart, FP32 against FP64, and bad input. The
tolerances and why are in docs/validation.md ("Shallow water").

Runs use one OpenMP thread (OMP_NUM_THREADS=1): the grids are a few
thousand cells, where a second thread on a shared 2-core machine only adds
barrier waits.
"""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

ONE_THREAD = {"OMP_NUM_THREADS": "1"}
FIELDS = ("h", "u", "v", "vorticity")
DIAGNOSTICS = ("mass", "energy", "potential_enstrophy", "max_courant")
INPUTS = os.path.join(sc.SOURCE_DIR, "inputs", "shallow_water")


def sw_input(output="out/run.h5", checkpoint_steps=0, **keys):
    """A shallow_water input with the given [shallow_water] keys."""
    lines = ["[run]", 'model = "shallow_water"', f'output = "{output}"', "",
             "[checkpoint]", f"every_steps = {checkpoint_steps}", "every_seconds = 0", "",
             "[shallow_water]"]
    for key, value in keys.items():
        if isinstance(value, str):
            value = f'"{value}"'
        elif isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            value = "[" + ", ".join(str(v) for v in value) + "]"
        lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


# A nonlinear flow that exercises every term: the balanced jet on a beta
# plane between walls in y, perturbed so that it starts to roll up.
JET_CHANNEL = dict(nx=24, ny=18, lx=2.4e6, ly=1.8e6, initial="barotropic_instability",
                   boundary_y="wall", beta=2e-11, jet_speed=30.0, jet_width=2.0e5,
                   perturbation_amplitude=20.0, sim_time=6000.0, output_interval=3000.0)
# Walls on all four sides, viscosity and an off-centre vortex.
CLOSED_BOX = dict(nx=20, ny=16, lx=2.0e6, ly=1.6e6, initial="vortex", boundary_x="wall",
                  boundary_y="wall", centre_x=0.4, centre_y=0.55, vortex_radius=2.5e5,
                  viscosity=2.0e4, sim_time=6000.0, output_interval=3000.0)


def read(path):
    """{name: array} of every field (all frames) and diagnostic of a run."""
    with h5py.File(path, "r") as f:
        out = {name: f[name][()] for name in FIELDS}
        out.update({name: f["diagnostics"][name][()] for name in DIAGNOSTICS})
        out["steps"] = int(f["performance"]["steps"][()])
        out["status"] = sc.as_str(f.attrs["status"])
    return out


def stoker(x, t, g, hl, hr, x0):
    """Stoker's wet-bed dam break: h(x, t) (bisection for the middle state)."""
    cl = np.sqrt(g * hl)
    lo, hi = hr, hl
    for _ in range(200):
        hm = 0.5 * (lo + hi)
        f = 2 * (cl - np.sqrt(g * hm)) - (hm - hr) * np.sqrt(0.5 * g * (1 / hm + 1 / hr))
        lo, hi = (hm, hi) if f > 0 else (lo, hm)
    hm = 0.5 * (lo + hi)
    um, cm = 2 * (cl - np.sqrt(g * hm)), np.sqrt(g * hm)
    s = hm * um / (hm - hr)
    xi = (x - x0) / t
    return np.where(xi <= -cl, hl, np.where(xi <= um - cm, ((2 * cl - xi) / 3) ** 2 / g,
                                            np.where(xi < s, hm, hr)))


def linear_gaussian(n, t, amplitude, sigma, c):
    """h - H of the linearised equations on the unit periodic square at the
    n x n cell centres, from a Gaussian bump at rest centred in the square:
    each Fourier mode oscillates as cos(c |k| t); the coefficients are the
    Gaussian's (its periodic images are below 1e-8 at sigma = 1/12)."""
    k = 2 * np.pi * np.fft.fftfreq(n, d=1.0 / n)
    kx, ky = np.meshgrid(k, k)
    kk = np.hypot(kx, ky)
    first = 0.5 / n - 0.5          # first cell centre relative to the bump
    coeff = amplitude * 2 * np.pi * sigma ** 2 * np.exp(-kk ** 2 * sigma ** 2 / 2)
    coeff = coeff * np.cos(c * kk * t) * np.exp(1j * (kx + ky) * first) * n * n
    return np.real(np.fft.ifft2(coeff))


FIELDS_PY = os.path.join(sc.SOURCE_DIR, "scripts", "plot", "fields.py")


class ShallowWater(sc.StrataTestCase):

    def run_sw(self, name, ranks=None, args=(), code=0, env=None, **keys):
        self.write(name + ".toml", sw_input(output=name + ".h5", **keys))
        res = self.strata("run", name + ".toml", *args, ranks=ranks, env={**ONE_THREAD, **(env or {})})
        self.assertExit(res, code)
        return res

    def dt_of(self, name, **keys):
        """dt as the dry run's plan prints it."""
        self.write(name + ".toml", sw_input(output=name + ".h5", **keys))
        res = self.strata("run", name + ".toml", "--dry-run", env=ONE_THREAD)
        self.assertExit(res, 0)
        return float(res.stdout.split("dt = ")[1].split()[0])

    # --- conservation and balance -------------------------------------------

    def test_mass_conserved_to_round_off_over_1000_steps(self):
        for case, keys in (("jet_channel", JET_CHANNEL), ("closed_box", CLOSED_BOX)):
            with self.subTest(case=case):
                keys = {**keys, "nx": 32, "ny": 32, "output_interval": 0.0}
                dt = self.dt_of(case, **keys)
                self.run_sw(case, **{**keys, "sim_time": 1000.5 * dt})
                r = read(self.path(case + ".h5"))
                self.assertGreaterEqual(r["steps"], 1000)
                drift = abs(r["mass"][-1] - r["mass"][0]) / r["mass"][0]
                print(f"\n  {case}: {r['steps']} steps, relative mass change {drift:.2e}, "
                      f"energy {(r['energy'][-1] - r['energy'][0]) / r['energy'][0]:.2e}", file=sys.stderr)
                self.assertLessEqual(drift, 1e-13)

    def test_energy_conserved_without_viscosity(self):
        # The semi-discrete scheme conserves energy; SSP-RK3 damps each mode
        # by (w dt)^4 / 24 a step. Measured on the available energy (total
        # minus that of the resting layer of the same mass), the sensitive
        # part: the closed box at cfl 0.5 and 0.25 must lose little and the
        # loss must fall by about 2^3 per halving of dt (third-order RK).
        loss = []
        for cfl in (0.5, 0.25):
            name = f"cfl{cfl}"
            self.run_sw(name, **{**CLOSED_BOX, "viscosity": 0.0, "cfl": cfl, "sim_time": 43200.0,
                                 "output_interval": 0.0})
            with h5py.File(self.path(name + ".h5"), "r") as f:
                e = f["diagnostics/energy"][()]
                mass = f["diagnostics/mass"][()]
            area = CLOSED_BOX["lx"] * CLOSED_BOX["ly"]
            rest = 0.5 * 9.81 * (mass[0] / area) ** 2 * area
            loss.append((e[0] - e[-1]) / (e[0] - rest))
        print(f"\n  available-energy loss over 12 h: cfl 0.5 {loss[0]:.2e}, cfl 0.25 {loss[1]:.2e}, "
              f"ratio {loss[0] / loss[1]:.1f}", file=sys.stderr)
        self.assertGreater(loss[1], 0)
        self.assertLess(loss[0], 1e-3)
        self.assertGreater(loss[0] / loss[1], 6.0)

    def test_zonal_jet_stays_steady_for_1000_steps(self):
        for case, beta in (("f_plane", 0.0), ("beta_plane", 2e-11)):
            with self.subTest(case=case):
                keys = dict(nx=32, ny=32, initial="zonal_jet", boundary_y="wall", beta=beta,
                            jet_speed=30.0, output_interval=0.0)
                dt = self.dt_of(case, **keys)
                self.run_sw(case, **{**keys, "sim_time": 1000.5 * dt})
                r = read(self.path(case + ".h5"))
                self.assertGreaterEqual(r["steps"], 1000)
                h0, h1 = r["h"][0], r["h"][-1]
                change = np.linalg.norm(h1 - h0) / np.linalg.norm(h0)
                print(f"\n  {case}: relative L2 change of h {change:.2e}, max |v| "
                      f"{np.abs(r['v'][-1]).max():.2e} m/s", file=sys.stderr)
                self.assertLess(change, 1e-10)

    # --- accuracy ---------------------------------------------------------------

    def test_gaussian_converges_to_linear_theory_at_second_order(self):
        # Non-rotating, periodic, a bump of 1e-6 H (nonlinear terms ~1e-6
        # of the signal, far below the discretisation error), c = 1, t = 1/4.
        amplitude, sigma, t = 1e-6, 1.0 / 12, 0.25
        errors = []
        for n in (32, 64, 128):
            name = f"g{n}"
            self.run_sw(name, nx=n, ny=n, lx=1.0, ly=1.0, g=1.0, H=1.0, f0=0.0, initial="gaussian",
                        gaussian_amplitude=amplitude, gaussian_width=sigma, sim_time=t,
                        output_interval=0.0)
            with h5py.File(self.path(name + ".h5"), "r") as f:
                h = f["h"][-1]
                self.assertEqual(f["time"][-1], t)
            exact = linear_gaussian(n, t, amplitude, sigma, 1.0)
            errors.append(np.sqrt(np.mean((h - 1.0 - exact) ** 2) / np.mean(exact ** 2)))
        orders = [np.log2(errors[i] / errors[i + 1]) for i in range(2)]
        print(f"\n  relative L2 errors {errors}, orders {orders}", file=sys.stderr)
        for order in orders:
            self.assertAlmostEqual(order, 2.0, delta=0.1)
        self.assertLess(errors[-1], 3e-3)

    def test_dam_break_matches_stoker(self):
        g, hl, hr, length, t = 9.81, 2.0, 1.0, 1000.0, 50.0
        errors = []
        for n in (200, 400, 800):
            name = f"dam{n}"
            dx = length / n
            self.run_sw(name, nx=n, ny=1, lx=length, ly=dx, f0=0.0, initial="dam_break",
                        boundary_x="wall", dam_h_left=hl, dam_h_right=hr,
                        viscosity=0.5 * np.sqrt(g * hl) * dx, sim_time=t, output_interval=0.0)
            with h5py.File(self.path(name + ".h5"), "r") as f:
                h = f["h"][-1][0]
            x = (np.arange(n) + 0.5) * dx
            exact = stoker(x, t, g, hl, hr, length / 2)
            errors.append(np.sum(np.abs(h - exact)) * dx / ((hl - hr) * length))
        orders = [np.log2(errors[i] / errors[i + 1]) for i in range(2)]
        print(f"\n  L1 errors / ((h_l - h_r) L) {errors}, orders {orders}", file=sys.stderr)
        self.assertLess(errors[1], 0.01)
        for order in orders:
            self.assertGreater(order, 0.6)
            self.assertLess(order, 1.2)

    def test_fp32_matches_fp64(self):
        # A vortex on a beta plane, 346 steps. FP32 rounds h, which carries the
        # resting depth H = 1000 m, to 2^-24 H = 6e-5 m: a random walk over 3 x 346
        # stage updates gives ~1e-3 m, 7e-6 of the 140 m dip; 3e-5 leaves 4x.
        keys = {**CLOSED_BOX, "nx": 32, "ny": 32, "viscosity": 0.0, "boundary_x": "periodic",
                "beta": 2e-11, "sim_time": 43200.0, "output_interval": 0.0}
        self.run_sw("fp64", **keys)
        self.run_sw("fp32", args=("--precision", "fp32"), **keys)
        a, b = read(self.path("fp64.h5")), read(self.path("fp32.h5"))
        self.assertEqual(a["steps"], b["steps"])
        for name in ("h", "u", "v"):
            rest = 1000.0 if name == "h" else 0.0
            signal_size = np.abs(a[name][-1] - rest).max()
            diff = np.abs(a[name][-1] - b[name][-1]).max() / signal_size
            print(f"\n  {name}: max |fp32 - fp64| / max |{name} - rest| = {diff:.2e}", file=sys.stderr)
            self.assertLess(diff, 3e-5)

    # --- reproducibility ----------------------------------------------------------

    def test_bitwise_equal_on_1_to_6_ranks_and_any_decomposition(self):
        cases = (("jet_channel", JET_CHANNEL, [(2, None), (3, None), (4, [1, 4]), (6, [3, 2])]),
                 ("closed_box", CLOSED_BOX, [(2, [2, 1]), (4, [2, 2]), (3, [1, 3])]))
        for case, keys, runs in cases:
            self.run_sw(case + "_1", **keys)
            ref = read(self.path(case + "_1.h5"))
            self.assertEqual(ref["h"].shape[0], 3)
            for ranks, decomposition in runs:
                with self.subTest(case=case, ranks=ranks, decomposition=decomposition):
                    name = f"{case}_{ranks}"
                    extra = {} if decomposition is None else {"decomposition": decomposition}
                    self.run_sw(name, ranks=ranks, **keys, **extra)
                    got = read(self.path(name + ".h5"))
                    for key in FIELDS + DIAGNOSTICS:
                        self.assertTrue(np.array_equal(got[key], ref[key]), f"{key} differs on {ranks} ranks")

    def test_restart_is_bitwise(self):
        keys = {**JET_CHANNEL, "sim_time": 12000.0, "output_interval": 3000.0}
        self.write("in.toml", sw_input(checkpoint_steps=10, **keys))
        # From the oldest kept checkpoint, on two ranks.
        ref, again = sc.run_and_restart_from_oldest(self, "in.toml", read, ONE_THREAD)
        for key in FIELDS + DIAGNOSTICS:
            self.assertTrue(np.array_equal(again[key], ref[key]), f"{key} differs after the restart")
        # Stopped by SIGTERM at step 10 (held there until it came), then restarted on three ranks.
        sc.stop_held_run(self, ["run", "in.toml"], self.path("out", "run.chk"), 10, ONE_THREAD)
        self.assertExit(self.strata("run", "in.toml", "--restart", ranks=3, env=ONE_THREAD), 0)
        resumed = read(self.path("out", "run.h5"))
        self.assertEqual(resumed["status"], "complete")
        for key in FIELDS + DIAGNOSTICS:
            self.assertTrue(np.array_equal(resumed[key], ref[key]), f"{key} differs after SIGTERM and restart")

    # --- failures -------------------------------------------------------------------

    def test_bad_input_names_the_key(self):
        cases = [({"cfl": 1.5}, "shallow_water.cfl"),
                 ({"H": -10.0}, "shallow_water.H"),
                 ({"dam_h_left": 0.0, "initial": "dam_break"}, "shallow_water.dam_h_left"),
                 ({"initial": "zonal_jet"}, "shallow_water.boundary_y"),
                 ({"initial": "zonal_jet", "boundary_y": "wall", "jet_speed": 500.0}, "shallow_water.jet_speed"),
                 ({"gaussian_amplitude": -2000.0}, "shallow_water.gaussian_amplitude"),
                 ({"boundary_x": "open"}, "shallow_water.boundary_x"),
                 ({"decomposition": [3]}, "shallow_water.decomposition")]
        for keys, needle in cases:
            with self.subTest(needle=needle):
                self.write("bad.toml", sw_input(output="bad.h5", nx=16, ny=16, **keys))
                res = self.strata("run", "bad.toml", env=ONE_THREAD)
                self.assertExit(res, 2)
                self.assertInOutput(needle, res.stderr, res)
                self.assertFalse(os.path.exists(self.path("bad.h5")))

    def test_courant_number_past_the_limit_fails_with_exit_3(self):
        # A strong dam break at cfl 0.85: the flow it starts is faster than
        # the resting water that fixed dt, and the health check stops it.
        self.write("in.toml", sw_input(output="blow.h5", nx=100, ny=1, lx=100.0, ly=1.0, f0=0.0, cfl=0.85,
                                       boundary_x="wall", initial="dam_break", dam_h_left=10.0,
                                       dam_h_right=0.1, sim_time=5.0, output_interval=0.0)
                   + "\n[health]\nevery_steps = 1\n")
        res = self.strata("run", "in.toml", env=ONE_THREAD)
        self.assertExit(res, 3)
        self.assertInOutput("max_courant", res.stderr, res)
        with h5py.File(self.path("blow.h5"), "r") as f:
            self.assertTrue(sc.as_str(f.attrs["status"]).startswith("failed: max_courant"))

    # --- output and example inputs ---------------------------------------------------

    def test_output_layout_and_example_inputs(self):
        for name in sorted(os.listdir(INPUTS)):
            with self.subTest(input=name):
                # The example, shortened to two frames (the benchmark's 2048^2 cells also to 256^2).
                smaller = (["--set", "shallow_water.nx=256", "--set", "shallow_water.ny=256"]
                           if name == "benchmark.toml" else [])
                res = self.strata("run", os.path.join(INPUTS, name), "-o", name[:-5] + ".h5",
                                  "--set", "shallow_water.sim_time=0.02" if name == "dam_break.toml"
                                  else "shallow_water.sim_time=600", "--set", "shallow_water.output_interval=0",
                                  *smaller, env=ONE_THREAD)
                self.assertExit(res, 0)
                with h5py.File(self.path(name[:-5] + ".h5"), "r") as f:
                    ny, nx = f["y"].shape[0], f["x"].shape[0]
                    for field in FIELDS:
                        self.assertEqual(f[field].shape, (2, ny, nx))
                        self.assertIn("units", f[field].attrs)
                    for d in DIAGNOSTICS:
                        self.assertEqual(f["diagnostics"][d].shape, (2,))
                    # dt comes from the initial state: its Courant number is the input's cfl.
                    cfl = float(sc.read_config_text(f).split("cfl = ")[1].split()[0])
                    self.assertAlmostEqual(f["diagnostics/max_courant"][0], cfl, delta=1e-9)
                # The XDMF sidecar as a reader uses it (every dataset and shape it names).
                self.assertEqual(sc.check_xdmf(self.path(name[:-5] + ".xmf")), 2)
        # The plots of an x-y field: one PNG per frame.
        res = sc.run_command([sc.PYTHON, FIELDS_PY, self.path("vortex.h5"), "--field", "h",
                              "--out", self.path("plots")], self.tmp)
        self.assertExit(res, 0)
        pngs = sc.files_under(self.path("plots"), ".png")
        self.assertEqual(len(pngs), 2, res.describe())
        for png in pngs:
            with open(self.path("plots", png), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", png)


if __name__ == "__main__":
    sc.main()
