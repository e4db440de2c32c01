"""Physically bad states and absurd inputs end in bounded time with the
right exit code and a message that says where: md blow-ups (a time step
too long, a temperature too high, a density too high, two atoms on one
place, an atom far outside the box) exit 3 naming the atom, the step and
the rank; step counts past 2^53 are refused (exit 2, the key named,
nothing written); a non-finite diagnostic fails the run (exit 3); Monte
Carlo estimates that say nothing are flagged; nbody warns when its energy
ran away; a dry run of a huge grid is cheap; a signal during a slow set-up
stops the run (exit 75).

Every run here takes about a second; BOUND_S is the most any may take
before the test calls it hung (and kills its process group): generous for
a loaded machine, far below "forever"."""

import os
import re
import signal
import subprocess
import sys
import time

from fault_support import *  # noqa: F401,F403

BOUND_S = 40

MD = """
[run]
model = "md"
output = "out/run.h5"

[md]
cells = [4, 4, 4]
steps = 40
thermo_every = 10
"""


def md_input(extra=""):
    return MD + extra


class MdBlowUps(StrataTestCase):
    """Each blow-up exits 3 within the bound, naming atom, step and rank."""

    def assert_named_failure(self, res):
        self.assertExit(res, 3)
        for word in ("atom ", "step ", "rank "):
            self.assertInOutput(word, res.stderr, res)
        with h5py.File(self.path("out/run.h5"), "r") as f:
            status = as_str(f.attrs["status"])
        self.assertTrue(status.startswith("failed: rank "), status)
        self.assertIn(": md: atom ", status)

    def blow_up(self, *sets, ranks=None):
        self.write("in.toml", md_input())
        args = ["run", "in.toml"]
        for s in sets:
            args += ["--set", s]
        return self.strata(*args, ranks=ranks, timeout=BOUND_S)

    def test_time_step_too_long(self):
        self.assert_named_failure(self.blow_up("md.dt=0.1"))

    def test_time_step_too_long_on_two_ranks(self):
        # 5^3 cells: sub-boxes wider than cutoff + skin on 2 ranks.
        self.assert_named_failure(self.blow_up("md.dt=0.1", "md.cells=[5,5,5]", ranks=2))

    def test_temperature_too_high(self):
        self.assert_named_failure(self.blow_up("md.temperature=1e6"))

    def test_density_too_high(self):
        self.assert_named_failure(self.blow_up("md.density=5"))

    def start_file(self, change):
        """An H5MD start file: a one-step run's first frame, changed."""
        self.write("start.toml", md_input())
        self.assertExit(self.strata("run", "start.toml", "--set", "md.steps=1", "-o", "start.h5",
                                    timeout=BOUND_S), 0)
        with h5py.File(self.path("start.h5"), "r+") as f:
            d = f["particles/all/position/value"]
            p = d[()]
            change(p[0])
            d[...] = p
        self.write("in.toml", md_input('initial = "file"\ninitial_file = "start.h5"\ninitial_frame = 0\n'))
        return self.strata("run", "in.toml", timeout=BOUND_S)

    def test_two_atoms_at_one_place(self):
        def same_place(frame):
            frame[1] = frame[0]
        self.assert_named_failure(self.start_file(same_place))

    def test_atom_far_outside_the_box(self):
        def far_out(frame):
            frame[0, 0] = 1e300
        res = self.start_file(far_out)
        self.assertExit(res, 3)
        for word in ("atom 0", "md.initial_file", "1e+300", "step 0", "rank 0"):
            self.assertInOutput(word, res.stderr, res)

    def test_non_finite_message_names_the_step_once(self):
        self.write("in.toml", md_input("\n[health]\nevery_steps = 5\n"))
        res = self.strata("run", "in.toml", env={"STRATA_TEST_INJECT_NAN": "3"}, timeout=BOUND_S)
        self.assertExit(res, 3)
        self.assertInOutput("at step 5 on rank 0", res.stderr, res)
        self.assertEqual(res.stderr.count("at step"), 1, res.describe())
        self.assertInOutput("(atom ", res.stderr, res)


SHALLOW_WATER = """
[run]
model = "shallow_water"
output = "out/run.h5"

[shallow_water]
nx = 32
ny = 32
"""

NBODY = """
[run]
model = "nbody"
output = "out/run.h5"

[nbody]
n = 64
"""


