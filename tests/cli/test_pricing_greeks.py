#!/usr/bin/env python3
"""End to end: the Greeks of inputs/pricing/greeks.toml (pricing.greeks).

Each Greek with a closed form (Black-Scholes delta, gamma, vega, rho, theta;
the digital's delta; the Heston call's vega_v0 by a difference of the
semi-analytic price) must lie within 4 of its standard errors of the
<greek>_reference strata writes, in fp64 and in fp32. Independently of those formulas, every
Greek of every instrument with a closed-form price (digital, barrier,
geometric Asian, lookback, geometric basket per asset, Heston's vega_theta
and vega_xi too) is checked
within 4 standard errors against central finite differences of the
reference_price that strata writes for inputs bumped with --set (step
1e-3 relative: its truncation error is below 1e-6 of each Greek, far below
the standard errors of 2^16 paths, 0.3% to 3%; its rounding error is
combined with the standard error; a wrong coefficient, sign, bump or
pathwise derivative moves a Greek by more). The floating lookback's gamma
is 0 (its price is homogeneous in S), which the scenarios reproduce to
round-off: in fp32 as in fp64, within the estimator's rounding bound.

Then the shapes: per-asset datasets on baskets, vega_v0/vega_theta/vega_xi
on Heston, the summary's columns; the same bits on 1, 2 and 3 ranks with
Philox and Sobol' and after a checkpoint restart; a bad Greek name exits 2.
"""

import math
import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

BOOK = os.path.join(sc.SOURCE_DIR, "inputs", "pricing", "greeks.toml")
PATHS = 1 << 16
GREEKS = ["delta", "gamma", "vega", "rho", "theta"]
ASSETS = ["A", "B1", "B2", "B3", "H"]    # the input's asset order
SPOT = {"A": 100.0, "B1": 100.0, "B2": 90.0, "B3": 110.0, "H": 100.0}
VOL = {"A": 0.25, "B1": 0.2, "B2": 0.3, "B3": 0.25}
HESTON = {"v0": 0.04, "theta": 0.04, "xi": 0.5}
INSTRUMENTS = 10
REL = 1e-3
CLOSED_FORM = {"call": GREEKS, "put": GREEKS, "digital": ["delta"], "heston_call": ["vega_v0"]}
# Instruments with a reference_price, and the basket with one per asset.
WITH_REFERENCE = ["call", "put", "digital", "barrier", "asian_geo", "lookback", "heston_call"]


def read_all(path):
    """{instrument: {dataset: value}} of every /pricing/<name>/ dataset."""
    with h5py.File(path, "r") as f:
        return sc.pricing_results(f)


def all_bits(results):
    return {name: {k: [sc.bits(x) for x in (v.flat if hasattr(v, "flat") else [v])]
                   for k, v in sorted(r.items())} for name, r in results.items()}


