"""Odd output paths: strata moves aside (run.backup) or replaces
(--overwrite) only regular files it wrote, never a directory, a device or
someone's file, and suggests neither for those; a path it cannot create
fails with the system's reason (a read-only file system, a /proc path),
exit 2, nothing written; a missing parent directory is created and the
run says so."""

import os
import stat
import subprocess
import unittest

from fault_support import *  # noqa: F401,F403
from fault_support import StrataTestCase

PRICING = """
[run]
model = "pricing"
output = "out.h5"

[pricing]
paths = 10000

[[pricing.asset]]
name = "A"
spot = 100.0
vol = 0.2

[[pricing.instrument]]
name = "call"
type = "european"
option = "call"
strike = 100.0
maturity = 1.0
assets = ["A"]
"""

# What the output-path error used to say for every failure to create the
# file, whatever the system's reason.
NOT_THE_REASON = "Bad file descriptor"


class OutputPaths(StrataTestCase):

    def setUp(self):
        super().setUp()
        self.write("in.toml", PRICING)

    def refused(self, output, *extra):
        res = self.strata("run", "in.toml", "-o", output, *extra)
        self.assertExit(res, 2)
        self.assertInOutput(output, res.stderr, res)
        self.assertNotIn(NOT_THE_REASON, res.stderr, res.describe())
        return res

    def test_backup_never_moves_a_directory(self):
        os.mkdir(self.path("results.h5"))
        self.write("results.h5/notes.txt", "mine\n")
        res = self.refused("results.h5", "--set", "run.backup=true")
        self.assertInOutput("is a directory", res.stderr, res)
        self.assertTrue(os.path.isfile(self.path("results.h5", "notes.txt")))
        self.assertEqual(sorted(os.listdir(self.tmp)), ["in.toml", "results.h5"])

    def test_backup_never_moves_a_device(self):
        # A device node of the test's own, the same as /dev/null: the
        # system's must never be at stake (a strata that moved devices
        # aside would leave the machine without /dev/null).
        try:
            os.mknod(self.path("null"), stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except OSError as err:
            raise unittest.SkipTest(f"cannot make a device node (needs root): {err}")
        res = self.refused("null", "--set", "run.backup=true")
        self.assertInOutput("not a regular file", res.stderr, res)
        self.assertTrue(stat.S_ISCHR(os.stat(self.path("null")).st_mode))
        self.assertEqual(sorted(os.listdir(self.tmp)), ["in.toml", "null"])

    def test_no_way_round_is_suggested_for_a_file_strata_did_not_write(self):
        self.write("passwd", "root:x:0:0:root:/root:/bin/bash\n")
        for extra in ((), ("--set", "run.backup=true"), ("--overwrite",)):
            with self.subTest(extra=extra):
                res = self.refused("passwd", *extra)
                self.assertInOutput("not an HDF5 file written by strata", res.stderr, res)
                self.assertInOutput("choose another output", res.stderr, res)
                for hint in ("set run.backup = true", "Use --overwrite"):
                    self.assertNotIn(hint, res.stderr, res.describe())
                with open(self.path("passwd")) as f:
                    self.assertEqual(f.read(), "root:x:0:0:root:/root:/bin/bash\n")
                self.assertEqual(sorted(os.listdir(self.tmp)), ["in.toml", "passwd"])

    def test_a_read_only_file_system_is_named(self):
        ro = self.path("ro")
        os.mkdir(ro)
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", ro], capture_output=True,
                             text=True, timeout=30)
        if res.returncode != 0:
            raise unittest.SkipTest(f"cannot mount a read-only tmpfs (needs root): {res.stderr.strip()}")
        self.addCleanup(subprocess.run, ["umount", "-l", ro], capture_output=True, timeout=30)
        res = self.refused("ro/out.h5")
        self.assertInOutput("Read-only file system", res.stderr, res)

    def test_a_proc_path_gives_the_systems_reason(self):
        res = self.refused("/proc/strata-output-test.h5")
        self.assertInOutput("cannot create the output file (No such file or directory)", res.stderr, res)
        self.assertFalse(os.path.exists("/proc/strata-output-test.h5"))

    def test_a_missing_parent_directory_is_created_and_said(self):
        res = self.strata("run", "in.toml", "-o", "new/dir/out.h5")
        self.assertExit(res, 0)
        self.assertInOutput("note: created the directory new/dir for run.output", res.stdout, res, "stdout")
        self.assertTrue(os.path.isfile(self.path("new/dir/out.h5")))


if __name__ == "__main__":
    unittest.main()