class AbsurdRunLengths(StrataTestCase):
    """Step counts are integers: more than 2^53 steps is refused up front."""

    def refused(self, text, key, value):
        self.write("in.toml", text)
        res = self.strata("run", "in.toml", "--set", f"{key}={value}", timeout=BOUND_S)
        self.assertExit(res, 2)
        self.assertInOutput(key, res.stderr, res)
        self.assertInOutput("2^53", res.stderr, res)
        self.assertFalse(os.path.exists(self.path("out")), "nothing written")

    def test_shallow_water_sim_time(self):
        self.refused(SHALLOW_WATER, "shallow_water.sim_time", "1e30")

    def test_nbody_t_end(self):
        # Once one step of dt = t_end, ending `complete` with dE/E = 5e39.
        self.refused(NBODY, "nbody.t_end", "1e20")

    def test_diffusion_sim_time(self):
        self.refused("[run]\nmodel = \"diffusion\"\n[diffusion]\nnx = 8\nny = 8\nnz = 8\n",
                     "diffusion.sim_time", "1e300")

    def test_dry_run_of_a_huge_grid_is_cheap(self):
        # 4e10 cells: the plan's dt comes from a sample, not from every cell.
        self.write("in.toml", SHALLOW_WATER)
        res = self.strata("run", "in.toml", "--set", "shallow_water.nx=200000", "--set",
                          "shallow_water.ny=200000", "--dry-run", timeout=BOUND_S)
        self.assertExit(res, 0)
        self.assertInOutput("sampled cells", res.stdout, res, "stdout")
        self.assertFalse(os.path.exists(self.path("out")), "nothing written")
        # Its thousands of GiB per rank exceed the node: the dry run says so,
        # with the message and exit code of the real run, which stops before
        # allocating anything.
        said = re.search(r"memory: does not fit: (.*)\n.*exit 4", res.stdout)
        self.assertIsNotNone(said, res.describe())
        real = self.strata("run", "in.toml", "--set", "shallow_water.nx=200000", "--set",
                           "shallow_water.ny=200000", timeout=BOUND_S)
        self.assertExit(real, 4)
        # The same message (the memory available moves between the two).
        needed, _, rest = said.group(1).partition(";")
        self.assertInOutput(needed, real.stderr, real)
        self.assertInOutput(rest[rest.index(" available"):], real.stderr, real)


class NonFiniteResults(StrataTestCase):

    def test_infinite_diagnostics_fail_the_run(self):
        # Finite cells, but their area overflows: mass, energy, enstrophy inf.
        self.write("in.toml", SHALLOW_WATER)
        res = self.strata("run", "in.toml", "--set", 'shallow_water.initial="zonal_jet"', "--set",
                          'shallow_water.boundary_y="wall"', "--set", "shallow_water.lx=1e308",
                          timeout=BOUND_S)
        self.assertExit(res, 3)
        self.assertInOutput("not finite", res.stderr, res)
        with h5py.File(self.path("out/run.h5"), "r") as f:
            status = as_str(f.attrs["status"])
        self.assertTrue(status.startswith("failed: diagnostic mass = inf"), status)

    def test_a_closed_form_outside_its_range_is_no_reference(self):
        # A strike of 1e308: the Merton series gives NaN, the Heston integral
        # a huge negative number. Neither is a price: no reference is
        # written (an output of only finite results) and the table says why.
        self.write("in.toml", """
[run]
model = "pricing"
output = "out/run.h5"
[pricing]
paths = 4096
[[pricing.asset]]
name = "J"
spot = 100.0
model = "merton"
vol = 0.2
jump_intensity = 0.5
jump_mean = -0.1
jump_vol = 0.15
[[pricing.asset]]
name = "H"
spot = 100.0
model = "heston"
v0 = 0.04
kappa = 2.0
theta = 0.04
xi = 0.5
rho = -0.7
[[pricing.instrument]]
name = "merton_far"
option = "call"
strike = 1e308
maturity = 1.0
assets = ["J"]
[[pricing.instrument]]
name = "heston_far"
option = "call"
strike = 1e308
maturity = 1.0
assets = ["H"]
""")
        res = self.strata("run", "in.toml", timeout=BOUND_S)
        self.assertExit(res, 0)
        for name in ("merton_far", "heston_far"):
            self.assertInOutput(f"no reference for {name}", res.stdout, res)
        with h5py.File(self.path("out/run.h5"), "r") as f:
            for name in ("merton_far", "heston_far"):
                self.assertNotIn("reference_price", f["pricing"][name])
            self.assertTrue(all(np.isnan(f["pricing/summary/reference_price"][()])))

    def test_an_american_below_its_reference_is_its_known_low_bias(self):
        # A degree-1 exercise policy fitted on few paths, priced on many: the
        # Longstaff-Schwartz estimate sits more than 6 standard errors below
        # the tree, as a suboptimal policy must. That is bias, not a broken
        # estimate: no "cannot be trusted" warning, no `untrusted` attribute.
        self.write("in.toml", """
[run]
model = "pricing"
seed = 2001
output = "out/run.h5"
[pricing]
paths = 524288
rate = 0.06
regression_paths = 4096
steps_per_year = 50
[[pricing.asset]]
name = "S"
spot = 36.0
vol = 0.2
[[pricing.instrument]]
name = "ls_put"
type = "american"
option = "put"
strike = 40.0
maturity = 1.0
assets = ["S"]
exercise_dates = 50
basis = "monomial"
degree = 1
""")
        res = self.strata("run", "in.toml", timeout=BOUND_S)
        self.assertExit(res, 0)
        with h5py.File(self.path("out/run.h5"), "r") as f:
            g = f["pricing/ls_put"]
            z = (g["price"][()] - g["reference_price"][()]) / g["stderr"][()]
            self.assertLess(z, -6, "the case no longer shows a bias beyond 6 standard errors")
            self.assertNotIn("untrusted", g["price"].attrs)
        self.assertNotIn("cannot be trusted", res.stdout)

    def test_monte_carlo_estimates_that_say_nothing_are_flagged(self):
        # vol 5 over 100 years: every path ends near 0, the call pays 0 on
        # all of them, against a reference of ~100. Over 1 year the mean
        # rests on a few huge paths: far from the reference in its own errors.
        self.write("in.toml", """
[run]
model = "pricing"
output = "out/run.h5"
[pricing]
paths = 100000
[[pricing.asset]]
name = "A"
spot = 100.0
vol = 5.0
[[pricing.instrument]]
name = "century"
type = "european"
option = "call"
strike = 100.0
maturity = 100.0
assets = ["A"]
[[pricing.instrument]]
name = "year"
type = "european"
option = "call"
strike = 100.0
maturity = 1.0
assets = ["A"]
""")
        res = self.strata("run", "in.toml", timeout=BOUND_S)
        self.assertExit(res, 0)
        self.assertNotIn("+0.00", res.stdout)
        self.assertInOutput("century: the estimate cannot be trusted: every path paid 0", res.stdout, res, "stdout")
        self.assertInOutput("year: the estimate cannot be trusted: the reference", res.stdout, res, "stdout")
        with h5py.File(self.path("out/run.h5"), "r") as f:
            self.assertIn("every path paid 0", as_str(f["pricing/century/price"].attrs["untrusted"]))
            self.assertIn("standard errors away", as_str(f["pricing/year/price"].attrs["untrusted"]))

    def test_nbody_without_softening_warns_of_its_energy(self):
        self.write("in.toml", NBODY)
        res = self.strata("run", "in.toml", "--set", "nbody.softening=0", timeout=BOUND_S)
        self.assertExit(res, 0)
        self.assertInOutput("warning: nbody.softening = 0", res.stdout, res, "stdout")
        self.assertInOutput("warning: the total energy changed by up to", res.stdout, res, "stdout")
        with h5py.File(self.path("out/run.h5"), "r") as f:
            self.assertIn("did not follow the dynamics",
                          as_str(f["observables/total_energy"].attrs["warning"]))


