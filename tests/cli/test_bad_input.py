#!/usr/bin/env python3
"""Bad input and usage: exit 2, one clear message, nothing written.

docs/contract.md "How an input is resolved": an unknown key, a wrong type or an out-of-range value
is an error that names the file, the line, the key, and for a misspelling the
nearest valid key; exit 2, nothing written. Each case starts from a valid
minimal pricing input (VALID below) and breaks one thing.
"""

import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strata_cli as sc  # noqa: E402

VALID = """\
[run]
model = "pricing"
seed = 7

[pricing]
paths = 1000
rate = 0.05

[[pricing.asset]]
name = "A"
spot = 100.0
vol = 0.2

[[pricing.instrument]]
name = "probe_call"
option = "call"
strike = 100.0
maturity = 1.0
assets = ["A"]
"""

SECOND_INSTRUMENT = """
[[pricing.instrument]]
name = "probe_call"
option = "put"
strike = 90.0
maturity = 1.0
assets = ["A"]
"""


def replace_line(text, old, new):
    """VALID with the one line `old` replaced by `new` (None deletes it)."""
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.rstrip("\n") == old]
    assert len(hits) == 1, f"{old!r} is not one line of the input"
    lines[hits[0]] = "" if new is None else new + "\n"
    return "".join(lines)


def line_of(text, line):
    """1-based number of the line `line` in text."""
    numbers = [i + 1 for i, l in enumerate(text.splitlines()) if l == line]
    assert len(numbers) == 1, f"{line!r} is not one line of the input"
    return numbers[0]


