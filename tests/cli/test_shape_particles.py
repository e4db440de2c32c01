#!/usr/bin/env python3
"""What an nbody step asks of a device (/performance/shape, docs/gpu.md),
counted on whatever backend runs the test:

- one rank: a step is two launches in `compute` (the first kick fused with
  the drift; the last kick) and one in `forces` (every source in one
  launch), plus the initial forces before the first step; the potential is
  summed inside the force launch of a step with a diagnostics row, never by
  a launch of its own;
- the host waits for the device only on steps that write a diagnostics row
  or a frame (and, on a large run, every few steps to bound how far it runs
  ahead): a run of 20 steps with a row every 5 waits 4 times, not 20;
- two ranks: each force evaluation is one launch per rank's block of
  sources (the blocks are broadcast while the previous one is summed);
- md: a step waits in `compute` only for a thermo row or a frame (the
  rebuild test's reduction, in `neighbours`, still reads the device every
  step: the one wait left between rebuilds); on one rank a step's forces
  are two launches, a pack that makes the ghosts from their owned atoms
  (the step's whole ghost forwarding) and the pair forces; on two ranks a
  step without a rebuild computes its pair forces in two launches, the interior atoms'
  while the ghost messages travel, then the border atoms', each after a
  launch that packs the positions its rows gather;
- md's pair forces read a row entry in 4 bytes (tiled lists: a warp's
  reads of one column are contiguous) and gather a neighbour's position
  from one 32-byte sector (x, y, z packed), not 32 bytes and three
  sectors: a force evaluation declares at most 1,500 bytes an atom.

The counts are the run's structure, not its speed (test_shape_counts.py).
"""

import os
import re

import h5py
import numpy as np

import strata_cli as sc

PLUMMER = os.path.join(sc.SOURCE_DIR, "inputs", "nbody", "plummer.toml")
MD = os.path.join(sc.SOURCE_DIR, "inputs", "md", "benchmark.toml")
DT = 0.0078125   # plummer.toml's step: a power of two, so t_end / dt is exact


def counts(path):
    with h5py.File(path, "r") as f:
        return {phase: {k: np.asarray(v[()]) for k, v in g.items()} for phase, g in f["performance/shape"].items()}


class NbodyShape(sc.StrataTestCase):

    def run_nbody(self, name, steps, diag_every, output_every, ranks=None, n=512):
        res = self.strata("run", PLUMMER, "-o", name, "--set", f"nbody.n={n}", "--set", f"nbody.t_end={steps * DT}",
                          "--set", f"nbody.diag_every={diag_every}", "--set", f"nbody.output_every={output_every}",
                          "--set", "run.async_output=false", ranks=ranks)
        self.assertExit(res, 0)
        return counts(self.path(name))

    def test_one_rank_step_is_three_launches_and_waits_only_for_rows(self):
        steps, diag_every, output_every = 20, 5, 10
        c = self.run_nbody("one.h5", steps, diag_every, output_every)
        self.assertEqual(int(c["compute"]["launches"]), 2 * steps)
        self.assertEqual(int(c["forces"]["launches"]), steps + 1)
        self.assertEqual(int(c["forces"]["waits"]), 0)
        waited = [s for s in range(1, steps + 1) if s % diag_every == 0 or s % output_every == 0 or s == steps]
        self.assertEqual(int(c["compute"]["waits"]), len(waited))
        self.assertEqual(int(c["compute"]["bytes_to_host"]), 0)
        self.assertEqual(int(c["compute"]["bytes_to_device"]), 0)
        # Every launch covers every body: the device is never given a sliver.
        self.assertEqual(int(c["compute"]["threads_min"]), 512)
        self.assertEqual(int(c["forces"]["threads_min"]), 512)

    def test_two_ranks_sum_one_launch_per_block(self):
        steps = 6
        c = self.run_nbody("two.h5", steps, 3, 0, ranks=2)
        self.assertEqual(int(c["compute"]["launches"]), 2 * steps)
        self.assertEqual(int(c["forces"]["launches"]), 2 * (steps + 1))
        self.assertEqual(int(c["forces"]["threads_min"]), 256)


class MdShape(sc.StrataTestCase):

    def test_md_step_waits_only_for_rows_and_frames(self):
        steps, thermo_every, output_every = 40, 10, 20
        res = self.strata("run", MD, "-o", "md.h5", "--set", "md.cells=[6,6,6]", "--set", f"md.steps={steps}",
                          "--set", f"md.thermo_every={thermo_every}", "--set", f"md.output_every={output_every}",
                          "--set", "run.async_output=false")
        self.assertExit(res, 0)
        c = counts(self.path("md.h5"))
        rows = [s for s in range(1, steps + 1) if s % thermo_every == 0 or s % output_every == 0 or s == steps]
        self.assertEqual(int(c["compute"]["waits"]), len(rows))
        self.assertEqual(int(c["compute"]["launches"]), 2 * steps)   # kick-drift, kick
        # The start's forces and one a step, each a pack and a pair launch
        # over every atom: one rank's ghosts are periodic copies, packed
        # from their owned atoms plus their shifts in the pack's launch, so
        # a step without a rebuild launches no swap's copy (six more a step
        # when it did).
        builds = re.search(r"(\d+) neighbour-list builds", res.stdout)
        self.assertIsNotNone(builds, res.stdout)
        self.assertGreater(int(builds.group(1)), 1)   # steps with and without a rebuild
        self.assertEqual(int(c["forces"]["launches"]), 2 * (1 + steps))
        atoms = 4 * 6 ** 3
        per_atom = float(np.sum(c["forces"]["size_device_bytes"])) / (atoms * (steps + 1))
        # About 81 neighbours a row (padding included) at 4 + 32/3 bytes,
        # the atom's own position, forces and the pack: about 1,300 bytes
        # (fp64); row-major lists and three gathered arrays made it 5,200.
        self.assertLess(per_atom, 1500)
        self.assertGreater(per_atom, 1000)

    def test_md_two_ranks_compute_the_interior_while_the_ghosts_travel(self):
        # 11^3 fcc cells on 2 ranks: each sub-box is thicker than twice the
        # ghost cutoff, so it has interior atoms.
        steps = 40
        res = self.strata("run", MD, "-o", "md2.h5", "--set", "md.cells=[11,11,11]", "--set", f"md.steps={steps}",
                          "--set", "run.async_output=false", ranks=2)
        self.assertExit(res, 0)
        builds = re.search(r"(\d+) neighbour-list builds", res.stdout)
        self.assertIsNotNone(builds, res.stdout)
        rebuilds = int(builds.group(1)) - 1   # the first build is the start's
        c = counts(self.path("md2.h5"))
        # `forces`: the start's and each rebuild step's pair forces, a
        # pack of the positions and one launch; a step without a rebuild
        # forwards the ghosts there: six swaps' copies (a local swap's
        # ghosts, a remote swap's message), the remote axis's two messages
        # unpacked, and the pair forces in two launches, the interior's
        # while those messages travel and the border's after them, each
        # after its atoms' pack (two launches more than forces over all
        # atoms once the ghosts are in, the cost of the overlap).
        self.assertEqual(int(c["forces"]["launches"]), 2 * (1 + rebuilds) + 12 * (steps - rebuilds))


if __name__ == "__main__":
    sc.main()