class SignalDuringSetUp(StrataTestCase):

    def stop_during_forces(self, sig, ranks=None, external=False):
        """Signals a run of 200,000 bodies as its set-up starts, so the
        signal is there during its first forces (4e10 pair interactions,
        tens of seconds on two cores, still a fraction of a second on a
        GPU); it must stop within a few seconds, not after them (and the
        step after them). The signal is raised by rank 0 itself
        (STRATA_TEST_SIGNAL_AT=setup), or with `external` sent to the
        launcher once the output exists, the run held before its set-up
        until it arrives (STRATA_TEST_HOLD_AT=setup). Returns the stderr."""
        self.write("in.toml", NBODY)
        cmd = strata_command(["run", "in.toml", "--set", "nbody.n=200000", "--set", "nbody.steps=1"], ranks)
        # Two threads a rank, so that a machine with many cores still spends
        # seconds on the forces (2 x 4e10 pair interactions of ~20 flops).
        env = {"OMP_NUM_THREADS": "2", **(hold_at("setup") if external else signal_at("setup", sig))}
        proc = subprocess.Popen(cmd, cwd=self.tmp, env=child_env(env),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            sent = time.monotonic()
            if external:
                wait_for_path(self, proc, self.path("out/run.h5"))
                proc.send_signal(sig)
                sent = time.monotonic()
            try:
                _, err = proc.communicate(timeout=BOUND_S / 2)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                self.fail(f"a signal during set-up ignored for {BOUND_S / 2} s")
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
        waited = time.monotonic() - sent
        err = err.decode()
        self.assertEqual(proc.returncode, 75, err)
        with h5py.File(self.path("out/run.h5"), "r") as f:
            status = as_str(f.attrs["status"])
        self.assertTrue(status.startswith("stopped: "), status)
        self.assertIn(f"{sig.name} during the initial forces", status)
        print(f"\n  stopped {waited:.2f} s after {sig.name} during set-up ({ranks or 1} rank(s))", file=sys.stderr)
        return err

    def test_sigterm_during_the_initial_forces(self):
        err = self.stop_during_forces(signal.SIGTERM)
        self.assertIn("SIGTERM during the initial forces", err)

    def test_sigusr1_through_mpirun_during_the_initial_forces(self):
        # mpirun forwards SIGUSR1 to every rank (SIGTERM it answers by killing them).
        self.stop_during_forces(signal.SIGUSR1, ranks=2, external=True)


if __name__ == "__main__":
    main()