class BadInput(sc.StrataTestCase):

    OUT = "out.h5"

    def expect_input_error(self, args, fragments=(), patterns=(), out=OUT, ranks=None):
        """Runs strata; asserts exit 2, each fragment and pattern in stderr,
        no price table and no output file. Returns the result."""
        res = self.strata(*args, ranks=ranks)
        self.assertExit(res, 2)
        for fragment in fragments:
            self.assertInOutput(fragment, res.stderr, res)
        for pattern in patterns:
            if not re.search(pattern, res.stderr):
                self.fail(f"stderr does not match {pattern!r}:{res.describe()}")
        # Nothing computed: no table row for the instrument.
        self.assertNotRegex(res.stdout, r"(?m)^probe_call\s",
                            f"a price table was printed:{res.describe()}")
        self.assertNoOutput(res, out)
        return res

    def assertNoOutput(self, res, out):
        if out is not None:
            self.assertFalse(os.path.exists(self.path(out)),
                             f"{out} exists after a failed run:{res.describe()}")
        leftovers = sc.files_under(self.tmp, ".h5")
        self.assertEqual(leftovers, [], f"HDF5 files left behind:{res.describe()}")
        self.assertFalse(os.path.exists(self.path("out")),
                         f"the default output directory out/ was created:{res.describe()}")

    def run_input(self, name, text, *extra, **kw):
        """Writes the input `name`, then expect_input_error on `run name -o out.h5`."""
        self.write(name, text)
        return self.expect_input_error(["run", name, "-o", self.OUT, *extra], **kw)

    # --- the valid input is valid ---------------------------------------------

    def test_valid_minimal_input_runs(self):
        # Guards every case below: each differs from this input in one thing.
        self.write("valid.toml", VALID)
        res = self.strata("run", "valid.toml", "-o", self.OUT)
        self.assertExit(res, 0)
        self.assertTrue(os.path.isfile(self.path(self.OUT)), res.describe())

    # --- keys ---------------------------------------------------------------

    def test_unknown_key_in_pricing(self):
        text = replace_line(VALID, "paths = 1000", "pathz = 1000")
        line = line_of(text, "pathz = 1000")
        self.run_input("unknown_key.toml", text,
                       fragments=[f"unknown_key.toml:{line}", "pathz", "'pricing.paths'"])

    def test_unknown_key_in_asset(self):
        text = replace_line(VALID, "vol = 0.2", "vool = 0.2")
        line = line_of(text, "vool = 0.2")
        self.run_input("unknown_asset_key.toml", text,
                       fragments=[f"unknown_asset_key.toml:{line}", "vool"],
                       patterns=[r"'(pricing\.asset\.(\d+|N)\.)?vol'"])

    def test_missing_required_key(self):
        text = replace_line(VALID, "strike = 100.0", None)
        # The instrument's table header is where the key is missing.
        line = line_of(text, "[[pricing.instrument]]")
        self.run_input("missing_strike.toml", text,
                       fragments=[f"missing_strike.toml:{line}", "strike"],
                       patterns=[r"(?i)missing|required"])

    # --- types and ranges ---------------------------------------------------

    def test_wrong_type(self):
        text = replace_line(VALID, "paths = 1000", 'paths = "many"')
        line = line_of(text, 'paths = "many"')
        self.run_input("wrong_type.toml", text,
                       fragments=[f"wrong_type.toml:{line}", "pricing.paths", "integer"])

    def test_negative_paths(self):
        text = replace_line(VALID, "paths = 1000", "paths = -5")
        line = line_of(text, "paths = -5")
        self.run_input("negative_paths.toml", text,
                       fragments=[f"negative_paths.toml:{line}", "pricing.paths", "-5"],
                       patterns=[r">=\s*1\b|\[1, |at least 1"])  # the allowed range

    def test_out_of_range_vol(self):
        text = replace_line(VALID, "vol = 0.2", "vol = 7.5")
        line = line_of(text, "vol = 7.5")
        self.run_input("vol_range.toml", text,
                       fragments=[f"vol_range.toml:{line}", "vol", "7.5"],
                       patterns=[r"\[0,\s*5\]|<=\s*5\b"])  # the allowed range

    def test_paths_beyond_what_can_run(self):
        # 2^63 - 1 paths is a valid TOML integer >= 1, but no run can do it
        # (path ids key the random numbers; the plan overflows): an input
        # error before anything is allocated or written.
        text = replace_line(VALID, "paths = 1000", "paths = 9223372036854775807")
        line = line_of(text, "paths = 9223372036854775807")
        self.run_input("huge_paths.toml", text,
                       fragments=[f"huge_paths.toml:{line}", "pricing.paths"])

    def test_bad_choice_suggests_nearest(self):
        text = replace_line(VALID, 'option = "call"', 'option = "cal"')
        line = line_of(text, 'option = "cal"')
        self.run_input("bad_choice.toml", text,
                       fragments=[f"bad_choice.toml:{line}", "option", "cal", "'call'"])

    def test_unknown_model(self):
        text = replace_line(VALID, 'model = "pricing"', 'model = "pricng"')
        line = line_of(text, 'model = "pricng"')
        # It names the valid model(s); with one model the list is the hint.
        self.run_input("unknown_model.toml", text,
                       fragments=[f"unknown_model.toml:{line}", "run.model", "pricng"],
                       patterns=[r"pricng.*\bpricing\b"])

    # --- references between tables -------------------------------------------

    def test_instrument_on_unknown_asset(self):
        text = replace_line(VALID, 'assets = ["A"]', 'assets = ["B"]')
        line = line_of(text, 'assets = ["B"]')
        self.run_input("unknown_asset.toml", text,
                       fragments=[f"unknown_asset.toml:{line}", "assets"],
                       patterns=[r"\bB\b"])

    def test_duplicate_instrument_name(self):
        text = VALID + SECOND_INSTRUMENT
        # The second `name = "probe_call"` is the offending line.
        lines = text.splitlines()
        line = [i + 1 for i, l in enumerate(lines) if l == 'name = "probe_call"'][1]
        self.run_input("duplicate.toml", text,
                       fragments=[f"duplicate.toml:{line}", "probe_call"],
                       patterns=[r"(?i)two|duplicate|unique|already"])

    # --- files ----------------------------------------------------------------

    def test_missing_input_file(self):
        self.expect_input_error(["run", "no_such_input.toml", "-o", self.OUT],
                                fragments=["no_such_input.toml"])

    def test_malformed_toml(self):
        text = replace_line(VALID, "rate = 0.05", "rate = = 0.05")
        line = line_of(text, "rate = = 0.05")
        self.run_input("malformed.toml", text,
                       fragments=["malformed.toml"],
                       patterns=[rf"malformed\.toml:{line}:\d+"])  # line:col

    def test_unwritable_output_path(self):
        # Root ignores permissions, so make the parent a regular file.
        self.write("afile", "not a directory\n")
        self.write("valid.toml", VALID)
        self.expect_input_error(["run", "valid.toml", "-o", "afile/x.h5"],
                                fragments=["afile/x.h5"], out="afile/x.h5")
        with open(self.path("afile"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "not a directory\n", "afile was changed")

    def test_empty_output_path(self):
        self.write("valid.toml", VALID)
        self.expect_input_error(["run", "valid.toml", "-o", ""], fragments=["-o", "run.output"])

    # --- --set and options ----------------------------------------------------

    def test_set_without_value(self):
        self.write("valid.toml", VALID)
        self.expect_input_error(["run", "valid.toml", "-o", self.OUT, "--set", "novalue"],
                                fragments=["--set", "novalue", "key=value"])

    def test_set_unknown_key(self):
        self.write("valid.toml", VALID)
        self.expect_input_error(
            ["run", "valid.toml", "-o", self.OUT, "--set", "pricing.pathz=5"],
            fragments=["--set pricing.pathz=5", "pricing.pathz", "'pricing.paths'"])

    def test_set_swapped_letters_suggest_the_key_not_a_tie(self):
        # "clf" is one swap from "cfl"; plain Levenshtein made it two edits,
        # as far as "lx", and the first declared of those won.
        dam_break = os.path.join(sc.SOURCE_DIR, "inputs", "shallow_water", "dam_break.toml")
        res = self.expect_input_error(["run", dam_break, "-o", self.OUT, "--set", "shallow_water.clf=0.4"],
                                      fragments=["did you mean 'shallow_water.cfl'"])
        self.assertNotIn("shallow_water.lx", res.stderr, res.describe())

    def test_set_dt_names_the_key_that_sets_the_step(self):
        # The grid models have no dt: their Courant number sets it.
        dam_break = os.path.join(sc.SOURCE_DIR, "inputs", "shallow_water", "dam_break.toml")
        self.expect_input_error(["run", dam_break, "-o", self.OUT, "--set", "shallow_water.dt=5"],
                                fragments=["'shallow_water.cfl'"])

    def test_misspelt_option_suggests_the_option(self):
        self.write("valid.toml", VALID)
        self.expect_input_error(["run", "valid.toml", "-o", self.OUT, "--precission", "fp32"],
                                fragments=["--precission", "did you mean '--precision'"])

    def test_set_misspelt_table_is_blamed_on_the_set(self):
        self.write("valid.toml", VALID)
        res = self.expect_input_error(["run", "valid.toml", "-o", self.OUT, "--set", "pricng.paths=10"],
                                      fragments=["--set pricng.paths=10", "did you mean 'pricing'"])
        self.assertNotIn("valid.toml", res.stderr, f"the file is blamed for --set:{res.describe()}")

    def test_set_overflowing_depth_is_blamed_on_the_depth(self):
        # sqrt(g H) overflows, so no time step: H's fault, not sim_time's.
        gaussian = os.path.join(sc.SOURCE_DIR, "inputs", "shallow_water", "gaussian.toml")
        res = self.expect_input_error(["run", gaussian, "-o", self.OUT, "--set", "shallow_water.H=1e308"],
                                      fragments=["--set shallow_water.H=1e308", "shallow_water.H = 1e+308"])
        self.assertNotIn("sim_time", res.stderr, f"sim_time is blamed:{res.describe()}")

    def test_bogus_backend(self):
        self.write("valid.toml", VALID)
        res = self.expect_input_error(
            ["run", "valid.toml", "-o", self.OUT, "--backend", "bogus"],
            fragments=["--backend", "bogus", "auto", "cuda", "host"])
        # The value came from --backend, not from a --set the user never gave.
        self.assertNotIn("--set", res.stderr, f"message blames --set:{res.describe()}")

    def test_unknown_option(self):
        self.write("valid.toml", VALID)
        self.expect_input_error(["run", "valid.toml", "-o", self.OUT, "--bogus"],
                                fragments=["--bogus"])

    def test_unknown_subcommand(self):
        self.write("valid.toml", VALID)
        self.expect_input_error(["runn", "valid.toml", "-o", self.OUT], fragments=["runn"])

    def test_no_subcommand(self):
        res = self.strata()
        self.assertExit(res, 2)
        self.assertTrue(res.stderr.strip(), f"no message:{res.describe()}")
        # The usage and every subcommand, not the complaint alone.
        self.assertInOutput("Usage:", res.stderr, res)
        for sub in ("run", "sweep", "validate", "doctor", "models"):
            self.assertRegex(res.stderr, rf"(?m)^\s+{sub}\s", res.describe())
        self.assertNoOutput(res, None)

    # --- under MPI ------------------------------------------------------------

    def test_bad_input_under_mpi_reports_once(self):
        text = replace_line(VALID, "paths = 1000", "pathz = 1000")
        line = line_of(text, "pathz = 1000")
        res = self.run_input("unknown_key.toml", text, ranks=2,
                             fragments=[f"unknown_key.toml:{line}", "'pricing.paths'"])
        count = res.stderr.count(f"unknown_key.toml:{line}")
        self.assertEqual(count, 1, f"the message is printed {count} times:{res.describe()}")


if __name__ == "__main__":
    sc.main()
