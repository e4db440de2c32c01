#!/usr/bin/python3
"""End to end: the device health sampler (health.device_every_seconds).

Without a GPU (or on the host backend, or with the interval 0) the sampler
is absent: the run succeeds and writes no /health. With
STRATA_TEST_FAKE_NVML=1 a synthetic device stands in for NVML, so the
parts that need no GPU are checked on any machine: /health/<rank> for each
of 2 ranks, its columns and units, samples at the asked cadence from the
start to the end of the run, and the progress line's warnings (the
synthetic device throttles on its second sample and reports a corrected
ECC error from its third). Bad values of the key stop before computing.
"""

import os
import statistics
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402
import h5py  # noqa: E402

COLUMNS = {"time": "s", "gpu_utilization": "%", "memory_utilization": "%", "memory_used": "B",
           "temperature": "degC", "power": "W", "sm_clock": "MHz", "clock_event_reasons": None,
           "ecc_corrected": None, "ecc_uncorrected": None}
# quickstart in 16 chunks (steps), each held 50 ms: a run of about 0.8 s.
SLOW = ["--set", "pricing.chunk_paths=131072"]
SLOW_ENV = {"STRATA_TEST_STEP_DELAY_MS": "50"}


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

    def test_layout_cadence_and_warnings_on_two_ranks(self):
        every = 0.1
        out = os.path.join(self.tmp, "fake.h5")
        res = self.strata("run", sc.QUICKSTART, "-o", out, "--set", f"health.device_every_seconds={every}", *SLOW,
                          ranks=2, env={"STRATA_TEST_FAKE_NVML": "1", **SLOW_ENV})
        self.assertExit(res, 0)
        # Each warning once (the same text is not repeated within a minute),
        # from whichever rank saw it.
        self.assertEqual(res.stdout.count("warning: a GPU's clocks are held back"), 1, res.describe())
        self.assertEqual(res.stdout.count("warning: a GPU reported new ECC errors"), 1, res.describe())
        with h5py.File(out, "r") as f:
            self.assertEqual(sorted(f["health"].keys()), ["0", "1"])
            self.assertAlmostEqual(float(f["health"].attrs["every_seconds"]), every)
            compute = float(f["performance/compute_seconds"][()]) if "performance/compute_seconds" in f else None
            for rank in ("0", "1"):
                t = f["health"][rank]
                self.assertEqual(list(t.dtype.names), list(COLUMNS))
                for name, units in COLUMNS.items():
                    if units is not None:
                        self.assertEqual(t.attrs[f"{name}_units"], units, name)
                self.assertIn("synthetic", t.attrs["device"])
                rows = t[()]
                times = rows["time"]
                # From the start (the first sample is taken as the run begins)
                # to the end (one more as the output is written), increasing.
                self.assertLess(times[0], every)
                self.assertTrue((times[1:] > times[:-1]).all(), times)
                self.assertGreaterEqual(len(rows), 4, times)
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
