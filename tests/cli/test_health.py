#!/usr/bin/env python3
"""End to end: the device health sampler (health.device_every_seconds).

Without a GPU (or on the host backend, or with the interval 0) the sampler
is absent: the run succeeds and writes no /health. With
STRATA_TEST_FAKE_NVML a synthetic device stands in for NVML, so the parts
that need no GPU are checked on any machine: /health/<rank> for each of 2
ranks, its columns and units, samples at the asked cadence from the start
to the end of the run, and the warnings. Each kind of event is a warning
line of its own, printed at most once a minute, whichever step boundary
(or rank) sees it, so the test counts lines by their content: with
STRATA_TEST_FAKE_NVML=1 the device is held back by a hardware thermal
slowdown on its second sample and reports a corrected ECC error from its
third (one warning each); with =idle it is a healthy GPU at rest and at its
power limit, with ECC errors from before the run (no warning). Bad values
of the key stop before computing.
"""

import os
import statistics
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

COLUMNS = {"time": "s", "gpu_utilization": "%", "memory_utilization": "%", "memory_used": "byte",
           "temperature": "degC", "power": "W", "sm_clock": "MHz", "clock_event_reasons": None,
           "ecc_corrected": None, "ecc_uncorrected": None}
# quickstart in 16 chunks (8 steps a rank on 2 ranks), each held 50 ms: a
# run of 0.4 s or more on any machine, so a sampler every 0.1 s takes at
# least 4 samples, the synthetic device's events among them.
SLOW = ["--set", "pricing.chunk_paths=131072"]
SLOW_ENV = {"STRATA_TEST_STEP_DELAY_MS": "50"}
EVERY = 0.1
THROTTLED = "warning: a GPU's clocks are held back"
NEW_ECC = "warning: a GPU reported ECC errors"


class Health(sc.StrataTestCase):
    def test_absent_without_a_gpu(self):
        """On the host backend, and with the interval 0 even with a device,
        nothing is sampled and /health is not written."""
        cases = [("host", ["--backend", "host"], {}),
                 ("interval_0", ["--set", "health.device_every_seconds=0"], {"STRATA_TEST_FAKE_NVML": "1"})]
        for tag, extra, env in cases:
            with self.subTest(tag):
                out = os.path.join(self.tmp, f"{tag}.h5")
                res = self.strata("run", sc.QUICKSTART, "-o", out, *extra, env=env)
                self.assertExit(res, 0)
                self.assertNotIn("warning", res.stdout, res.describe())
                with h5py.File(out, "r") as f:
                    self.assertEqual(f.attrs["status"], "complete")
                    self.assertNotIn("health", f, "a /health group without a sampled device")

    def run_fake(self, device, name):
        """quickstart on 2 ranks sampling the synthetic `device` every EVERY s."""
        out = os.path.join(self.tmp, name)
        res = self.strata("run", sc.QUICKSTART, "-o", out, "--set", f"health.device_every_seconds={EVERY}", *SLOW,
                          ranks=2, env={"STRATA_TEST_FAKE_NVML": device, **SLOW_ENV})
        self.assertExit(res, 0)
        return res, out

    def warnings(self, res):
        return [line for line in res.stdout.splitlines() if line.startswith("warning:")]

    def test_layout_cadence_and_warnings_on_two_ranks(self):
        every = EVERY
        res, out = self.run_fake("1", "fake.h5")
        # Each warning once (the same text is not repeated within a minute),
        # from whichever rank saw it, on a line of its own.
        warnings = self.warnings(res)
        self.assertEqual(sum(w.startswith(THROTTLED) for w in warnings), 1, res.describe())
        self.assertEqual(sum(w.startswith(NEW_ECC) for w in warnings), 1, res.describe())
        self.assertEqual(len(warnings), 2, res.describe())
        with h5py.File(out, "r") as f:
            self.assertEqual(sorted(f["health"].keys()), ["0", "1"])
            self.assertAlmostEqual(float(f["health"].attrs["every_seconds"]), every)
            compute = float(f["performance/compute_seconds"][()]) if "performance/compute_seconds" in f else None
            for rank in ("0", "1"):
                t = f["health"][rank]
                # A table: one dataset per column along the time scale.
                self.assertEqual(sorted(t.keys()), sorted(COLUMNS))
                for name, units in COLUMNS.items():
                    if units is not None:
                        self.assertEqual(sc.as_str(t[name].attrs["units"]), units, name)
                    if name != "time":
                        self.assertEqual(t[name].dims[0][0].name, t["time"].name, name)
                self.assertIn("synthetic", t.attrs["device"])
                rows = sc.read_table(t)
                times = rows["time"]
                # From the start (the first sample is taken as the run begins)
                # to the end (one more as the output is written), increasing.
                self.assertLess(times[0], every)
                self.assertTrue((times[1:] > times[:-1]).all(), times)
                self.assertGreaterEqual(len(rows["time"]), 4, times)
                # The cadence: the sampler's schedule, less the final sample.
                gaps = times[1:-1] - times[:-2]
                self.assertTrue(0.5 * every < statistics.median(gaps) < 2.0 * every, gaps)
                if compute is not None:
                    self.assertGreater(times[-1], 0.5 * compute)
                # The synthetic device's values, as sampled.
                self.assertEqual(rows["clock_event_reasons"][1], 0x40)
                self.assertEqual(int(rows["ecc_corrected"][0]), 0)
                self.assertEqual(int(rows["ecc_corrected"][-1]), 1)
                self.assertEqual(float(rows["power"][0]), 300.0)

    def test_a_healthy_gpu_raises_no_warning(self):
        """Idle, application clocks, the power limit under load, sync boost,
        display clocks: NVML reports them all as clock-event reasons, and
        none is a slowdown; ECC counts from before the run are no news."""
        res, out = self.run_fake("idle", "idle.h5")
        self.assertEqual(self.warnings(res), [], res.describe())
        with h5py.File(out, "r") as f:
            for rank in ("0", "1"):
                rows = sc.read_table(f["health"][rank])
                self.assertGreaterEqual(len(rows["time"]), 4, rows["time"])
                # The reasons were there to be judged, as sampled.
                self.assertEqual(list(rows["clock_event_reasons"][:4]), [0x1, 0x3, 0x4, 0x10])
                self.assertTrue((rows["ecc_corrected"] == 7).all(), rows["ecc_corrected"])
                self.assertTrue((rows["ecc_uncorrected"] == 2).all(), rows["ecc_uncorrected"])

    def test_bad_interval(self):
        for value in ("-1", "1e9", '"often"'):
            with self.subTest(value):
                res = self.strata("run", sc.QUICKSTART, "-o", os.path.join(self.tmp, "bad.h5"),
                                  "--set", f"health.device_every_seconds={value}")
                self.assertExit(res, 2)
                self.assertIn("health.device_every_seconds", res.stderr, res.describe())
                self.assertFalse(os.path.exists(os.path.join(self.tmp, "bad.h5")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