class Greeks(sc.PricingBook):
    BOOK = BOOK
    ARGS = ["--set", f"pricing.paths={PATHS}"]
    RUNS = [("np1", None, []), ("fp32", None, ["--precision", "fp32"])]

    @classmethod
    def reference_price(cls, *sets):
        """reference_price of every instrument with the inputs set as given."""
        args = ["run", BOOK, "--set", "pricing.paths=1", "--set", "pricing.greeks=[]", "--overwrite",
                "-o", os.path.join(cls.tmp, "ref.h5")]
        for s in sets:
            args += ["--set", s]
        res = sc.run_strata(args, cls.tmp)
        if res.returncode != 0:
            raise AssertionError("reference run failed:" + res.describe())
        return {n: r.get("reference_price") for n, r in read_all(os.path.join(cls.tmp, "ref.h5")).items()}

    @classmethod
    def finite_differences(cls):
        """{(instrument, greek, asset or None): value} by central differences
        of the closed-form prices. Each bump moves inputs that no instrument
        shares (A, B1 and H together), so one pair of runs serves several."""
        base = cls.reference_price()
        out = {}

        def central(sets_up, sets_down, keys_by_h, sign=1.0, gamma=False):
            """keys_by_h: [(h, [(instrument, greek, asset or None)])] read off one pair of runs.
            Each value comes with its rounding error: the prices are good to
            ~1e-10 relative (Heston's quadrature; Black-Scholes to 1e-15)."""
            up, down = cls.reference_price(*sets_up), cls.reference_price(*sets_down)
            for h, keys in keys_by_h:
                for name, greek, asset in keys:
                    err = 1e-10 * abs(base[name])
                    out[(name, greek, asset)] = (sign * (up[name] - down[name]) / (2 * h), err / h)
                    if gamma:
                        out[(name, "gamma", asset)] = ((up[name] - 2 * base[name] + down[name]) / (h * h),
                                                       4 * err / (h * h))

        def asset_set(asset, key, value):
            return f"pricing.asset.{ASSETS.index(asset)}.{key}={value!r}"

        def on(asset, greek):
            """The instruments with a closed-form price on `asset`."""
            if asset == "A":
                return [(n, greek, None) for n in WITH_REFERENCE if n != "heston_call"]
            if asset == "H":
                return [("heston_call", greek, None)]
            return [("basket_geo", greek, asset)]

        for group in (["A", "B1", "H"], ["B2"], ["B3"]):
            h = {a: REL * SPOT[a] for a in group}
            central([asset_set(a, "spot", SPOT[a] + h[a]) for a in group],
                    [asset_set(a, "spot", SPOT[a] - h[a]) for a in group],
                    [(h[a], on(a, "delta")) for a in group], gamma=True)
        for group in (["A", "B1"], ["B2"], ["B3"]):
            h = {a: REL * VOL[a] for a in group}
            central([asset_set(a, "vol", VOL[a] + h[a]) for a in group],
                    [asset_set(a, "vol", VOL[a] - h[a]) for a in group],
                    [(h[a], on(a, "vega")) for a in group])
        for param, value in HESTON.items():
            h = REL * value
            central([asset_set("H", param, value + h)], [asset_set("H", param, value - h)],
                    [(h, on("H", "vega_" + param))])
        h = 1e-4
        central([f"pricing.rate={0.05 + h!r}"], [f"pricing.rate={0.05 - h!r}"],
                [(h, [(n, "rho", None) for n in WITH_REFERENCE + ["basket_geo"]])])
        # theta = dV/dt = -dV/dT; every maturity moves by h.
        maturity = {i: (0.5 if i == 1 else 1.0) for i in range(INSTRUMENTS)}
        h = 1e-3
        central([f"pricing.instrument.{i}.maturity={t + h!r}" for i, t in maturity.items()],
                [f"pricing.instrument.{i}.maturity={t - h!r}" for i, t in maturity.items()],
                [(h, [(n, "theta", None) for n in WITH_REFERENCE + ["basket_geo"]])], sign=-1.0)
        return out

    def test_closed_form_greeks_within_4_standard_errors(self):
        """fp64, and fp32, where a 1% bump moves ln S by 2e4 float ulps."""
        for tag in ("np1", "fp32"):
            self.check_closed_forms(tag)

    def check_closed_forms(self, tag):
        got = self.results(tag)
        for name, greeks in CLOSED_FORM.items():
            for g in greeks:
                with self.subTest(f"{tag} {name} {g}"):
                    r = got[name]
                    self.assertIn(g + "_reference", r)
                    z = (r[g] - r[g + "_reference"]) / r[g + "_stderr"]
                    self.assertLess(abs(z), 4.0, f"{name} {g}: {r[g]} vs {r[g + '_reference']} ({z:+.2f} se)")

    @staticmethod
    def gamma_rounding_bound(price):
        """The lookback gamma's rounding bound (docs/validation.md, "Rounding of
        the Greeks"): its three payoffs are valued in double on one path, each
        off by at most (2 + |ln S|) u of S_T and of min S (|ln S| < 6) and 5 u
        of the payoff P, u = 2^-53; sum |a_c| = 4 / h^2 with h = 1% of S0.
        Over the paths S_T + min S < 1.05 S0 (e^{(r - q) T} + 1) (the bump up
        moves them by 1%, the mean of 2^16 samples of S_T is within 0.1%)."""
        s0, r, q, t = SPOT["A"], 0.05, 0.02, 1.0
        h = 0.01 * s0
        scale = 1.05 * s0 * (math.exp((r - q) * t) + 1.0)
        return 4.0 / (h * h) * 2.0 ** -53 * (8.0 * scale + 5.0 * 1.05 * price)

    def test_fp32_lookback_gamma_agrees_with_fp64(self):
        """Its gamma is 0, so each run's value is rounding alone: within its
        rounding bound (plus 4 standard errors of the rounding's spread) in
        either precision, and within 4 combined standard errors plus both
        bounds of each other. Bumps re-simulated from fl(ln(S0 +- h)) made
        the fp32 gamma -3e-6 with a standard error of 8e-8."""
        got = {tag: self.results(tag)["lookback"] for tag in ("np1", "fp32")}
        bound = {tag: self.gamma_rounding_bound(r["price"]) for tag, r in got.items()}
        for tag, r in got.items():
            with self.subTest(tag):
                self.assertLessEqual(abs(r["gamma"]), bound[tag] + 4 * r["gamma_stderr"],
                                     f"{tag}: gamma {r['gamma']} +- {r['gamma_stderr']}, bound {bound[tag]}")
        se = math.hypot(got["np1"]["gamma_stderr"], got["fp32"]["gamma_stderr"])
        diff = got["fp32"]["gamma"] - got["np1"]["gamma"]
        self.assertLessEqual(abs(diff), 4 * se + bound["np1"] + bound["fp32"],
                             f"fp32 - fp64 gamma {diff}, combined stderr {se}")

    def test_greeks_match_differences_of_closed_form_prices(self):
        got = self.results("np1")
        fd = self.finite_differences()
        self.assertGreater(len(fd), 45)
        for (name, greek, asset), (ref, err) in sorted(fd.items(), key=str):
            with self.subTest(f"{name} {greek} {asset}"):
                r = got[name]
                value, se = r[greek], r[greek + "_stderr"]
                if asset is not None:
                    i = ["B1", "B2", "B3"].index(asset)
                    value, se = value[i], se[i]
                z = (value - ref) / (se ** 2 + err ** 2) ** 0.5
                self.assertLess(abs(z), 4.0, f"{name} {greek} {asset}: {value} vs {ref} ({z:+.2f} se)")

    def test_shapes_units_and_summary(self):
        got = self.results("np1")
        with h5py.File(self.runs["np1"][1], "r") as f:
            for name in ("basket", "basket_geo"):
                for g in ("delta", "gamma", "vega"):
                    for suffix in ("", "_stderr"):
                        d = f[f"pricing/{name}/{g}{suffix}"]
                        self.assertEqual(d.shape, (3,), f"{name}/{g}{suffix}")
                        self.assertEqual(sc.str_list(d.attrs["assets"]), ["B1", "B2", "B3"])
                for g in ("rho", "theta"):
                    self.assertEqual(f[f"pricing/{name}/{g}"].shape, ())
            # UDUNITS has no money: the words are in long_name, units only where they are a number.
            self.assertNotIn("units", f["pricing/call/vega"].attrs)
            self.assertEqual(sc.as_str(f["pricing/call/vega"].attrs["long_name"]),
                             "vega in currency per 1.0 of volatility")
            self.assertEqual(sc.as_str(f["pricing/call/theta"].attrs["long_name"]), "theta in currency per year (dV/dt)")
            self.assertEqual(sc.as_str(f["pricing/call/delta"].attrs["units"]), "1")
            # Each Greek's `method` says how it was estimated.
            for name, greek, words in (("call", "delta", "pathwise"), ("basket", "vega", "pathwise"),
                                       ("digital", "delta", "likelihood ratio"),
                                       ("barrier", "delta", "central difference over the spot bumped by moving"),
                                       ("call", "gamma", "second difference over the spot bumped by moving"),
                                       ("call", "rho", "central difference of paths re-simulated"),
                                       ("heston_call", "vega_v0", "central difference of paths re-simulated")):
                with self.subTest(f"{name}/{greek} method"):
                    self.assertIn(words, sc.as_str(f[f"pricing/{name}/{greek}"].attrs["method"]))
            summary = sc.read_table(f["pricing/summary"])
            names = list(summary["name"])
            for g in GREEKS:
                self.assertIn(g, summary)
                self.assertIn(g + "_stderr", summary)
            row = names.index("call")
            self.assertEqual(summary["delta"][row], got["call"]["delta"])
            # Per-asset Greeks are not in the scalar columns.
            self.assertNotEqual(summary["delta"][names.index("basket")], summary["delta"][names.index("basket")])
        for name in ("call", "put", "digital", "barrier", "asian"):
            for g in GREEKS:
                self.assertEqual(got[name][g].shape, (), f"{name}/{g}")
        h = got["heston_call"]
        self.assertNotIn("vega", h)
        for p in ("v0", "theta", "xi"):
            self.assertIn("vega_" + p, h)
            self.assertGreater(h["vega_" + p + "_stderr"], 0.0)
        res = self.runs["np1"][0]
        self.assertIn("vega_v0", res.stdout)
        self.assertIn("diff/se", res.stdout)


