#!/usr/bin/env python3
"""scripts/gpu/layout-guard, which fails the CUDA build's CI step when a
type passed by value to a kernel has another layout in the device code
than on the host, on reports and PTX written by hand in the forms g++,
nvcc's host pass and nvcc 13's code generator produce:

- the device offsets are read off the parameter loads each strata-leaf
  mark goes back to: a load from the parameter's name plus an offset, a
  load through a register holding the parameter's address (plus an add),
  a vector load of two leaves, a widening load or a conversion on the way;
- a type whose device parameter is larger, or whose leaf sits at another
  offset, or that has a leaf the host does not, fails (exit 1) with its
  name, the leaf's member path and the offsets; agreement passes (exit 0);
- nvcc's host pass is compared too (a member only __CUDACC__ sees);
- --expect-split passes only when exactly the named types differ;
- a mark the script cannot follow to a parameter load is an error (exit 2),
  never a silent pass.

No GPU and no nvcc are needed. The real guard runs in .ci/run wherever nvcc
exists (the layout_guard target), first on types built to split
(tests/layout/split_types.hpp), then on every kernel list.
"""

import os
import subprocess
import sys
import tempfile
import unittest

import strata_cli as sc

SCRIPT = os.path.join(sc.SOURCE_DIR, "scripts", "gpu", "layout-guard")

# strata::layout::probe<strata::View>(strata::View) and probe<strata::Pair>, as nvcc mangles them.
VIEW = "_ZN6strata6layout5probeINS_4ViewEEEvT_"
PAIR = "_ZN6strata6layout5probeINS_4PairEEEvT_"

HOST = """type\tstrata::View\t32\t8
leaf\t0\t8\t.0:double*
leaf\t8\t8\t.1:long
leaf\t16\t4\t.2:int
leaf\t20\t1\t.3:bool
leaf\t24\t8\t.4:double
type\tstrata::Pair\t16\t8
leaf\t0\t4\t.0:float
leaf\t4\t4\t.1:float
leaf\t8\t8\t.2:double
"""


def entry(name, size, body):
    return (f".visible .entry {name}(\n\t.param .align 8 .b8 {name}_param_0[{size}]\n)\n{{\n"
            + "".join(f"\t{line}\n" for line in body) + "\tret;\n}\n")


def mark(reg):
    return ["// begin inline asm", f"// strata-leaf {reg}", "// end inline asm"]


def view_ptx(size=32, double_at=24):
    """View's probe: a direct load, a load through a base register plus an
    add, a widening load of a bool converted on its way to the mark."""
    p = f"{VIEW}_param_0"
    return entry(VIEW, size, [
        f"ld.param.u64 \t%rd1, [{p}];", *mark("%rd1"),
        f"mov.u64 \t%rd9, {p};", "add.s64 \t%rd10, %rd9, 8;",
        "ld.param.u64 \t%rd2, [%rd10];", *mark("%rd2"),
        "ld.param.u32 \t%r1, [%rd9+16];", *mark("%r1"),
        f"ld.param.u8 \t%rs1, [{p}+20];", "cvt.u32.u16 \t%r2, %rs1;", *mark("%r2"),
        f"ld.param.f64 \t%fd1, [{p}+{double_at}];", *mark("%fd1")])


def pair_ptx():
    """Pair's probe: both floats from one vector load."""
    p = f"{PAIR}_param_0"
    return entry(PAIR, 16, [f"ld.param.v2.f32 \t{{%f1, %f2}}, [{p}];", f"ld.param.f64 \t%fd1, [{p}+8];",
                            *mark("%f1"), *mark("%f2"), *mark("%fd1")])


class LayoutGuard(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="strata-layout-guard-")

    def tearDown(self):
        sc.remove_tmpdir(self.tmp)

    def guard(self, ptx, host=HOST, nvcc=HOST, extra=()):
        paths = []
        for name, text in (("host.txt", host), ("nvcc.txt", nvcc), ("probes.ptx", ptx)):
            paths.append(os.path.join(self.tmp, name))
            with open(paths[-1], "w") as f:
                f.write(text)
        return subprocess.run([sys.executable, SCRIPT, "--saved", "--host", paths[0], "--nvcc-host", paths[1],
                               "--ptx", paths[2], *extra], capture_output=True, text=True)

    def test_agreeing_layouts_pass(self):
        r = self.guard(view_ptx() + pair_ptx())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("2 kernel argument types, 8 leaves", r.stdout)

    def test_a_larger_device_parameter_fails(self):
        r = self.guard(view_ptx(size=40) + pair_ptx())
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("layout differs: View", r.stdout)
        self.assertIn("sizeof: g++ 32, nvcc host 32, device 40", r.stdout)
        self.assertNotIn("layout differs: Pair", r.stdout)

    def test_a_moved_leaf_is_named_with_its_path_and_offsets(self):
        r = self.guard(view_ptx(size=40, double_at=32) + pair_ptx())
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("leaf 4 .4:double: offset g++ 24, nvcc host 24, device 32", r.stdout)

    def test_nvccs_host_pass_is_compared_too(self):
        nvcc = HOST.replace("strata::Pair\t16\t8\n", "strata::Pair\t24\t8\n")
        r = self.guard(view_ptx() + pair_ptx(), nvcc=nvcc)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("sizeof: g++ 16, nvcc host 24, device 16", r.stdout)

    def test_a_type_without_a_probe_fails(self):
        r = self.guard(view_ptx())
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("Pair", r.stdout)
        self.assertIn("no probe kernel in the PTX", r.stdout)

    def test_expect_split_needs_exactly_the_named_types(self):
        ptx = view_ptx(size=40) + pair_ptx()
        self.assertEqual(self.guard(ptx, extra=["--expect-split", "strata::View"]).returncode, 0)
        self.assertEqual(self.guard(ptx, extra=["--expect-split", "strata::View", "strata::Pair"]).returncode, 1)
        self.assertEqual(self.guard(view_ptx() + pair_ptx(), extra=["--expect-split", "strata::View"]).returncode,
                         1)

    def test_a_mark_that_cannot_be_followed_is_an_error(self):
        ptx = view_ptx().replace("cvt.u32.u16 \t%r2, %rs1;", "bfe.u32 \t%r2, %r7, 0, 8;") + pair_ptx()
        r = self.guard(ptx)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("leaf 3 (%r2) is not a parameter load", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
