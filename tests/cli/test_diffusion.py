#!/usr/bin/env python3
"""The `diffusion` model end to end: accuracy, convergence, reproducibility,
conservation, restart, input errors, health, the XDMF sidecar and the plot
script.

docs/contract.md guarantees 1, 2, 4 and 5 for the 3-D heat equation. Every check is
computed here from the output files (numpy, h5py) rather than trusted from
the model's own diagnostics, and every tolerance is derived in the test from
the scheme (truncation error, stability, round-off per operation) so that a
failure means the scheme or the engine changed, not that a threshold was
tuned. The runs are small: the whole file takes well under a minute on two
cores.
"""

import math
import os
import re
import signal
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

EXAMPLE = os.path.join(sc.SOURCE_DIR, "inputs", "diffusion", "gaussian.toml")
FIELDS_PY = os.path.join(sc.SOURCE_DIR, "scripts", "plot", "fields.py")

EPS64 = float(np.finfo(np.float64).eps)   # 2^-52
EPS32 = float(np.finfo(np.float32).eps)   # 2^-23

# Round-off of one cell update of HeatStep, out = w c + cx (l + r) + cy (...)
# + cz (...) with w = 1 - 2 (cx + cy + cz): w c, then per axis a sum, a
# product and an addition: 10 roundings, and w itself rounded to the run's
# precision: 11. Under the stability limit kappa dt (1/dx^2 + 1/dy^2 +
# 1/dz^2) <= 1/2 every weight (w, cx, cy, cz) is nonnegative and they add up
# to 1, so no operand exceeds max|u| and each rounding is at most eps/2
# max|u|: one update is off by at most 5.5 eps max|u|. The scheme is a
# convex combination of the old values, so an error once made is never
# amplified in the max norm.
UPDATE_ROUND_OFF = 11 * 0.5   # in eps max|u|


def small_input(n=(20, 18, 16), length=(1.0, 0.9, 0.8), boundary="periodic", sim_time=0.25,
                output_interval=0.1, extra=""):
    """A diffusion input whose cells are 0.05 m cubes by default; dt = 0 (0.9
    of the stability limit)."""
    return f"""\
[run]
model = "diffusion"
output = "out/run.h5"

[diffusion]
nx = {n[0]}
ny = {n[1]}
nz = {n[2]}
lx = {length[0]}
ly = {length[1]}
lz = {length[2]}
kappa = 0.01
sigma = 0.1
boundary = "{boundary}"
sim_time = {sim_time}
output_interval = {output_interval}
{extra}"""


# --- the analytic solution -------------------------------------------------

def params_of(h5):
    """kappa, sigma, amplitude, boundary, lengths from the run's /config."""
    import tomllib
    cfg = tomllib.loads(sc.read_config_text(h5))["diffusion"]
    return cfg


def gaussian_1d(x, centre, length, s2, boundary):
    """One axis' factor of the spreading Gaussian, with the images of the
    boundary: periodic at c -+ L; walls (zero flux) mirrored at -c and 2L - c."""
    d = x - centre
    f = np.exp(-d * d / (2 * s2))
    if boundary == "periodic":
        f = f + np.exp(-(d - length) ** 2 / (2 * s2)) + np.exp(-(d + length) ** 2 / (2 * s2))
    elif boundary == "wall":
        f = f + np.exp(-(x + centre) ** 2 / (2 * s2)) + np.exp(-(x - (2 * length - centre)) ** 2 / (2 * s2))
    return f


def exact_u(h5, t):
    """amp (s0^2/s^2)^(3/2) prod_a g_a(x_a), s^2 = s0^2 + 2 kappa t, on the
    cell centres of /grid, shaped like a frame [nz, ny, nx]."""
    p = params_of(h5)
    s0, kappa, amp = p["sigma"], p["kappa"], p.get("amplitude", 1.0)
    s2 = s0 * s0 + 2 * kappa * t
    factors = []
    for axis, key in (("z", "lz"), ("y", "ly"), ("x", "lx")):
        length = p[key]
        factors.append(gaussian_1d(h5[axis][()], 0.5 * length, length, s2, p["boundary"]))
    gz, gy, gx = factors
    return amp * (s0 * s0 / s2) ** 1.5 * gz[:, None, None] * gy[None, :, None] * gx[None, None, :]


def cell_volume(h5):
    a = h5["grid"].attrs
    return float(a["dx"]) * float(a["dy"]) * float(a["dz"])


def l2_norm(values, dv):
    return math.sqrt(float(np.sum(values * values)) * dv)