class GreeksSameBits(unittest.TestCase):
    """1, 2 and 3 ranks (and other chunks) give the same bits, Philox and
    Sobol' (2 replicates of 3 blocks of points). 12 steps a year keep it short."""

    FAST = ["--set", "pricing.steps_per_year=12"]

    @classmethod
    def setUpClass(cls):
        sc.check_binary()
        cls.tmp = sc.make_tmpdir("greeks_bits")

    @classmethod
    def tearDownClass(cls):
        sc.remove_tmpdir(cls.tmp)

    def check(self, tag, extra):
        bits = {}
        for ranks, more in ((None, []), (2, []), (3, ["--set", "pricing.chunk_paths=20000"])):
            out = os.path.join(self.tmp, f"{tag}_{ranks}.h5")
            res = sc.run_strata(["run", BOOK, "-o", out] + self.FAST + extra + more, self.tmp, ranks=ranks)
            self.assertEqual(res.returncode, 0, res.describe())
            bits[ranks] = all_bits(read_all(out))
        self.assertIn("vega_xi", bits[None]["heston_call"])
        self.assertEqual(bits[2], bits[None], f"{tag}: 2 ranks differ from 1")
        self.assertEqual(bits[3], bits[None], f"{tag}: 3 ranks differ from 1")

    def test_philox(self):
        self.check("philox", ["--set", f"pricing.paths={PATHS}"])

    def test_sobol(self):
        self.check("sobol", ["--set", "pricing.sampler=sobol", "--set", "pricing.replicates=2",
                             "--set", f"pricing.paths={2 * 3 * 16384}"])


