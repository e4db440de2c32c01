#!/usr/bin/env python3
"""scripts/gpu/kernel-resources, the CI's per-kernel register report, on a
small ptxas log written by hand in the format nvcc 13 prints with
-Xptxas=-v:

- the occupancy of a kernel follows the CUDA occupancy calculator for sm_90
  (65,536 registers, allocated 256 a warp at a time; 228 KiB of shared
  memory, 1 KiB reserved a block; 64 warps): 84 registers at 256 threads leave 2 blocks (25%), 56 leave 4
  (50%), 32 leave 8 (100%, the warp limit), and 100 KiB of shared memory
  leaves 2 blocks whatever the registers;
- a kernel compiled in two translation units is listed once, with its larger
  figures; a kernel only the tests compile is left out;
- a spill makes the exit status 1, so CI fails on it; a log without ptxas
  lines is an error (exit 2), not an empty report.

No GPU and no nvcc are needed: the figures are arithmetic on the log.
"""

import os
import subprocess
import sys
import tempfile
import unittest

import strata_cli as sc

SCRIPT = os.path.join(sc.SOURCE_DIR, "scripts", "gpu", "kernel-resources")


def entry(mangled, regs, smem=0, spill=0, stack=0):
    return (f"ptxas info    : Compiling entry function '{mangled}' for 'sm_90'\n"
            f"ptxas info    : Function properties for {mangled}\n"
            f"    {stack} bytes stack frame, {spill} bytes spill stores, {spill} bytes spill loads\n"
            f"ptxas info    : Used {regs} registers, used 1 barriers, {smem} bytes smem\n"
            f"ptxas info    : Compile time = 1.0 ms\n")


def stride(functor):
    """grid_stride_kernel<strata::kernels::NAME<double>> as the compiler mangles it."""
    return "_ZN6strata4cuda18grid_stride_kernelINS_7kernels%d%sIdEEEEvlT_" % (len(functor), functor)


class KernelResources(unittest.TestCase):
    def report(self, log):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write(log)
        try:
            r = subprocess.run([sys.executable, SCRIPT, f.name], capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        rows = {}
        for line in r.stdout.splitlines()[2:]:
            cells = line.split()
            rows[cells[0]] = cells
        return r, rows

    def test_occupancy_follows_the_calculator(self):
        log = ("[ 40%] Building CUDA object engine/CMakeFiles/strata_core.dir/kernels_cuda.cu.o\n"
               + entry(stride("Heavy"), 84) + entry(stride("Middle"), 56) + entry(stride("Light"), 32)
               + entry(stride("Tiled"), 32, smem=100 * 1024)
               + "[ 50%] Building CUDA object models/CMakeFiles/strata_md.dir/more_cuda.cu.o\n"
               + entry(stride("Middle"), 60)
               + "[ 60%] Building CUDA object tests/CMakeFiles/strata_unit_tests.dir/unit/test_cuda.cu.o\n"
               + entry(stride("OnlyInTests"), 40))
        r, rows = self.report(log)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("4 kernels, 0 with spills", r.stdout)
        self.assertEqual(rows["Heavy<double>"][2:4], ["84", "0"])
        self.assertEqual(rows["Heavy<double>"][-2:], ["25%", "registers"])
        self.assertEqual(rows["Middle<double>"][2], "60")        # the larger of its two compiles
        self.assertEqual(rows["Middle<double>"][-2:], ["50%", "registers"])
        self.assertEqual(rows["Light<double>"][-2:], ["100%", "warps"])
        self.assertEqual(rows["Tiled<double>"][-2:], ["25%", "shared"])
        self.assertNotIn("OnlyInTests<double>", rows)

    def test_a_spill_fails(self):
        r, rows = self.report(entry(stride("Spilly"), 255, spill=16, stack=16))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("1 with spills", r.stdout)
        self.assertEqual(rows["Spilly<double>"][4], "16/16")

    def test_a_log_without_ptxas_lines_is_an_error(self):
        r, _ = self.report("[100%] Built target strata\n")
        self.assertEqual(r.returncode, 2)
        self.assertIn("-Xptxas=-v", r.stderr)


if __name__ == "__main__":
    unittest.main()
