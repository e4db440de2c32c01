"""Mutated inputs never crash, hang, leave stray files or end `complete`
over a non-finite result.

Every example input under inputs/ is shrunk to a test size (through --set,
so the file itself is what gets mutated), then mutated at the text level:
a value replaced by an extreme (0, negative, 1e308, nan, inf, 2^63, a huge
or tiny multiple), a string emptied or misspelt, a key misspelt or dropped,
a line duplicated, a table header broken, the file truncated or given a
garbage line. Each case runs in its own directory (every 8th on 2 ranks)
and must:

- exit 0, 2, 3, 4 or 75 (never a signal, an abort or an uncaught exception);
- end within RUN_BUDGET_S, or stop within STOP_BOUND_S of a SIGUSR1 sent
  then (exit 75 or one of the others: the signal is honoured in any phase);
- after exit 2 (bad input), leave no file or folder behind;
- after exit 0, have status `complete` and only finite numbers in its
  results (/pricing, /diagnostics, /observables, /performance).

The mutations come from a seeded generator (STRATA_FUZZ_SEED, default
20261125; STRATA_FUZZ_CASES, default 300), so a failure is repeatable: its
message holds the case number, the input, the mutation and the command.
"""

import concurrent.futures
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib

from fault_support import (SOURCE_DIR, STRATA_BIN, check_binary, child_env, make_tmpdir, remove_tmpdir,
                           strata_command)
import unittest

import h5py
import numpy as np

SEED = int(os.environ.get("STRATA_FUZZ_SEED", "20261125"))
CASES = int(os.environ.get("STRATA_FUZZ_CASES", "300"))
# Seconds a case may run before it is asked to stop (SIGUSR1, as Slurm's
# warning signal), and seconds it then has to exit. Generous: CI machines
# are loaded, and a stop includes writing a checkpoint.
RUN_BUDGET_S = 4.0
STOP_BOUND_S = 30.0
ALLOWED_EXITS = {0, 2, 3, 4, 75}
RESULT_GROUPS = ("pricing", "diagnostics", "observables", "performance")
# Summary-table columns that always hold a number; elsewhere in a table NaN
# is documented as "there is none", inf never is.
ALWAYS_FINITE = {"price", "stderr", "ci95_low", "ci95_high", "paths", "maturity"}

# Test sizes, as upper bounds on what the file says (key -> cap); applied
# only where the file sets the key or the model has it, and never to the key
# a case mutates.
SHRINK = {
    "pricing": {"pricing.paths": 4096, "pricing.regression_paths": 2048},
    "diffusion": {"diffusion.nx": 20, "diffusion.ny": 20, "diffusion.nz": 20},
    "euler2d": {"euler2d.nx": 40, "euler2d.nz": 20, "euler2d.sim_time": 100.0},
    "shallow_water": {"shallow_water.nx": 40, "shallow_water.ny": 40},
    "md": {"md.steps": 60},
    "nbody": {"nbody.n": 128},
}
# md's lattice is a list; the cap replaces it when larger.
MD_CELLS = [3, 3, 3]

EXTREME_NUMBERS = ["0", "-1", "-0.0", "1e308", "-1e308", "1e-308", "nan", "inf", "-inf",
                   "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e30",
                   "2147483648", "0.5", "3"]
ASSIGNMENT = re.compile(r'^(\s*)([A-Za-z_][\w.-]*|"[^"]*")(\s*=\s*)(.*?)(\s*(#.*)?)$')


def example_inputs():
    found = []
    for root, _, names in os.walk(os.path.join(SOURCE_DIR, "inputs")):
        for name in names:
            if name.endswith(".toml") and "sweeps" not in root:
                found.append(os.path.join(root, name))
    return sorted(found)


def mutate_value(rng, value):
    """A replacement for one TOML value (the text right of `=`)."""
    v = value.strip()
    if v.startswith('"'):
        inner = v.strip('"')
        return rng.choice(['""', '"x"', f'"{inner}x"', f'"{inner[:-1]}"', '"' + "a" * 5000 + '"',
                           "42", "true", f'"{inner.upper()}"'])
    if v in ("true", "false"):
        return rng.choice(["1", '"yes"', "false" if v == "true" else "true"])
    if v.startswith("["):
        return rng.choice(["[]", "[1e308]", '["x"]', "[[1.0]]", "[nan, nan, nan]", "[0, 0, 0]", "[-1, 2, 3]"])
    try:
        number = float(v.replace("_", ""))
    except ValueError:
        return rng.choice(EXTREME_NUMBERS)
    choices = EXTREME_NUMBERS + [repr(number * 1e6), repr(number * 1e-6), repr(-number)]
    if number.is_integer() and abs(number) < 1e15:
        choices += [str(int(number) * 1000), str(int(number) + 1), str(int(number) - 1)]
    return rng.choice(choices)