class GreeksRestart(sc.StrataTestCase):
    """A run restarted from its first checkpoint on 2 ranks ends with the
    bits of the uninterrupted run, Greeks included."""

    def test_restart_same_bits(self):
        with open(BOOK) as f:
            text = f.read()
        self.write("in.toml", text + "\n[checkpoint]\nevery_steps = 1\nevery_seconds = 0\nkeep = 10\n")
        fast = ["--set", "pricing.steps_per_year=12", "--set", "pricing.paths=65536", "--set",
                "pricing.chunk_paths=16384"]
        self.assertExit(self.strata("run", "in.toml", "-o", "ref.h5", *fast), 0)
        ref = all_bits(read_all(self.path("ref.h5")))
        chk = sorted(os.listdir(self.path("ref.chk")))[0]
        res = self.strata("run", "in.toml", "-o", "ref.h5", *fast, "--restart", os.path.join("ref.chk", chk), ranks=2)
        self.assertExit(res, 0)
        self.assertInOutput("restarted from", res.stdout, res, "stdout")
        self.assertEqual(all_bits(read_all(self.path("ref.h5"))), ref)


class BadGreek(sc.BadPricingInput):
    BASE = """
[run]
model = "pricing"
[pricing]
paths = 1000
greeks = {greeks}
[[pricing.asset]]
name = "A"
spot = 100.0
vol = 0.2
[[pricing.instrument]]
name = "x"
option = "call"
strike = 100.0
maturity = 1.0
assets = ["A"]
"""

    def test_unknown_greek(self):
        self.check_bad("pricing.greeks", ["bad.toml:", '"vanna"', "expected delta, gamma, vega, rho, theta, vega_v0, vega_theta or vega_xi"],
                       greeks='["delta", "vanna"]')

    def test_not_a_list(self):
        self.check_bad("pricing.greeks", ["bad.toml:"], greeks='"delta"')


if __name__ == "__main__":
    unittest.main(verbosity=2)
