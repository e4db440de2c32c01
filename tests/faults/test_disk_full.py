"""A full disk: every rank stops with exit 4 and the same message, naming
the file and saying "disk full"; the output says `failed: disk full
writing ...`; the checkpoints before the failure stay whole, so a restart
on a roomier disk finishes the run. Grid (shallow_water) and particle (md)
models, output and checkpoints, 1, 2 and 4 ranks, frames written in the
background and synchronously; each run has a hard time bound (a hang is a
failure, not a stuck test).

The small disk is a tmpfs mounted for the test (root only; skipped, saying
why, where mounting is not allowed).
"""

import os
import subprocess
import unittest

from fault_support import *  # noqa: F401,F403
from fault_support import StrataTestCase, as_str, h5py

# A hang is a failure: every run is killed (its whole process group) after
# this. The runs here end in a few seconds on a loaded 2-core machine.
RUN_BOUND_S = 60

# A tmpfs of 3 MiB, filled up to FREE_BYTES before each run: strata keeps
# 1 MiB free for closing the file after a failed write, so some 600 KiB go
# to frames and checkpoints, a few frames of the small models below (128
# KiB a shallow_water frame, 41 KiB an md frame), and the runs stay short.
DISK = "3m"
FREE_BYTES = 1600 * 1024

SHALLOW_WATER = """
[run]
model = "shallow_water"
output = "disk/out.h5"

[shallow_water]
initial = "gaussian"
nx = 64
ny = 64
lx = 4.0e6
ly = 4.0e6
H = 1000.0
f0 = 1.0e-4
gaussian_amplitude = 10.0
gaussian_width = 2.0e5
sim_time = 14400.0
output_interval = 600.0
"""

MD = """
[run]
model = "md"
output = "disk/out.h5"

[md]
cells = [6, 6, 6]
density = 0.8442
temperature = 1.44
steps = 120
thermo_every = 5
output_every = 5
"""


def mount_tmpfs(path, options):
    """Mounts a tmpfs at path; returns None, or why it cannot."""
    os.makedirs(path, exist_ok=True)
    try:
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", path],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as err:
        return str(err)
    return None if res.returncode == 0 else (res.stderr.strip() or f"mount exit {res.returncode}")


def unmount(path):
    subprocess.run(["umount", "-l", path], capture_output=True, timeout=30)


class DiskTestCase(StrataTestCase):
    """Each test has `disk/`, a small tmpfs, in its temporary directory."""

    def setUp(self):
        super().setUp()
        why = mount_tmpfs(self.path("disk"), f"size={DISK}")
        if why is not None:
            raise unittest.SkipTest(f"cannot mount a small tmpfs (needs root): {why}")
        self.addCleanup(unmount, self.path("disk"))
        self.fill_disk()

    def fill_disk(self):
        """Empties the disk, then fills it up to FREE_BYTES."""
        for name in os.listdir(self.path("disk")):
            subprocess.run(["rm", "-rf", self.path("disk", name)], check=True)
        fs = os.statvfs(self.path("disk"))
        with open(self.path("disk", "filler"), "wb") as f:
            f.write(b"\0" * max(0, fs.f_bavail * fs.f_frsize - FREE_BYTES))

    def roomier(self):
        """Grows the disk (tmpfs resizes in place), as freeing space would."""
        res = subprocess.run(["mount", "-o", "remount,size=64m", self.path("disk")], capture_output=True,
                             text=True, timeout=30)
        self.assertEqual(res.returncode, 0, res.stderr)

    def fails_disk_full(self, args, ranks, env=None, what="disk/out.h5"):
        """Runs `strata run ARGS` on `ranks` ranks (None: alone): exit 4
        within RUN_BOUND_S, "disk full writing" and `what` in the message
        and in the output's status. Returns the result."""
        res = self.strata("run", *args, ranks=ranks, env=env, timeout=RUN_BOUND_S)
        self.assertExit(res, 4)
        self.assertInOutput("disk full writing " + what, res.stderr, res)
        with h5py.File(self.path("disk/out.h5"), "r") as f:
            status = as_str(f.attrs["status"])
        self.assertTrue(status.startswith("failed: disk full writing " + what), status + res.describe())
        return res

    def checkpoints(self):
        chk = self.path("disk/out.chk")
        return sorted(os.listdir(chk)) if os.path.isdir(chk) else []

    def restarts_to_the_end(self, args, ranks):
        """After a failure: no temporary checkpoint is left, and on a roomier
        disk `--restart` continues from the newest checkpoint (none
        skipped as damaged) and completes the run."""
        names = self.checkpoints()
        self.assertTrue(names, "no checkpoint was written before the disk filled up")
        self.assertFalse([n for n in names if n.endswith(".tmp")], names)
        self.roomier()
        res = self.strata("run", *args, "--restart", ranks=ranks, timeout=RUN_BOUND_S)
        self.assertExit(res, 0)
        self.assertInOutput("restarted from disk/out.chk/" + names[-1], res.stdout, res, "stdout")
        self.assertNotIn("skipping", res.stdout)
        with h5py.File(self.path("disk/out.h5"), "r") as f:
            self.assertEqual(as_str(f.attrs["status"]), "complete")