def misspell(rng, key):
    if len(key) < 3:
        return key + "x"
    i = rng.randrange(1, len(key) - 1)
    return rng.choice([key[:i] + key[i + 1:], key[:i] + key[i + 1] + key[i] + key[i + 2:], key + "s"])


def mutate(rng, text):
    """(new text, description, mutated key or None)."""
    lines = text.split("\n")
    assignments = [i for i, line in enumerate(lines) if ASSIGNMENT.match(line) and not line.lstrip().startswith("#")]
    headers = [i for i, line in enumerate(lines) if line.lstrip().startswith("[")]
    kind = rng.choices(["value", "value", "value", "value", "key", "drop", "duplicate", "header", "truncate",
                        "garbage"], k=1)[0]
    if kind in ("value", "key", "drop", "duplicate") and assignments:
        i = rng.choice(assignments)
        indent, key, eq, value, tail, _ = ASSIGNMENT.match(lines[i]).groups()
        section = next((lines[h].strip() for h in reversed(headers) if h < i), "")
        table = section.strip("[]").strip()
        full_key = f"{table}.{key}" if table else key
        if kind == "value":
            new = mutate_value(rng, value)
            lines[i] = f"{indent}{key}{eq}{new}{tail}"
            return "\n".join(lines), f"{section} {key} = {value} -> {new}", full_key
        if kind == "key":
            new = misspell(rng, key)
            lines[i] = f"{indent}{new}{eq}{value}{tail}"
            return "\n".join(lines), f"{section} key {key} -> {new}", full_key
        if kind == "drop":
            del lines[i]
            return "\n".join(lines), f"{section} {key} dropped", full_key
        lines.insert(i + 1, lines[i])
        return "\n".join(lines), f"{section} {key} duplicated", full_key
    if kind == "header" and headers:
        i = rng.choice(headers)
        new = rng.choice([misspell(rng, lines[i].strip()), "[run", "[[run]]", "[]"])
        old, lines[i] = lines[i], new
        return "\n".join(lines), f"header {old.strip()} -> {new}", None
    if kind == "truncate":
        cut = rng.randrange(0, max(1, len(text)))
        return text[:cut], f"truncated at byte {cut} of {len(text)}", None
    garbage = rng.choice(["= 1", "x = ", "[[", "\x00\x01", "key = 'unterminated", "a.b.c = {", "ü = 1"])
    i = rng.randrange(0, len(lines) + 1)
    lines.insert(i, garbage)
    return "\n".join(lines), f"line {i + 1} inserted: {garbage!r}", None


def shrink_args(original, mutated_key):
    """--set overrides that bring an example input to test size."""
    model = original.get("run", {}).get("model")
    table = original.get(model, {}) if model else {}
    args = []
    for key, cap in SHRINK.get(model, {}).items():
        if key == mutated_key:
            continue
        name = key.split(".", 1)[1]
        current = table.get(name)
        if current is None and key.endswith("regression_paths"):
            continue
        if isinstance(current, (int, float)) and not isinstance(current, bool) and current <= cap:
            continue
        args += ["--set", f"{key}={cap}"]
    if model == "md" and mutated_key != "md.cells":
        cells = table.get("cells")
        if not (isinstance(cells, list) and all(isinstance(c, int) and c <= 3 for c in cells)):
            args += ["--set", "md.cells=" + str(MD_CELLS).replace(" ", "")]
    return args


def snapshot(root):
    entries = set()
    for dirpath, dirs, names in os.walk(root):
        for name in dirs + names:
            entries.add(os.path.relpath(os.path.join(dirpath, name), root))
    return entries


