#!/usr/bin/env python3
"""The subcommands other than a plain run: --version, --help, models, doctor,
validate, run --dry-run, --set of a whole-number float, --precision fp32."""

import os
import re
import statistics
import subprocess
import sys
import time
import tomllib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

MINIMAL = """\
[run]
model = "pricing"
seed = 11

[pricing]
paths = 2000
rate = 0.03

[[pricing.asset]]
name = "A"
spot = 100.0
vol = 0.25

[[pricing.instrument]]
name = "probe_call"
option = "call"
strike = 105.0
maturity = 0.5
assets = ["A"]
"""

# Keys every pricing input has (docs/inputs.md, "[pricing]") that
# `strata models` must document, section by section.
EXPECTED_KEYS = {
    "[run]": ["model", "precision", "backend", "seed", "output"],
    "[pricing]": ["paths", "antithetic", "rate", "chunk_paths"],
    "[[pricing.asset]]": ["name", "spot", "dividend", "vol"],
    "[[pricing.instrument]]": ["name", "type", "option", "strike", "maturity", "assets"],
}


class Commands(sc.StrataTestCase):

    def ok(self, *args, **kw):
        res = self.strata(*args, **kw)
        self.assertExit(res, 0)
        return res

    # --- --version and --help -----------------------------------------------

    def test_version(self):
        res = self.ok("--version")
        self.assertRegex(res.stdout, r"^strata \d+\.\d+\.\d+", res.describe())

    def test_help_lists_subcommands(self):
        res = self.ok("--help")
        for sub in ("run", "models", "doctor", "validate"):
            self.assertRegex(res.stdout, rf"(?m)^\s+{sub}\s", res.describe())

    # --- models ---------------------------------------------------------------

    def test_models_lists_pricing(self):
        res = self.ok("models")
        self.assertRegex(res.stdout, r"(?m)^\s+pricing\s", res.describe())

    def test_models_pricing_lists_every_key(self):
        run_keys = sc.schema_keys_from_models(self.ok("models").stdout)
        res = self.ok("models", "pricing")
        keys = sc.schema_keys_from_models(res.stdout)
        keys.update(run_keys)
        for section, expected in EXPECTED_KEYS.items():
            self.assertIn(section, keys, f"{section} not listed:{res.describe()}")
            for key in expected:
                self.assertIn(key, keys[section], f"{section} {key} not listed:{res.describe()}")
        # Each key line carries its type and default, then a line of doc.
        lines = res.stdout.splitlines()
        for i, line in enumerate(lines):
            if re.match(r"^  [a-z_]+\s{2,}\S", line):
                self.assertGreaterEqual(len(line.split()), 3, f"no type/default: {line!r}")
                self.assertTrue(i + 1 < len(lines) and lines[i + 1].startswith("      ")
                                and lines[i + 1].strip(), f"key without a doc line: {line!r}")

    def test_models_and_markdown_list_the_same_keys(self):
        # Both come from one parameter schema.
        overview = self.ok("models").stdout
        listed = sc.schema_keys_from_models(overview)
        # Every registered model's own table (the lines under "models:").
        names = re.findall(r"^  ([a-z_0-9]+)  ", overview.split("\nkeys of every run:")[0], re.M)
        self.assertIn("pricing", names)
        for name in names:
            listed.update(sc.schema_keys_from_models(self.ok("models", name).stdout))
        markdown = sc.schema_keys_from_markdown(self.ok("models", "--markdown").stdout)
        self.assertEqual(listed, markdown)

    def test_models_columns_are_aligned(self):
        # The model list's summaries start in one column; in each table of a
        # model's keys, so do the types and the defaults (a long key or a
        # long choice list used to push its own line out of line).
        overview = self.ok("models").stdout.split("\nkeys of every run:")[0]
        starts = {m.start(2) - m.start() for m in re.finditer(r"(?m)^  ([a-z_0-9]+) +(\S)", overview)}
        self.assertEqual(len(starts), 1, overview)
        for name in ("shallow_water", "pricing"):
            text = self.ok("models", name).stdout
            for table in re.split(r"(?m)^(?=\[)", text):
                rows = [line for line in table.splitlines() if re.match(r"^  [A-Za-z_]", line)]
                columns = [[m.start() for m in re.finditer(r"(?<=  )\S", line)][:3] for line in rows]
                self.assertLessEqual(len({tuple(c) for c in columns}), 1, f"{name}:\n{table}")

    def test_models_unknown(self):
        res = self.strata("models", "nosuch")
        self.assertExit(res, 2)
        self.assertInOutput("nosuch", res.stderr, res)
        self.assertInOutput("pricing", res.stderr, res)  # what is available

    # --- doctor -----------------------------------------------------------------

    def test_doctor(self):
        res = self.ok("doctor")
        for topic in ("MPI", "HDF5", "CUDA"):
            self.assertIn(topic, res.stdout, res.describe())

    def test_doctor_reports_threads_that_outnumber_the_cores(self):
        # More OpenMP threads than the cores strata may use: doctor says so,
        # and strata has its threads wait passively instead of spinning.
        cores = len(os.sched_getaffinity(0))
        env = {"OMP_NUM_THREADS": str(4 * cores), "OMP_WAIT_POLICY": None, "STRATA_PASSIVE_WAIT": None}
        res = self.strata("doctor", env=env)
        self.assertExit(res, 0)
        self.assertRegex(res.stdout, rf"oversubscribed 1 rank\(s\) x {4 * cores} OpenMP thread\(s\) per rank on "
                         rf"{cores} core", res.describe())
        self.assertIn("OMP_WAIT_POLICY=passive, set by strata", res.stdout, res.describe())
        # A user's own policy is left alone, and named.
        res = self.strata("doctor", env={**env, "OMP_WAIT_POLICY": "active"})
        self.assertExit(res, 0)
        self.assertIn("waiting threads spin (OMP_WAIT_POLICY=active)", res.stdout, res.describe())
        # More ranks than cores, one thread each by strata's own choice:
        # oversubscribed by the ranks (on a small machine: a few ranks).
        if cores > 4:
            return
        ranks = cores + 1
        res = self.strata("doctor", ranks=ranks, env={"OMP_NUM_THREADS": None, "OMP_WAIT_POLICY": None,
                                                      "STRATA_PASSIVE_WAIT": None})
        self.assertExit(res, 0)
        self.assertRegex(res.stdout, rf"oversubscribed {ranks} rank\(s\) x 1 OpenMP thread\(s\) per rank on "
                         rf"{cores} core", res.describe())

    def test_doctor_reports_a_node_crowded_by_other_work(self):
        # Cores enough for 2 threads, but every one of the node's cores
        # busy with other processes: threads that spin while they wait for
        # a thread without a core made a run 100x slower. strata waits
        # passively and doctor says why.
        online = os.cpu_count() or 1
        if online < 2:
            self.skipTest("one core: 2 threads are oversubscribed anyway")
        loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(online + 1)]
        try:
            time.sleep(0.5)
            env = {"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": None, "STRATA_PASSIVE_WAIT": None}
            res = self.strata("doctor", env=env)
            self.assertExit(res, 0)
            self.assertRegex(res.stdout, rf"shared node   \d+ other runnable task\(s\) on the node's {online} core\(s\)"
                             r" beside 1 rank\(s\) x 2 OpenMP thread\(s\): threads wait passively "
                             r"\(OMP_WAIT_POLICY=passive, set by strata\)", res.describe())
            # The user's own policy is kept, and its cost named.
            res = self.strata("doctor", env={**env, "OMP_WAIT_POLICY": "active"})
            self.assertIn("waiting threads spin (OMP_WAIT_POLICY=active)", res.stdout, res.describe())
        finally:
            for p in loops:
                p.kill()
                p.wait()

    def test_doctor_probe(self):
        """--probe measures on rank 0 alone, on any rank count: host copy
        bandwidth and FMA rates always, the GPU's beside its peaks where one
        is in use. Only that the figures exist and are positive is checked
        here (how fast is for benchmarks)."""
        res = self.strata("doctor", "--probe", ranks=2)
        self.assertExit(res, 0)
        copy = re.search(r"host copy\s+([\d.]+) GB/s on (\d+) thread\(s\), ([\d.]+) GB/s on one", res.stdout)
        fma = re.search(r"host FMA\s+fp64 ([\d.]+) GFLOP/s a core, ([\d.]+) on \d+ thread\(s\); "
                        r"fp32 ([\d.]+) a core, ([\d.]+) on", res.stdout)
        self.assertIsNotNone(copy, res.describe())
        self.assertIsNotNone(fma, res.describe())
        for v in [copy.group(1), copy.group(3)] + list(fma.groups()):
            self.assertGreater(float(v), 0, res.describe())
        self.assertEqual(res.stdout.count("host copy"), 1, f"more than one rank probed:{res.describe()}")
        if re.search(r"rank 0\s+NVIDIA|rank 0\s+.*cuda:", res.stdout):
            self.assertRegex(res.stdout, r"cuda:\d+ copy\s+\d+ GB/s of \d+ peak", res.describe())
            self.assertRegex(res.stdout, r"cuda:\d+ FMA\s+fp64 \d+ GFLOP/s", res.describe())
            self.assertRegex(res.stdout, r"cuda:\d+ PCIe\s+host to device [\d.]+ GB/s", res.describe())
        else:
            self.assertIn("GPU           none on rank 0", res.stdout, res.describe())

    # --- validate ---------------------------------------------------------------

    def test_validate(self):
        for precision in ("fp64", "fp32"):
            with self.subTest(precision=precision):
                res = self.strata("validate", "--precision", precision)
                self.assertExit(res, 0)
                lines = [l for l in res.stdout.splitlines() if l.strip()]
                header = [i for i, l in enumerate(lines) if re.match(r"^model\s+check\b", l)]
                self.assertEqual(len(header), 1, f"no table header:{res.describe()}")
                m = re.fullmatch(r"(\d+) passed, (\d+) failed", lines[-1].strip())
                self.assertIsNotNone(m, f"no final 'N passed, 0 failed':{res.describe()}")
                rows = lines[header[0] + 1:-1]
                self.assertGreater(len(rows), 0, res.describe())
                for row in rows:
                    self.assertRegex(row, r"\spass\s", f"row not passed:{res.describe()}")
                    self.assertNotRegex(row, r"\bfail", f"row failed:{res.describe()}")
                self.assertEqual((int(m.group(1)), int(m.group(2))), (len(rows), 0))
                self.assertIn(precision, res.stdout, res.describe())
                self.assertEqual(sc.files_under(self.tmp), [], "validate wrote files")

    # --- run --dry-run ------------------------------------------------------------

    def test_dry_run(self):
        self.write("in.toml", MINIMAL)
        res = self.ok("run", "in.toml", "-o", "dry.h5", "--dry-run")
        self.assertFalse(os.path.exists(self.path("dry.h5")), res.describe())
        self.assertEqual(sc.files_under(self.tmp), ["in.toml"], "a dry run wrote files")
        # The resolved configuration is printed as TOML, then the plan.
        out = res.stdout
        self.assertIn("resolved configuration", out, res.describe())
        start = out.index("resolved configuration")
        start = out.index("\n", start) + 1
        plan = re.search(r"(?m)^plan\b", out[start:])
        self.assertIsNotNone(plan, f"no plan printed:{res.describe()}")
        printed = tomllib.loads(out[start:start + plan.start()])
        # It is the configuration a real run stores.
        real = self.ok("run", "in.toml", "-o", "dry.h5")
        with h5py.File(self.path("dry.h5"), "r") as f:
            stored = tomllib.loads(sc.read_config_text(f))
        self.assertEqual(printed, stored, real.describe())

    # --- --set ----------------------------------------------------------------------

    def test_set_whole_number_float_is_an_integer(self):
        # 1e5 is a TOML float; an integer key accepts a whole-number float.
        self.write("in.toml", MINIMAL)
        res = self.ok("run", "in.toml", "-o", "set.h5", "--set", "pricing.paths=1e5")
        with h5py.File(self.path("set.h5"), "r") as f:
            cfg = tomllib.loads(sc.read_config_text(f))
            self.assertIs(type(cfg["pricing"]["paths"]), int, sc.read_config_text(f))
            self.assertEqual(cfg["pricing"]["paths"], 100000)
            self.assertEqual(int(f["pricing/probe_call/paths"][()]), 100000, res.describe())

    # --- --precision fp32 ---------------------------------------------------------

    def test_fp32_run(self):
        out64, out32 = self.path("fp64.h5"), self.path("fp32.h5")
        # The quickstart's 2e6 paths (not a small count): the smaller the
        # stderr, the sharper this test sees a bias from fp32 arithmetic.
        r64 = self.ok("run", sc.QUICKSTART, "-o", out64)
        r32 = self.ok("run", sc.QUICKSTART, "-o", out32, "--precision", "fp32")
        with h5py.File(out32, "r") as f32, h5py.File(out64, "r") as f64:
            self.assertEqual(sc.as_str(f32.attrs["precision"]), "fp32", r32.describe())
            results = sc.pricing_results(f32)
            self.assertGreater(len(results), 0)
            # Tolerance: the k prices are k tests of "price is unbiased";
            # at 3 stderr each a correct code fails one of k = 6 with
            # probability up to 1 - (1 - 0.0027)^6 = 1.6% per seed/stream,
            # and every change to the stream layout re-draws that chance.
            # Bonferroni at the family-wise rate ALPHA = 1e-3 (the rate whose
            # 3.86 stderr `strata validate` uses for its 9 checks) gives
            # z = Phi^-1(1 - ALPHA / (2k)) = 3.76 for k = 6. No allowance is
            # added for fp32 rounding: with the sums accumulated accurately it
            # is ~1e-7 relative, four orders below stderr/price ~ 1e-3 here;
            # a failure beyond z stderr means the fp32 path loses accuracy.
            alpha = 1e-3
            z = statistics.NormalDist().inv_cdf(1 - alpha / (2 * len(results)))
            for name, r in results.items():
                price, se, ref = float(r["price"]), float(r["stderr"]), float(r["reference_price"])
                self.assertLessEqual(abs(price - ref), z * se,
                                     f"{name}: fp32 price {price} is {(price - ref) / se:+.2f} "
                                     f"stderr from {ref} (tolerance {z:.2f}):{r32.describe()}")
            # The precision really changed the arithmetic.
            self.assertNotEqual(sc.result_bits(f32), sc.result_bits(f64),
                                f"fp32 and fp64 results are bitwise equal:{r64.describe()}")


if __name__ == "__main__":
    sc.main()
