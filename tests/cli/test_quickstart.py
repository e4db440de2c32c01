#!/usr/bin/env python3
"""End to end: `strata run inputs/quickstart.toml`, on 1 and on 3 MPI ranks.

Checks the printed price table, the whole HDF5 layout of docs/output.md "Output
files" for the pricing model, the prices against their Black-Scholes
references, and the reproducibility guarantee (bitwise identical results for
any rank count, thread count and chunk size).
"""

import datetime
import os
import re
import shutil
import socket
import sys
import tomllib
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

with open(sc.QUICKSTART, "rb") as _f:
    QUICKSTART_INPUT = tomllib.load(_f)
INSTRUMENTS = [inst["name"] for inst in QUICKSTART_INPUT["pricing"]["instrument"]]

# RFC 3339 profile of ISO 8601: a complete date-time in extended format with
# an explicit UTC offset. ISO 8601 requires a complete representation to be
# either all basic or all extended, so "2026-01-02T03:04:05+0000" (extended
# date and time, basic offset) does not conform, and parsers such as
# Python < 3.11's datetime.fromisoformat reject it.
ISO8601_EXTENDED = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


class Quickstart(unittest.TestCase):
    """Runs the quickstart once on 1 rank and once on 3; tests read the files."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        sc.check_binary()
        cls.tmp = sc.make_tmpdir("quickstart")
        cls.started = datetime.datetime.now(datetime.timezone.utc)
        cls.runs = {}
        for ranks in (1, 3):
            out = os.path.join(cls.tmp, f"np{ranks}.h5")
            res = sc.run_strata(["run", sc.QUICKSTART, "-o", out], cls.tmp,
                                ranks=None if ranks == 1 else ranks)
            cls.runs[ranks] = (res, out)
        cls.finished = datetime.datetime.now(datetime.timezone.utc)
        version = sc.run_strata(["--version"], cls.tmp)
        cls.version_line = version.stdout.strip().splitlines()[0] if version.stdout.strip() else ""
        models = sc.run_strata(["models"], cls.tmp).stdout
        pricing = sc.run_strata(["models", "pricing"], cls.tmp).stdout
        cls.schema = {**sc.schema_keys_from_models(models),
                      **sc.schema_keys_from_models(pricing)}

    @classmethod
    def tearDownClass(cls):
        sc.remove_tmpdir(cls.tmp)

    # --- helpers ----------------------------------------------------------

    def run_ok(self, ranks):
        """The run on `ranks` ranks, asserted to have exited 0; its file open."""
        res, out = self.runs[ranks]
        if res.returncode != 0:
            self.fail(f"quickstart on {ranks} rank(s) failed:{res.describe()}")
        self.assertTrue(os.path.isfile(out), f"no output file {out}:{res.describe()}")
        f = h5py.File(out, "r")
        self.addCleanup(f.close)
        return res, f

    def extra_run(self, name, *args, ranks=None, env=None):
        """Another quickstart run (its own output file) that must exit 0."""
        out = os.path.join(self.tmp, name)
        res = sc.run_strata(["run", sc.QUICKSTART, "-o", out, *args], self.tmp,
                            ranks=ranks, env=env)
        if res.returncode != 0:
            self.fail(f"run failed:{res.describe()}")
        f = h5py.File(out, "r")
        self.addCleanup(f.close)
        return res, f

    def assertBitwiseEqual(self, reference, other, what):
        a, b = sc.result_bits(reference), sc.result_bits(other)
        self.assertEqual(sorted(a), sorted(INSTRUMENTS))
        self.assertEqual(a, b, f"results differ bitwise ({what})")

    # --- the run and its table --------------------------------------------

    def test_exit_and_price_table(self):
        for ranks in (1, 3):
            with self.subTest(ranks=ranks):
                res, _ = self.run_ok(ranks)
                for name in INSTRUMENTS:
                    # One table row per instrument, printed once: rank 0
                    # prints, the other ranks are silent.
                    rows = re.findall(rf"^{re.escape(name)}\s", res.stdout, re.MULTILINE)
                    self.assertEqual(len(rows), 1,
                                     f"instrument {name} should head exactly one "
                                     f"line of the table:{res.describe()}")

    # --- root attributes ----------------------------------------------------

    def test_root_attributes(self):
        for ranks in (1, 3):
            with self.subTest(ranks=ranks):
                _, f = self.run_ok(ranks)
                attrs = f.attrs
                for key in ("strata_version", "git_sha", "model", "precision",
                            "backend", "ranks", "devices", "created", "status"):
                    self.assertIn(key, attrs, f"root attribute {key} missing")
                version = sc.as_str(attrs["strata_version"])
                self.assertTrue(version.strip(), "strata_version is empty")
                numbers = re.search(r"\d+\.\d+\.\d+", self.version_line)
                self.assertIsNotNone(numbers, f"no version in --version: {self.version_line!r}")
                self.assertIn(numbers.group(0), version,
                              "strata_version disagrees with `strata --version`")
                self.assertRegex(sc.as_str(attrs["git_sha"]),
                                 r"^([0-9a-f]{7,40}(-dirty)?|unknown)$")
                self.assertEqual(sc.as_str(attrs["model"]), "pricing")
                self.assertEqual(sc.as_str(attrs["precision"]), "fp64")
                self.assertIn(sc.as_str(attrs["backend"]), ("host", "cuda"))
                self.assertEqual(int(attrs["ranks"]), ranks)
                devices = sc.str_list(attrs["devices"])
                self.assertEqual(len(devices), ranks, f"one device name per rank: {devices}")
                for name in devices:
                    self.assertTrue(name.strip(), f"empty device name in {devices}")
                # One machine here: every rank names the same host, this one.
                self.assertEqual(sc.str_list(attrs["hosts"]), [socket.gethostname()] * ranks)
                self.assertEqual(sc.as_str(attrs["status"]), "complete")

    def test_created_is_iso8601(self):
        for ranks in (1, 3):
            with self.subTest(ranks=ranks):
                _, f = self.run_ok(ranks)
                created = sc.as_str(f.attrs["created"])
                self.assertRegex(created, ISO8601_EXTENDED,
                                 "created is not an ISO 8601 (extended format, "
                                 "with offset) date-time")
                when = datetime.datetime.fromisoformat(created.replace("Z", "+00:00"))
                self.assertIsNotNone(when.tzinfo, "created has no UTC offset")
                slack = datetime.timedelta(seconds=5)  # whole-second stamps
                self.assertTrue(self.started - slack <= when <= self.finished + slack,
                                f"created {created} is not the time of the run")

    # --- /config ----------------------------------------------------------

    def test_config_is_the_resolved_input(self):
        expected_minimum = {
            "[run]": ["model", "precision", "backend", "seed", "output"],
            "[pricing]": ["paths", "antithetic", "sampler", "rate", "chunk_paths"],
            "[[pricing.asset]]": ["name", "spot", "dividend", "model", "vol"],
            "[[pricing.instrument]]": ["name", "type", "option", "strike",
                                       "maturity", "assets"],
        }
        for ranks in (1, 3):
            with self.subTest(ranks=ranks):
                _, f = self.run_ok(ranks)
                text = sc.read_config_text(f)
                try:
                    cfg = tomllib.loads(text)
                except tomllib.TOMLDecodeError as err:
                    self.fail(f"/config is not TOML ({err}):\n{text}")
                tables = {
                    "[run]": [cfg.get("run", {})],
                    "[pricing]": [cfg.get("pricing", {})],
                    "[[pricing.asset]]": cfg.get("pricing", {}).get("asset", []),
                    "[[pricing.instrument]]": cfg.get("pricing", {}).get("instrument", []),
                }
                for section, minimum in expected_minimum.items():
                    keys = set(minimum) | set(self.schema.get(section, []))
                    self.assertTrue(tables[section], f"{section} missing from /config")
                    for table in tables[section]:
                        self.assertLessEqual(keys, set(table),
                                             f"{section} in /config lacks keys")
                # Defaults resolved, the file's values kept, -o applied.
                self.assertEqual(cfg["pricing"]["chunk_paths"], 0)
                self.assertEqual(cfg["run"]["seed"], 42)
                self.assertEqual(cfg["run"]["output"], self.runs[ranks][1])
                expected = {"run": dict(QUICKSTART_INPUT["run"]),
                            "pricing": QUICKSTART_INPUT["pricing"]}
                expected["run"]["output"] = self.runs[ranks][1]
                self.assertInputIn(expected, cfg, "")

    def assertInputIn(self, given, resolved, where):
        """Every value of the input file is in the resolved config, unchanged."""
        if isinstance(given, dict):
            self.assertIsInstance(resolved, dict, where)
            for key, value in given.items():
                self.assertIn(key, resolved, f"{where}{key} missing from /config")
                self.assertInputIn(value, resolved[key], f"{where}{key}.")
        elif isinstance(given, list):
            self.assertIsInstance(resolved, list, where)
            self.assertEqual(len(given), len(resolved), where)
            for i, (g, r) in enumerate(zip(given, resolved)):
                self.assertInputIn(g, r, f"{where}{i}.")
        else:
            self.assertEqual(type(given), type(resolved), f"type of {where.rstrip('.')}")
            self.assertEqual(given, resolved, where.rstrip("."))

    # --- /timers and /performance -------------------------------------------

    def test_timers(self):
        for ranks in (1, 3):
            with self.subTest(ranks=ranks):
                _, f = self.run_ok(ranks)
                timers = f["timers"]
                for field in ("phase", "min", "avg", "max"):
                    self.assertIn(field, timers, f"/timers has no column {field}")
                table = sc.read_table(timers)
                phases = list(table["phase"])
                self.assertGreater(len(phases), 0, "/timers is empty")
                self.assertEqual(len(set(phases)), len(phases), f"duplicate phases {phases}")
                for k, phase in enumerate(phases):
                    lo, avg, hi = float(table["min"][k]), float(table["avg"][k]), float(table["max"][k])
                    self.assertTrue(phase, "a timer phase has no name")
                    for v in (lo, avg, hi):
                        self.assertTrue(np.isfinite(v) and v >= 0, f"{phase}: {v}")
                    # An average of values in [min, max] computed in floating
                    # point can round past them by an ulp or so.
                    ulps = 4 * np.finfo(float).eps * hi
                    self.assertLessEqual(lo, avg + ulps, f"phase {phase}: min > avg")
                    self.assertLessEqual(avg, hi + ulps, f"phase {phase}: avg > max")

    def test_performance(self):
        for ranks in (1, 3):
            with self.subTest(ranks=ranks):
                _, f = self.run_ok(ranks)
                perf = f["performance"]
                self.assertIn("option_paths_per_second", perf)
                # Scalars, and one group: /performance/shape, the counts of
                # what the run asked of its device (test_shape_counts).
                self.assertEqual([k for k, v in perf.items() if isinstance(v, h5py.Group)],
                                 ["shape"])
                for key, ds in perf.items():
                    if key == "shape":
                        continue
                    self.assertIsInstance(ds, h5py.Dataset, key)
                    value = float(ds[()])
                    self.assertTrue(np.isfinite(value) and value >= 0,
                                    f"/performance/{key} = {value}")
                self.assertGreater(float(perf["option_paths_per_second"][()]), 0)

    # --- /pricing ---------------------------------------------------------

    def test_pricing_groups(self):
        paths = QUICKSTART_INPUT["pricing"]["paths"]
        for ranks in (1, 3):
            with self.subTest(ranks=ranks):
                _, f = self.run_ok(ranks)
                results = sc.pricing_results(f)
                self.assertEqual(sorted(results), sorted(INSTRUMENTS))
                for name in INSTRUMENTS:
                    r = results[name]
                    for key in sc.PRICING_DATASETS + ("reference_price",):
                        self.assertIn(key, r, f"/pricing/{name}/{key} missing")
                        self.assertEqual(np.shape(r[key]), (), f"{name}/{key} not scalar")
                    self.assertEqual(int(r["paths"]), paths, name)
                    price, se = float(r["price"]), float(r["stderr"])
                    self.assertTrue(np.isfinite(price) and np.isfinite(se) and se > 0,
                                    f"{name}: price {price}, stderr {se}")
                    # ci95 = price -/+ z_0.975 * stderr, to a few ulps.
                    ulps = 4 * np.finfo(float).eps * max(abs(price), 1.0)
                    self.assertAlmostEqual(float(r["ci95_low"]), price - sc.Z95 * se,
                                           delta=ulps, msg=f"{name} ci95_low")
                    self.assertAlmostEqual(float(r["ci95_high"]), price + sc.Z95 * se,
                                           delta=ulps, msg=f"{name} ci95_high")
                    # The acceptance criterion: every quickstart price
                    # lies within 3 standard errors of its Black-Scholes value.
                    ref = float(r["reference_price"])
                    self.assertLessEqual(abs(price - ref), 3 * se,
                                         f"{name}: price {price} is "
                                         f"{(price - ref) / se:+.2f} stderr from "
                                         f"the reference {ref}")

    def test_pricing_summary_matches_groups(self):
        for ranks in (1, 3):
            with self.subTest(ranks=ranks):
                _, f = self.run_ok(ranks)
                summary = sc.read_table(f["pricing/summary"])
                self.assertIn("name", summary, "/pricing/summary has no name column")
                names = list(summary["name"])
                self.assertEqual(sorted(names), sorted(INSTRUMENTS),
                                 "/pricing/summary rows are not the instruments")
                results = sc.pricing_results(f)
                for k, name in enumerate(names):
                    for key in sc.PRICING_DATASETS + ("reference_price",):
                        self.assertIn(key, summary, f"/pricing/summary has no {key} column")
                        a, b = summary[key][k], results[name][key]
                        if key == "paths":
                            self.assertEqual(int(a), int(b), f"{name} {key}")
                        else:
                            self.assertEqual(sc.bits(a), sc.bits(b),
                                             f"{name} {key}: summary {a!r} vs group {b!r}")

    def test_h5dump_reads_the_file(self):
        _, f = self.run_ok(1)
        h5dump = shutil.which("h5dump")
        self.assertIsNotNone(h5dump, "h5dump not found (Debian: hdf5-tools)")
        res = sc.run_command([h5dump, "-A", f.filename], self.tmp)
        self.assertEqual(res.returncode, 0, res.describe())
        self.assertIn('ATTRIBUTE "status"', res.stdout, res.describe())
        self.assertIn('"complete"', res.stdout, res.describe())

    # --- reproducibility (docs/contract.md, guarantee 1) ----------------------------

    def test_bitwise_identical_1_vs_3_ranks(self):
        _, f1 = self.run_ok(1)
        _, f3 = self.run_ok(3)
        self.assertBitwiseEqual(f1, f3, "1 vs 3 ranks")

    def test_bitwise_identical_other_chunk_size(self):
        _, f1 = self.run_ok(1)
        _, fc = self.extra_run("chunk50000.h5", "--set", "pricing.chunk_paths=50000")
        cfg = tomllib.loads(sc.read_config_text(fc))
        self.assertEqual(cfg["pricing"]["chunk_paths"], 50000, "--set not applied")
        self.assertBitwiseEqual(f1, fc, "default chunk size vs chunk_paths = 50000")

    def test_bitwise_identical_1_vs_2_threads(self):
        _, f1 = self.run_ok(1)
        files = {}
        for threads in (1, 2):
            _, files[threads] = self.extra_run(f"omp{threads}.h5",
                                               env={"OMP_NUM_THREADS": threads})
            devices = sc.str_list(files[threads].attrs["devices"])
            if sc.as_str(files[threads].attrs["backend"]) == "host":
                # Without this the comparison could pass vacuously.
                m = re.search(r"(\d+) OpenMP thread", devices[0])
                self.assertIsNotNone(m, f"devices does not say the thread count: {devices}")
                self.assertEqual(int(m.group(1)), threads, f"OMP_NUM_THREADS ignored: {devices}")
        self.assertBitwiseEqual(files[1], files[2], "OMP_NUM_THREADS=1 vs 2")
        self.assertBitwiseEqual(f1, files[1], "default threads vs OMP_NUM_THREADS=1")

    def test_bitwise_identical_fp32_1_vs_3_ranks(self):
        args = ("--precision", "fp32", "--set", "pricing.paths=200000")
        _, a = self.extra_run("fp32_np1.h5", *args)
        _, b = self.extra_run("fp32_np3.h5", *args, ranks=3)
        self.assertEqual(sc.as_str(a.attrs["precision"]), "fp32")
        self.assertBitwiseEqual(a, b, "fp32, 1 vs 3 ranks")

    def test_rerun_from_stored_config(self):
        # docs/contract.md: the resolved configuration is stored, and
        # strata run on it reproduces the run.
        _, f1 = self.run_ok(1)
        text = sc.read_config_text(f1)
        resolved = os.path.join(self.tmp, "resolved.toml")
        with open(resolved, "w", encoding="utf-8") as out:
            out.write(text)
        _, again = self.extra_run("again.h5")
        rerun_out = os.path.join(self.tmp, "rerun.h5")
        res = sc.run_strata(["run", resolved, "-o", rerun_out], self.tmp)
        self.assertEqual(res.returncode, 0, res.describe())
        with h5py.File(rerun_out, "r") as g:
            self.assertBitwiseEqual(f1, g, "the run vs a re-run of its /config")
        self.assertBitwiseEqual(f1, again, "two identical runs")


if __name__ == "__main__":
    sc.main()