def nonfinite_results(path):
    """Paths of result datasets holding a non-finite number."""
    bad = []

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.dtype.kind == "f":
            values = obj[()]
            # A summary table's NaN marks "none" (docs/output.md): no
            # closed form, a floating strike, a per-asset Greek. The
            # instrument's own datasets are checked as plain datasets.
            if name.startswith("summary/") and name.split("/")[-1] not in ALWAYS_FINITE:
                values = values[~np.isnan(values)]
            if not np.all(np.isfinite(values)):
                bad.append(name)

    with h5py.File(path, "r") as f:
        status = f.attrs.get("status")
        status = status.decode() if isinstance(status, bytes) else str(status)
        for group in RESULT_GROUPS:
            if group in f:
                f[group].visititems(visit)
    return status, bad


def run_case(case, inputs):
    """Runs one mutated input; returns None or a failure description. A
    case whose MPI runtime failed to start (Open MPI's singleton start can
    fail on a machine loaded by other jobs, before strata's code runs) is
    run once more."""
    failure = run_case_once(case, inputs)
    if failure and "error occurred in MPI_Init" in failure:
        failure = run_case_once(case, inputs)
    return failure


def run_case_once(case, inputs):
    rng = random.Random(SEED * 1000003 + case)
    source = inputs[case % len(inputs)]
    with open(source, encoding="utf-8") as f:
        text = f.read()
    original = tomllib.loads(text)
    mutated, what, key = mutate(rng, text)
    tmp = make_tmpdir(f"fuzz{case}")
    try:
        # Files an input names (book.csv) travel with it.
        for name in os.listdir(os.path.dirname(source)):
            path = os.path.join(os.path.dirname(source), name)
            if os.path.isfile(path) and not name.endswith(".toml"):
                shutil.copy(path, tmp)
        with open(os.path.join(tmp, "input.toml"), "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(mutated)
        before = snapshot(tmp)
        ranks = 2 if case % 8 == 7 else None
        args = ["run", "input.toml", "-o", "out/case.h5"] + shrink_args(original, key)
        cmd = strata_command(args, ranks)
        label = (f"case {case} ({os.path.relpath(source, SOURCE_DIR)}: {what}) on {ranks or 1} rank(s)\n"
                 f"  $ {' '.join(cmd)}")
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=tmp, env=child_env({"STRATA_TEST_FAKE_NVML": None}),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        signalled = False
        try:
            out, err = proc.communicate(timeout=RUN_BUDGET_S)
        except subprocess.TimeoutExpired:
            signalled = True
            proc.send_signal(signal.SIGUSR1)
            try:
                out, err = proc.communicate(timeout=STOP_BOUND_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
                return f"{label}\n  still running {STOP_BOUND_S:.0f} s after SIGUSR1 (hang)"
        elapsed = time.monotonic() - start
        code = proc.returncode
        text_out = (out + err).decode("utf-8", "replace")
        tail = "\n    ".join(text_out.strip().splitlines()[-6:])
        if "error occurred in MPI_Init" in text_out:
            tail += "\n    (error occurred in MPI_Init)"
        if code not in ALLOWED_EXITS:
            return f"{label}\n  exit {code} after {elapsed:.1f} s (signalled: {signalled})\n    {tail}"
        if "Traceback" in text_out or "terminate called" in text_out:
            return f"{label}\n  crash text in the output:\n    {tail}"
        if code == 2:
            stray = sorted(snapshot(tmp) - before)
            if stray:
                return f"{label}\n  exit 2 left {stray}\n    {tail}"
        if code == 0:
            path = os.path.join(tmp, "out", "case.h5")
            if not os.path.isfile(path):
                return f"{label}\n  exit 0 without an output file\n    {tail}"
            status, bad = nonfinite_results(path)
            if status != "complete":
                return f"{label}\n  exit 0 with status {status!r}"
            if bad:
                return f"{label}\n  `complete` with non-finite results: {bad[:6]}\n    {tail}"
        return None
    finally:
        remove_tmpdir(tmp)


class FuzzInputs(unittest.TestCase):
    def test_mutated_example_inputs(self):
        check_binary()
        inputs = example_inputs()
        self.assertGreater(len(inputs), 20, "the example inputs were not found")
        start = time.monotonic()
        failures = []
        # Two cases at a time: most are a second of one core.
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for failure in pool.map(lambda c: run_case(c, inputs), range(CASES)):
                if failure:
                    failures.append(failure)
        print(f"{CASES} mutated inputs (seed {SEED}) in {time.monotonic() - start:.0f} s, "
              f"{len(failures)} failed", file=sys.stderr)
        if failures:
            self.fail(f"{len(failures)} of {CASES} mutated inputs misbehaved:\n" + "\n".join(failures))


if __name__ == "__main__":
    unittest.main()