def file_l2_norm(h5):
    """/diagnostics/l2_error, a root mean square over the domain, as the L2
    norm it is proportional to (times the square root of the volume)."""
    volume = cell_volume(h5) * h5["u"][0].size
    return h5["diagnostics/l2_error"][()] * math.sqrt(volume)


def truncation_bound(h5, dt, sim_time):
    """A bound on the L2 error at sim_time, from the scheme's local
    truncation error. Explicit Euler with the 7-point Laplacian has
        tau = dt/2 kappa^2 lap^2 u - kappa sum_a dx_a^2/12 d^4u/dx_a^4 + O(dt^2, dx^4),
    and the error obeys e(n+1) = (I + dt kappa L_h) e(n) + dt tau(n) with
    ||I + dt kappa L_h||_2 <= 1 under the stability limit, so ||e(T)|| <=
    int_0^T ||tau(t)|| dt <= T ||tau(0)||: tau is made of derivatives of a
    heat-equation solution, themselves solutions, whose L2 norm never grows.
    For the Gaussian, d^2/dx^2 and d^4/dx^4 are He2(q) u / s^2 and He4(q) u
    / s^4 (q = (x - c) / s, probabilists' Hermite polynomials); the images
    of the boundary are exp(-12.5) or less and left out. 10% margin for the
    higher-order terms ((dx/s)^2 ~ 0.02 here)."""
    p = params_of(h5)
    s, kappa, amp = p["sigma"], p["kappa"], p.get("amplitude", 1.0)
    q = [(h5[a][()] - 0.5 * p["l" + a]) / s for a in ("z", "y", "x")]
    Z, Y, X = np.meshgrid(*q, indexing="ij")
    u0 = amp * np.exp(-(X * X + Y * Y + Z * Z) / 2)

    def he2(v):
        return v * v - 1

    def he4(v):
        return v ** 4 - 6 * v * v + 3

    d4 = {a: he4(v) * u0 / s ** 4 for a, v in (("x", X), ("y", Y), ("z", Z))}
    lap2 = sum(d4.values()) + 2 * (he2(X) * he2(Y) + he2(X) * he2(Z) + he2(Y) * he2(Z)) * u0 / s ** 4
    spacing = {a: float(h5["grid"].attrs["d" + a]) for a in ("x", "y", "z")}
    space = kappa * sum(spacing[a] ** 2 / 12 * d4[a] for a in d4)
    tau = dt / 2 * kappa ** 2 * lap2 - space
    return 1.1 * sim_time * l2_norm(tau, cell_volume(h5))


def stable_dt(kappa, d):
    return 0.5 / (kappa * sum(1 / (h * h) for h in d))


def steps_of(h5):
    return int(h5["performance/steps"][()])


def status(path):
    with h5py.File(path, "r") as f:
        return sc.as_str(f.attrs["status"])