class OutputFillsTheDisk(DiskTestCase):
    """Frames fill the disk: the run stops collectively, the file is marked."""

    def test_grid_output_on_1_2_and_4_ranks_synchronous_and_background(self):
        self.write("sw.toml", SHALLOW_WATER)
        for ranks, background in ((None, False), (2, False), (4, True)):
            with self.subTest(ranks=ranks, background=background):
                self.fill_disk()
                self.fails_disk_full(["sw.toml", "--set", f"run.async_output={'true' if background else 'false'}"],
                                     ranks)

    def test_grid_output_in_the_background_on_2_ranks_then_restart(self):
        self.write("sw.toml", SHALLOW_WATER)
        args = ["sw.toml", "--set", "checkpoint.every_steps=10"]
        self.fails_disk_full(args, 2)
        self.restarts_to_the_end(args, 2)

    def test_particle_output_on_2_ranks(self):
        self.write("md.toml", MD)
        self.fails_disk_full(["md.toml"], 2)

    def test_a_disk_full_before_the_run_ends_it_at_once_leaving_no_file(self):
        # Nothing fits, not even the metadata HDF5 flushes when it closes
        # the new file (on 4 ranks that flush used to strand ranks in a
        # collective inside HDF5).
        try:
            with open(self.path("disk", "filler"), "ab") as f:
                f.write(b"\0" * FREE_BYTES)
        except OSError:
            pass   # full a little early: as wanted
        fs = os.statvfs(self.path("disk"))
        self.assertLess(fs.f_bavail * fs.f_frsize, 64 * 1024)
        self.write("sw.toml", SHALLOW_WATER)
        for ranks in (None, 4):
            with self.subTest(ranks=ranks):
                res = self.strata("run", "sw.toml", ranks=ranks, timeout=RUN_BOUND_S)
                self.assertExit(res, 4)
                self.assertInOutput("disk full writing disk/out.h5", res.stderr, res)
                self.assertEqual(sorted(os.listdir(self.path("disk"))), ["filler"])

    def test_a_disk_that_fills_under_hdf5_still_ends_every_rank_with_exit_4(self):
        # Without the space check the disk fills up inside HDF5's own
        # writes (as when another process fills it between the check and
        # the write): the file cannot be marked, but no rank hangs or crashes.
        self.write("sw.toml", SHALLOW_WATER)
        res = self.strata("run", "sw.toml", ranks=2, env={"STRATA_TEST_NO_SPACE_CHECK": "1"}, timeout=RUN_BOUND_S)
        self.assertExit(res, 4)
        self.assertInOutput("disk full writing disk/out.h5", res.stderr, res)


class CheckpointsFillTheDisk(DiskTestCase):
    """Checkpoints fill the disk: the failing one is removed, those before it
    stay whole, the run stops (exit 4) rather than going on unprotected."""

    def test_grid_checkpoints_on_2_and_4_ranks(self):
        self.write("sw.toml", SHALLOW_WATER)
        for ranks, background in ((2, False), (4, True)):
            with self.subTest(ranks=ranks, background=background):
                unmount(self.path("disk"))
                self.assertIsNone(mount_tmpfs(self.path("disk"), f"size={DISK}"))
                self.fill_disk()
                args = ["sw.toml", "--set", "shallow_water.output_interval=0", "--set", "checkpoint.every_steps=4",
                        "--set", "checkpoint.keep=1000",
                        "--set", f"run.async_output={'true' if background else 'false'}"]
                res = self.fails_disk_full(args, ranks, what="checkpoint disk/out.chk/step-")
                self.assertInOutput("the checkpoints before it are untouched", res.stderr, res)
                self.restarts_to_the_end(args, ranks)

    def test_particle_checkpoints_on_1_rank(self):
        # One rank used to end in SIGSEGV inside MPI_Finalize here.
        self.write("md.toml", MD)
        args = ["md.toml", "--set", "md.output_every=0", "--set", "checkpoint.every_steps=4",
                "--set", "checkpoint.keep=1000"]
        self.fails_disk_full(args, None, what="checkpoint disk/out.chk/step-")
        self.restarts_to_the_end(args, None)


if __name__ == "__main__":
    unittest.main()
