// A model's running instance, as the engine's step loop sees it. The engine
// owns the loop (engine/runtime/step_loop.hpp): it calls advance() step by
// step and, between steps, checks signals and wall time, runs the health
// check and writes checkpoints through save(). A model supplies the steps,
// its state and its results; it never handles signals or files itself.
//
// State goes to checkpoints in *global* layouts (grid cells by global index,
// particles with their ids, pricing's reduction-tree nodes by tree position),
// never as "rank r's memory", so a run may restart on another number of ranks
// wherever the model's reproducibility guarantee allows it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/runtime/model.hpp"

namespace strata {

// Collective writer of a model's state. Every rank makes the same sequence
// of calls with the same names; each call is collective.
class StateWriter {
 public:
  virtual ~StateWriter() = default;
  // A value every rank holds alike (rank 0's is stored).
  virtual void scalar(const std::string& name, std::int64_t value) = 0;
  virtual void scalar(const std::string& name, double value) = 0;
  // A distributed array in a global layout: this rank holds elements
  // [offset, offset + local.size()) of `global` elements (grid cells in
  // global order, particles sorted by id). Ranks' slabs must not overlap.
  virtual void array(const std::string& name, std::span<const double> local, std::int64_t offset,
                     std::int64_t global) = 0;
  // A distributed N-D array (a grid field, N = global.size() = 1..3,
  // slowest index first: {nz, ny, nx}): this rank holds the box [start,
  // start + count) of its owned cells, no halos, in `local` row-major (x
  // fastest). Boxes of the ranks must not overlap.
  virtual void box(const std::string& name, std::span<const double> local, std::span<const std::int64_t> global,
                   std::span<const std::int64_t> start, std::span<const std::int64_t> count) = 0;
  // Records of `width` values each, concatenated in rank order: for state
  // that is a set rather than an array (pricing's finished tree nodes).
  virtual void records(const std::string& name, std::span<const double> local, int width) = 0;
};

// Collective reader of what a StateWriter wrote (same names).
class StateReader {
 public:
  virtual ~StateReader() = default;
  virtual std::int64_t integer(const std::string& name) = 0;
  virtual double real(const std::string& name) = 0;
  // This rank's slab [offset, offset + local.size()) of a distributed array,
  // whatever decomposition wrote it.
  virtual void array(const std::string& name, std::span<double> local, std::int64_t offset) = 0;
  // This rank's box of a distributed N-D array, whatever boxes wrote it.
  virtual void box(const std::string& name, std::span<double> local, std::span<const std::int64_t> start,
                   std::span<const std::int64_t> count) = 0;
  // Every record of every writing rank, on every rank (width values each).
  virtual std::vector<double> records(const std::string& name, int width) = 0;
};

class Simulation {
 public:
  virtual ~Simulation() = default;

  // Steps of the whole run and steps done. Equal on every rank; a step is a
  // model's unit between which the engine may checkpoint (a time step, a
  // pricing chunk).
  virtual std::int64_t steps() const = 0;
  virtual std::int64_t steps_done() const = 0;
  // Does the next step. Collective.
  virtual void advance() = 0;

  // Work for the progress line: total and done, whole run ("paths", "steps").
  virtual double work_total() const { return static_cast<double>(steps()); }
  virtual double work_done() const { return static_cast<double>(steps_done()); }
  virtual std::string work_unit() const { return "steps"; }
  // The share of the run done, for the percentage and the ETA: work_done()
  // over work_total() unless the units of work differ in cost (pricing's
  // regression paths against paths with Greeks).
  virtual double work_fraction() const { return work_total() > 0 ? work_done() / work_total() : 1.0; }

  // Health: a description of the first non-finite value in this rank's
  // state ("NaN in payoff sums of instrument atm_call"), or nothing. Local;
  // the engine all-reduces it.
  virtual std::optional<std::string> nonfinite() const = 0;
  // Test-only (STRATA_TEST_INJECT_NAN): put a NaN into this rank's state.
  virtual void inject_nonfinite() = 0;

  // After restore(): the run that wrote the checkpoint expected `steps_then`
  // steps in all. A model that sizes its steps as it goes (pricing) sizes
  // them so that the count stays, rather than starting small again, so a
  // restart says "step k of N" with the N the stop said. Collective.
  virtual void resume_step_count(std::int64_t steps_then) { (void)steps_then; }

  // Checkpoints: the state after steps_done() steps. Collective.
  virtual void save(StateWriter& w) const = 0;
  // Replaces the state by a checkpoint's. Collective. The checkpoint may
  // come from another number of ranks and, for restart-safe keys such as
  // pricing.paths, from another value of them.
  virtual void restore(StateReader& r) = 0;

  // After a collective numerical failure (the health check, a CFL limit):
  // writes what the state is now, for the post-mortem, before the file is
  // marked failed. Collective; must not throw.
  virtual void record_failure() {}

  // Output a model hands to a background writer (BackgroundWriter) is in
  // the file when this returns. The engine calls it before anything else
  // touches HDF5: a checkpoint, the end of the run. `check`: a failed
  // write becomes a collective Error (collective call); false: waits and
  // reports nothing (local; a run that is failing already).
  virtual void flush_output(bool check = true) { (void)check; }

  // After the last step: writes the results to ctx.output and prints them.
  // Collective.
  virtual Performance finish() = 0;
};

}  // namespace strata