class Diffusion(sc.StrataTestCase):
    """Runs the example input once (1 rank); tests read it or run their own."""

    @classmethod
    def setUpClass(cls):
        sc.check_binary()
        cls.shared = sc.make_tmpdir("diffusion-example")
        cls.example_out = os.path.join(cls.shared, "example.h5")
        cls.example = sc.run_strata(["run", EXAMPLE, "-o", cls.example_out], cls.shared)

    @classmethod
    def tearDownClass(cls):
        sc.remove_tmpdir(cls.shared)

    # --- helpers --------------------------------------------------------------

    def example_file(self):
        if self.example.returncode != 0:
            self.fail(f"the example run failed:{self.example.describe()}")
        f = h5py.File(self.example_out, "r")
        self.addCleanup(f.close)
        return f

    def assertSeriesBitwise(self, ref, other, what):
        """Every field, /time and /diagnostics dataset of two files, bit for bit."""
        ref_series, other_series = sc.grid_series(ref), sc.grid_series(other)
        self.assertEqual(sorted(ref_series), sorted(other_series), f"{what}: series")
        for name, ds in ref_series.items():
            a, b = ds[()], other_series[name][()]
            self.assertEqual(a.shape, b.shape, f"{what}: /{name} shape")
            if a.tobytes() != b.tobytes():
                diff = np.abs(a - b)
                self.fail(f"{what}: /{name} differs in {int(np.count_nonzero(a != b))} "
                          f"values (max |diff| {np.nanmax(diff):.3e})")

    # --- accuracy ---------------------------------------------------------------

    def test_example_matches_the_analytic_gaussian(self):
        f = self.example_file()
        self.assertEqual(sc.as_str(f.attrs["status"]), "complete")
        self.assertEqual(sc.as_str(f.attrs["model"]), "diffusion")
        dv = cell_volume(f)
        times = f["time"][()]
        np.testing.assert_array_equal(times, f["diagnostics/time"][()])
        self.assertEqual(times[0], 0.0)
        self.assertEqual(times[-1], params_of(f)["sim_time"], "the last frame is at sim_time exactly")
        self.assertEqual(f["u"].shape, (len(times), 64, 64, 64))
        file_l2 = file_l2_norm(f)
        mine = []
        for i, t in enumerate(times):
            exact = exact_u(f, t)
            err = f["u"][i] - exact
            mine.append(l2_norm(err, dv))
            # The model evaluates the same formula with its own exp(): they
            # may differ by an ulp of u per cell, eps |u| in the norm.
            tol = 1e-9 * file_l2[i] + 4 * EPS64 * l2_norm(exact, dv)
            self.assertLessEqual(abs(mine[-1] - file_l2[i]), tol,
                                 f"t = {t}: /diagnostics/l2_error {file_l2[i]:.17g}, numpy {mine[-1]:.17g}")
        p = params_of(f)
        d = [float(f["grid"].attrs[k]) for k in ("dx", "dy", "dz")]
        dt = 0.9 * stable_dt(p["kappa"], d)
        bound = truncation_bound(f, dt, times[-1])
        self.assertLess(mine[-1], bound, f"L2 error {mine[-1]:.3e} above the truncation bound {bound:.3e}")
        # The bound is a bound, not a guess: it should not be slack by orders.
        self.assertGreater(mine[-1], bound / 20, f"L2 error {mine[-1]:.3e} suspiciously far below {bound:.3e}")
        print(f"\n  example 64^3: L2 error {mine[-1]:.3e} (bound {bound:.3e})", file=sys.stderr)

    def test_second_order_convergence(self):
        errors = []
        for n in (24, 48, 96):
            name = f"n{n}.h5"
            self.run_ok(EXAMPLE, "-o", name, "--set", f"diffusion.nx={n}", "--set", f"diffusion.ny={n}",
                        "--set", f"diffusion.nz={n}", "--set", "diffusion.sim_time=0.1",
                        "--set", "diffusion.output_interval=0")
            f = self.open(name)
            t = f["time"][-1]
            self.assertEqual(t, 0.1)
            err = l2_norm(f["u"][-1] - exact_u(f, t), cell_volume(f))
            self.assertAlmostEqual(err / file_l2_norm(f)[-1], 1.0, delta=1e-9)
            errors.append(err)
        orders = [math.log2(errors[i] / errors[i + 1]) for i in range(2)]
        print(f"\n  L2 errors {', '.join(f'{e:.3e}' for e in errors)}; orders {orders[0]:.3f}, {orders[1]:.3f}",
              file=sys.stderr)
        for order in orders:
            self.assertGreaterEqual(order, 1.9, f"errors {errors}")
            self.assertLessEqual(order, 2.1, f"errors {errors}")

    # --- reproducibility ----------------------------------------------------------

    def test_bitwise_identical_for_any_decomposition(self):
        self.write("in.toml", small_input())
        self.run_ok("in.toml", "-o", "np1.h5")
        ref = self.open("np1.h5")
        self.assertEqual(sc.str_list(ref["grid"].attrs["decomposition"]), ["1", "1", "1"])
        cases = [(2, None), (3, None), (4, None), (6, None),
                 (6, [3, 2, 1]), (4, [1, 4, 1]), (4, [1, 1, 4])]
        for ranks, decomposition in cases:
            with self.subTest(ranks=ranks, decomposition=decomposition):
                name = f"np{ranks}_{'auto' if decomposition is None else ''.join(map(str, decomposition))}.h5"
                args = ["in.toml", "-o", name]
                if decomposition is not None:
                    args += ["--set", f"diffusion.decomposition=[{','.join(map(str, decomposition))}]"]
                self.run_ok(*args, ranks=ranks)
                other = self.open(name)
                ranks_per_axis = [int(v) for v in sc.str_list(other["grid"].attrs["decomposition"])]
                self.assertEqual(math.prod(ranks_per_axis), ranks)
                if decomposition is not None:
                    self.assertEqual(ranks_per_axis, decomposition)
                self.assertSeriesBitwise(ref, other, f"{ranks} ranks, decomposition {ranks_per_axis}")
                sc.check_xdmf(self.path(name[:-3] + ".xmf"))
        # Walls: the boundary fill runs on ranks with a physical face only.
        self.write("wall.toml", small_input(boundary="wall"))
        self.run_ok("wall.toml", "-o", "wall1.h5")
        self.run_ok("wall.toml", "-o", "wall6.h5", "--set", "diffusion.decomposition=[3,2,1]", ranks=6)
        self.assertSeriesBitwise(self.open("wall1.h5"), self.open("wall6.h5"), "walls, 6 ranks [3, 2, 1]")

    def test_fp32_agrees_with_fp64_within_round_off(self):
        f64 = self.example_file()
        self.run_ok(EXAMPLE, "-o", "fp32.h5", "--precision", "fp32")
        f32 = self.open("fp32.h5")
        self.assertEqual(sc.as_str(f32.attrs["precision"]), "fp32")
        steps = steps_of(f32)
        self.assertEqual(steps, steps_of(f64))
        u_max = float(np.max(np.abs(f64["u"][0])))
        # Initial values rounded to fp32 (eps/2), then at most 5.5 eps max|u|
        # per step (UPDATE_ROUND_OFF), never amplified; plus the fp32
        # coefficients kappa dt / dx^2 (a relative eps/2 each), which change
        # one step by at most 3 x eps/2 x (4 max|u| x c) < 2 eps max|u|.
        tol = (0.5 + (UPDATE_ROUND_OFF + 2) * steps) * EPS32 * u_max
        diff = float(np.max(np.abs(f32["u"][()] - f64["u"][()])))
        print(f"\n  fp32 vs fp64 after {steps} steps: max |diff| {diff:.3e} (bound {tol:.3e})", file=sys.stderr)
        self.assertLessEqual(diff, tol)
        # And fp32 is really fp32: the difference is round-off, not zero.
        self.assertGreater(diff, 0.0)
        # The fp32 run is as accurate as the scheme: its RMS error is the
        # fp64 one plus at most the round-off above.
        err64, err32 = f64["diagnostics/l2_error"][-1], f32["diagnostics/l2_error"][-1]
        self.assertLessEqual(abs(err32 - err64), tol)

    def test_heat_is_conserved_to_round_off(self):
        for boundary in ("periodic", "wall"):
            with self.subTest(boundary=boundary):
                name = f"heat_{boundary}.h5"
                self.write("in.toml", small_input(n=(32, 32, 32), length=(1.0, 1.0, 1.0), boundary=boundary,
                                                  sim_time=1.0, output_interval=0.25))
                self.run_ok("in.toml", "-o", name)
                f = self.open(name)
                heat = f["diagnostics/heat"][()]
                dv = cell_volume(f)
                # The diagnostic is the integral of the stored field (an exact
                # sum in the model; numpy's pairwise sum is within n eps).
                for i in range(len(heat)):
                    u = f["u"][i]
                    self.assertLessEqual(abs(float(np.sum(u)) * dv - heat[i]),
                                         u.size * EPS64 * float(np.sum(np.abs(u))) * dv)
                # Each cell update adds at most 5.5 eps max|u| of round-off
                # (UPDATE_ROUND_OFF); the scheme itself moves heat between
                # cells only (periodic images, or mirrored halos at walls:
                # zero flux through every face).
                steps = steps_of(f)
                cells = f["u"][0].size
                u_max = float(f["diagnostics/u_max"][0])
                bound = steps * cells * UPDATE_ROUND_OFF * EPS64 * u_max * dv / heat[0]
                change = abs(heat[-1] - heat[0]) / heat[0]
                print(f"\n  heat {boundary}: relative change {change:.2e} over {steps} steps "
                      f"(round-off bound {bound:.2e})", file=sys.stderr)
                self.assertLessEqual(change, bound)
                # The heat is also the Gaussian's integral (2 pi)^(3/2) sigma^3
                # (tails beyond the box are mirrored or wrapped back in).
                self.assertAlmostEqual(heat[0] / ((2 * math.pi) ** 1.5 * 0.1 ** 3), 1.0, delta=1e-6)

    # --- restart -------------------------------------------------------------------

    def test_stop_and_restart_on_other_rank_counts_is_bitwise(self):
        # Walls; 27 steps of 0.0375 s, a frame every 0.1 s, a checkpoint every
        # 5 steps (an odd step: the double buffer has swapped an odd number of
        # times when the first one is written).
        self.write("in.toml", small_input(boundary="wall", sim_time=1.0, output_interval=0.1,
                                          extra="\n[checkpoint]\nevery_steps = 5\nevery_seconds = 0\nkeep = 2\n"))
        self.run_ok("in.toml", "-o", "ref.h5")
        ref = self.open("ref.h5")
        steps = steps_of(ref)

        # 2 ranks, held after the first checkpoint (step 5) until SIGTERM
        # reaches every rank.
        cmd = sc.strata_command(["run", "in.toml"], 2)
        proc = subprocess.Popen(cmd, cwd=self.tmp, env=sc.child_env(sc.hold_at(5)),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        chk = self.path("out", "run.chk")
        sc.wait_for_path(self, proc, os.path.join(chk, sc.checkpoint_name(5)))
        ranks = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        self.assertEqual(len(ranks), 2, "mpirun's children")
        for pid in ranks:
            os.kill(int(pid), signal.SIGTERM)
        res = sc.finish(self, proc)
        self.assertExit(res, 75)
        self.assertEqual(sc.stop_line(res.stdout)["step"], 5, res.describe())
        self.assertEqual(status(self.path("out/run.h5")), "stopped: checkpointed")
        with h5py.File(self.path("out/run.h5"), "r") as f:
            stopped_frames = len(f["time"])
        self.assertLess(stopped_frames, len(ref["time"]), "the run was stopped before its end")

        # Continue on 3 ranks.
        res = self.run_ok("in.toml", "--restart", ranks=3)
        self.assertInOutput("restarted from", res.stdout, res, "stdout")
        self.assertEqual(status(self.path("out/run.h5")), "complete")
        with h5py.File(self.path("out/run.h5"), "r") as f:
            self.assertSeriesBitwise(ref, f, "stopped on 2 ranks, restarted on 3")
            times = f["time"][()]
            self.assertTrue(np.all(np.diff(times) > 0), f"duplicated or unordered frames: {times}")
        self.assertEqual(sc.check_xdmf(self.path("out/run.xmf")), len(ref["time"]))

        # Again from the older of the two checkpoints kept, on 4 ranks: the
        # frames and diagnostic rows written after it are replaced, not appended.
        older = sorted(n for n in os.listdir(chk) if n.endswith(".h5"))[0]
        step = int(re.search(r"(\d+)\.h5$", older).group(1))
        self.assertLess(step, steps)
        res = self.run_ok("in.toml", "--restart", os.path.join("out", "run.chk", older), ranks=4)
        self.assertInOutput(f"step {step} of {steps}", res.stdout, res, "stdout")
        with h5py.File(self.path("out/run.h5"), "r") as f:
            self.assertSeriesBitwise(ref, f, f"restarted again from step {step} on 4 ranks")
        self.assertEqual(sc.check_xdmf(self.path("out/run.xmf")), len(ref["time"]))

    # --- errors ---------------------------------------------------------------------

    def expect_input_error(self, args, fragments, ranks=None):
        res = self.strata(*args, ranks=ranks)
        self.assertExit(res, 2)
        for fragment in fragments:
            self.assertInOutput(fragment, res.stderr, res)
        self.assertFalse(os.path.exists(self.path("out", "run.h5")), "nothing is written on an input error")
        return res

    def test_unstable_dt_is_an_input_error_naming_the_limit(self):
        # 20 x 18 x 16 cells of 0.05 m, kappa 0.01: the limit is
        # 0.5 / (kappa x 3 / 0.05^2) = 0.041667 s.
        limit = stable_dt(0.01, (0.05, 0.05, 0.05))
        self.write("in.toml", small_input())
        res = self.expect_input_error(["run", "in.toml", "--set", "diffusion.dt=0.05"],
                                      ["--set diffusion.dt=0.05", "diffusion.dt", "largest stable dt"])
        said = float(re.search(r"largest stable dt[^0-9]*([0-9.eE+-]+) s", res.stderr).group(1))
        self.assertAlmostEqual(said / limit, 1.0, delta=1e-5, msg=res.stderr)
        # In the file: the message names the file and the line.
        self.write("bad.toml", small_input(extra="dt = 0.05\n"))
        line = small_input(extra="dt = 0.05\n").splitlines().index("dt = 0.05") + 1
        self.expect_input_error(["run", "bad.toml"], [f"bad.toml:{line}", "diffusion.dt", f"{limit:.6g} s"])
        # Just below the limit is accepted.
        self.run_ok("in.toml", "-o", "at_limit.h5", "--set", f"diffusion.dt={limit * (1 - 1e-9)!r}")

    def test_decomposition_must_match_the_ranks(self):
        self.write("in.toml", small_input())
        self.expect_input_error(["run", "in.toml", "--set", "diffusion.decomposition=[3,2,1]"],
                                ["diffusion.decomposition", "6 ranks", "has 2"], ranks=2)
        self.expect_input_error(["run", "in.toml", "--set", "diffusion.decomposition=[2,2]"],
                                ["diffusion.decomposition"])

    def test_nan_fails_the_run_with_exit_3(self):
        self.write("in.toml", small_input(extra="\n[health]\nevery_steps = 4\n"))
        res = self.strata("run", "in.toml", env={"STRATA_TEST_INJECT_NAN": "3:1"}, ranks=2)
        self.assertExit(res, 3)
        self.assertInOutput("non-finite", res.stderr, res)
        self.assertInOutput("field u ", res.stderr, res)
        self.assertInOutput("step 4", res.stderr, res)
        text = status(self.path("out/run.h5"))
        self.assertTrue(text.startswith("failed:"), text)
        with h5py.File(self.path("out/run.h5"), "r") as f:
            # The file stays readable, with the rows written before the
            # failure (t = 0 and the frame after step 3, t = 0.1125 s) and
            # one more of the state at the failing step (docs/contract.md: the run
            # writes its diagnostics), NaN and all, for the post-mortem.
            np.testing.assert_array_equal(f["diagnostics/time"][()], f["time"][()])
            self.assertEqual(len(f["diagnostics/time"]), 3)
            self.assertTrue(np.all(np.isfinite(f["diagnostics/heat"][:2])))
            self.assertTrue(np.isnan(f["diagnostics/heat"][2]))
            self.assertTrue(np.isnan(f["u"][2]).any())
            self.assertGreater(f["diagnostics/time"][2], f["diagnostics/time"][1])

    # --- the XDMF sidecar and the plots -------------------------------------------------

    def test_xdmf_opens_like_a_reader_would(self):
        self.example_file()
        xmf = self.example_out[:-3] + ".xmf"
        frames = sc.check_xdmf(xmf)
        with h5py.File(self.example_out, "r") as f:
            self.assertEqual(frames, len(f["time"]))
        # The checker notices what a reader would trip over.
        tree = ET.parse(xmf)
        item = [i for i in tree.getroot().iter("DataItem") if i.get("Format") == "HDF"
                and i.text.strip().endswith("/xdmf/frame1/u")][0]
        item.text = item.text.replace("/xdmf/frame1/u", "/xdmf/frame0/u")   # frame 1's grid reading frame 0
        broken = self.path("broken.xmf")
        tree.write(broken)
        os.symlink(self.example_out, self.path(os.path.basename(self.example_out)))
        with self.assertRaisesRegex(AssertionError, "does not hold frame 1"):
            sc.check_xdmf(broken)

    def test_plot_script_writes_frames_and_a_gif(self):
        self.example_file()
        res = sc.run_command([sc.PYTHON, FIELDS_PY, self.example_out, "--field", "u",
                              "--frames", "0,-1", "--out", self.path("plots"), "--gif"], self.tmp)
        self.assertExit(res, 0)
        pngs = sc.files_under(self.path("plots"), ".png")
        self.assertEqual(pngs, ["example_u_0000.png", "example_u_0005.png"], res.describe())
        gif = self.path("plots", "example_u.gif")
        for name in pngs:
            with open(self.path("plots", name), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", name)
            self.assertGreater(os.path.getsize(self.path("plots", name)), 5000, name)
        try:
            import PIL  # noqa: F401
        except ImportError:
            self.assertInOutput("no GIF", res.stderr, res)
        else:
            with open(gif, "rb") as f:
                self.assertEqual(f.read(6), b"GIF89a")
            self.assertGreater(os.path.getsize(gif), 5000)
        # A slice by coordinate and a bad field name.
        res = sc.run_command([sc.PYTHON, FIELDS_PY, self.example_out, "--field", "u", "--frames", "-1",
                              "--slice", "y=0.25", "--out", self.path("cut")], self.tmp)
        self.assertExit(res, 0)
        self.assertEqual(sc.files_under(self.path("cut"), ".png"), ["example_u_0005.png"])
        res = sc.run_command([sc.PYTHON, FIELDS_PY, self.example_out, "--field", "h"], self.tmp)
        self.assertNotEqual(res.returncode, 0)
        self.assertInOutput("no field 'h'", res.stderr, res)


if __name__ == "__main__":
    sc.main()
