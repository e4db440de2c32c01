"""strata against QuantLib's Monte Carlo engines on the same workload and
the same single core (called by scripts/bench/pricing).

Both run pinned to one core (sched_setaffinity, what taskset does), strata
as one rank with OMP_NUM_THREADS=1. Both sample exactly (log-normal steps,
pseudo-random), so a path costs the same variance in both and equal path
counts give equal standard errors up to noise; the ratio is still taken at
equal standard error: the time each needs for the same stderr is
seconds * (stderr / target)^2, so the ratio is
(seconds_QL * se_QL^2) / (seconds_strata * se_strata^2)."""
import os
import subprocess
import sys
import tomllib

import h5py

strata, root, ql_dir, out, paths = sys.argv[1:6]
paths = int(paths)
core = min(os.sched_getaffinity(0))
env = dict(os.environ, OMP_NUM_THREADS="1")


def pinned(cmd):
    return subprocess.run(cmd, env=env, check=True, capture_output=True, text=True,
                          preexec_fn=lambda: os.sched_setaffinity(0, {core})).stdout


def run_strata(toml, inst, n, sets):
    h5 = f"{out}/peer_{inst}.h5"
    cmd = [strata, "run", toml, "--backend", "host", "--set", f"pricing.paths={n}", "-o", h5, "--overwrite"]
    for s in sets:
        cmd += ["--set", s]
    pinned(cmd)
    f = h5py.File(h5, "r")
    g = f[f"pricing/{inst}"]
    return f["performance/paths"][()], f["performance/compute_seconds"][()], g["price"][()], g["stderr"][()]


def run_quantlib(prog, n, antithetic):
    # A QuantLib sample is an antithetic pair when antithetic is on.
    words = pinned([f"{ql_dir}/{prog}", str(n // 2 if antithetic else n), "1" if antithetic else "0", "42"]).split()
    v = dict(zip(words[::2], words[1::2]))
    return float(v["paths"]), float(v["seconds"]), float(v["price"]), float(v["stderr"])


# label, input, instrument, QuantLib program, steps per path, strata's extra
# settings, strata paths, QuantLib paths. The Asian runs on QuantLib's grid,
# the 12 fixing dates (steps_per_year = 12): the same 12 exact steps.
cases = [("European, 1 step", "european_bench", "atm_call", "european", 1, [], paths // 2, paths // 32),
         ("arithmetic Asian, 12 fixings = 12 steps", "asian_bench", "asian_call", "asian", 12,
          ["pricing.steps_per_year=12"], paths // 16, paths // 512)]
print(f"peer: QuantLib {os.path.basename(ql_dir)} programs, one core (cpu {core}), one rank, one thread")
for label, name, inst, prog, steps, sets, n_strata, n_ql in cases:
    toml = f"{root}/inputs/pricing/{name}.toml"
    antithetic = tomllib.load(open(toml, "rb"))["pricing"].get("antithetic", False)
    s_paths, s_sec, s_price, s_se = run_strata(toml, inst, n_strata, sets)
    q_paths, q_sec, q_price, q_se = run_quantlib(prog, n_ql, antithetic)
    unit, scale = ("paths/s", 1) if steps == 1 else ("path-steps/s", steps)
    s_rate, q_rate = s_paths * scale / s_sec, q_paths * scale / q_sec
    equal_se = (q_sec * q_se ** 2) / (s_sec * s_se ** 2)
    print(f"{label}: strata {s_rate:.3e} {unit} ({s_paths:.0f} paths, {s_price:.6f} +- {s_se:.1e}); "
          f"QuantLib {q_rate:.3e} {unit} ({q_paths:.0f} paths, {q_price:.6f} +- {q_se:.1e})")
    print(f"  strata/QuantLib: {s_rate / q_rate:.1f}x in {unit}, {equal_se:.1f}x in time to equal stderr "
          f"(stderr x sqrt(paths): strata {s_se * s_paths ** 0.5:.3f}, QuantLib {q_se * q_paths ** 0.5:.3f}); "
          f"target >= 20x")
