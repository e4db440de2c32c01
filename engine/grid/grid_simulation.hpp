// What every grid model's run has in common, so a model supplies only its
// physics: the step count from a fixed dt (the last step shortened to end
// exactly at sim_time, as miniWeather does), output frames every
// output_interval of model time with a diagnostics row each, checkpoints of
// the state fields in global layout plus the clock and output counters (so
// a restart, on any number of ranks, continues bitwise), the local NaN/Inf
// check of the state, and the run's performance figures.
//
// A model derives GridSimulation<T> (T = float or double), builds its grid
// and fields in its constructor, then calls begin(); it implements step(dt),
// state(), diagnostics(), bytes_per_cell_update() and print_summary(); the
// first entries of the t = 0 diagnostics row are kept and checkpointed
// under keys it names. See models/diffusion for the smallest example.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/host_copy.hpp"
#include "engine/grid/grid.hpp"
#include "engine/grid/grid_output.hpp"
#include "engine/io/background_writer.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/mpi_context.hpp"
#include "engine/runtime/simulation.hpp"
#include "engine/runtime/step_count.hpp"
#include "engine/runtime/stop_request.hpp"
#include "engine/runtime/timers.hpp"
#include "engine/config/config.hpp"

namespace strata::grid {

struct GridClock {
  double sim_time = 0;          // model seconds to run
  double dt = 0;                // model seconds per step (the last may be shorter)
  double output_interval = 0;   // model seconds between frames; 0: first and last only
  std::string span_key = "sim_time";   // the key that sets sim_time, for errors
};

template <class T>
class GridSimulation : public Simulation {
 public:
  std::int64_t steps() const override { return steps_; }
  std::int64_t steps_done() const override { return step_; }
  double time() const { return time_; }
  const GridClock& clock() const { return clock_; }
  // The diagnostics row last written (at the latest output).
  const std::vector<double>& last_diagnostics() const { return last_diagnostics_; }
  // The first entries (one per begin()'s initial_keys) of the diagnostics
  // row of t = 0, what later rows are compared with; a restart restores
  // them. Empty while that row is being computed.
  const std::vector<double>& initial_diagnostics() const { return initial_; }

  // A step queues its launches and waits for the device only where the
  // host reads the fields next (an output step) or every fence_every()
  // steps, so that the host is never more than about kQueuedBytes of the
  // steps' memory traffic (about 0.07 s of an H200 at its copy bandwidth)
  // ahead of the device: a signal or the wall-time check acts on a state
  // at most that old (STYLE.md: bound signal latency by the work between
  // checks), and a small grid does not stop the device every few steps.
  void advance() override {
    const double dt = step_ + 1 == steps_ ? clock_.sim_time - time_ : clock_.dt;
    const std::int64_t next = step_ + 1;
    // The clock from the step count (no drift from adding dt up), exact at the end.
    const double next_time = next == steps_ ? clock_.sim_time : static_cast<double>(next) * clock_.dt;
    const bool output = next == steps_ || (clock_.output_interval > 0 && next_time >= next_output_time() * (1 - 1e-12));
    {
      // The steps alone (not the output and diagnostics that follow them)
      // are what the performance figures measure: the device's time for
      // the queued steps lands in the step that waits for them.
      const auto t0 = std::chrono::steady_clock::now();
      ctx_.mpi.collective([&] { step(static_cast<T>(dt)); });
      if (output || next % fence_every() == 0) ctx_.device.fence();
      step_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    step_ = next;
    time_ = next_time;
    ++steps_this_run_;
    if (output) write_output();
  }

  // One reduction over every state field (one wait); the fields are
  // looked at one by one only to name the one that failed.
  std::optional<std::string> nonfinite() const override {
    const Box box = grid_->owned();
    const std::vector<Field<T>*> fields = const_cast<GridSimulation*>(this)->state();
    double bad = 0;
    kernels::grid::FieldSet<const T> set{};
    const auto scan = [&] {
      using kernels::grid::NonFiniteCells;
      bad += parallel_reduce(ctx_.device, box.size(), kernels::grid::BoxValue<NonFiniteCells<T>>{box, {set}}, 0.0,
                             Plus{});
      set.count = 0;
    };
    for (const Field<T>* f : fields)
      for (int c = 0; c < f->ncomp(); ++c) {
        if (set.count == kernels::grid::kMaxFields) scan();
        set.layout = f->view().component(0);
        set.origin[set.count++] = f->view().component(c).origin;
      }
    if (set.count > 0) scan();
    if (bad == 0) return std::nullopt;
    for (const Field<T>* f : fields)
      for (int c = 0; c < f->ncomp(); ++c) {
        using kernels::grid::NonFiniteCell;
        const double in_field = parallel_reduce(
            ctx_.device, box.size(),
            kernels::grid::BoxValue<NonFiniteCell<T>>{box, NonFiniteCell<T>{f->view().component(c)}}, 0.0, Plus{});
        if (in_field > 0)
          return std::to_string(static_cast<long long>(in_field)) + " non-finite value(s) in field " + f->name(c) +
                 " at t = " + std::to_string(time_) + " s";
      }
    return std::nullopt;
  }

  void inject_nonfinite() override {
    Field<T>& f = *state().front();
    std::vector<T> all(f.buffer().size());
    f.buffer().copy_to_host(all.data(), all.size());
    host_view(*grid_, all, f.ncomp())(0, 0, 0) = std::numeric_limits<T>::quiet_NaN();
    f.buffer().copy_from_host(all.data(), all.size());
  }

  void save(StateWriter& w) const override {
    w.scalar("grid/step", step_);
    w.scalar("grid/time", time_);
    w.scalar("grid/frames", output_->frames());
    w.scalar("grid/rows", output_->rows());
    w.scalar("grid/outputs_done", outputs_done_);
    for (const Field<T>* f : const_cast<GridSimulation*>(this)->state()) save_field(w, *grid_, ctx_.device, *f);
    for (std::size_t i = 0; i < initial_keys_.size(); ++i) w.scalar(initial_keys_[i], initial_.at(i));
  }

  void restore(StateReader& r) override {
    step_ = r.integer("grid/step");
    time_ = r.real("grid/time");
    outputs_done_ = r.integer("grid/outputs_done");
    for (Field<T>* f : state()) restore_field(r, *grid_, ctx_.device, *f);
    initial_.clear();
    for (const std::string& key : initial_keys_) initial_.push_back(r.real(key));
    const std::int64_t frames = r.integer("grid/frames"), rows = r.integer("grid/rows");
    output_->resume(frames, rows);
  }

  void flush_output(bool check) override {
    if (!writer_) return;
    auto t = ctx_.timers.scope("output");
    if (check)
      writer_->drain();
    else
      writer_->wait();
  }

  // The state at the failure as one more frame and diagnostics row (unless
  // this step's are already written), so the blow-up can be looked at.
  void record_failure() override {
    if (failure_recorded_ || output_->frames() == 0 || last_output_step_ == step_) return;
    failure_recorded_ = true;
    try {
      write_output(/*check=*/false);
    } catch (const std::exception&) {
      // The verdict is already known; a failing diagnostic must not hide it.
    }
  }

  Performance finish() override {
    if (!last_diagnostics_.empty()) print_summary(last_diagnostics_);
    const double seconds = ctx_.mpi.max(step_seconds_);
    const double cells = static_cast<double>(grid_->spec().n[0] * grid_->spec().n[1] * grid_->spec().n[2]);
    const double updates = cells * static_cast<double>(steps_this_run_);
    Performance perf;
    perf.figures = {{"cells", "", cells},
                    {"steps", "", static_cast<double>(steps_)},
                    {"steps_this_run", "", static_cast<double>(steps_this_run_)},
                    {"compute_seconds", "s", seconds},
                    {"cell_updates_per_second", "1/s", seconds > 0 ? updates / seconds : 0.0},
                    {"output_wait_seconds", "s", ctx_.mpi.max(writer_->waited_seconds())},
                    {"achieved_bandwidth", "GB/s",
                     seconds > 0 ? updates * bytes_per_cell_update() / seconds / 1e9 : 0.0}};
    return perf;
  }

 protected:
  explicit GridSimulation(RunContext& ctx) : ctx_(ctx) {}

  // After the grid and fields exist: fixes the step count, creates the
  // output (a fresh run) and writes frame 0 and diagnostics row 0. A
  // restarted run's restore() takes the output up instead. initial_keys:
  // the checkpoint keys of initial_diagnostics().
  void begin(std::unique_ptr<Grid> grid, const GridClock& clock, std::vector<Quantity> fields,
             std::vector<Quantity> diagnostics, std::vector<std::string> initial_keys = {}) {
    // The model's constructor filled its fields, O(cells) on the host for
    // some; a signal during it (their loops end early) stops the run here,
    // before any output, on every rank.
    if (ctx_.mpi.any(stop_signal() != 0)) throw stopped_during_setup("the initial state");
    grid_ = std::move(grid);
    clock_ = clock;
    initial_keys_ = std::move(initial_keys);
    for (const Quantity& q : diagnostics) diagnostic_names_.push_back(q.name);
    // Models refuse such spans when they read their input (exit 2, nothing
    // written); a dt known only from the full scan of the initial state
    // (shallow_water's; the input check had a sample's upper bound of it)
    // can still make too many, found after the output exists: exit 3.
    const std::optional<std::int64_t> steps = step_count(clock.sim_time, clock.dt);
    if (!steps)
      throw Error(ExitCode::numerical,
                  clock.span_key + ": " + step_count_problem(clock.sim_time, clock.dt, "dt (from every cell)"), true);
    steps_ = *steps;
    output_ = std::make_unique<GridOutput>(ctx_.output, *grid_, std::move(fields), std::move(diagnostics));
    writer_ = std::make_unique<BackgroundWriter>(
        ctx_.mpi, ctx_.output != nullptr && ctx_.config != nullptr && ctx_.config->boolean("run.async_output"));
    if (!ctx_.restarting) {
      output_->create();
      write_output();
    }
  }

  // One step of length dt (the last may be shorter). Collective.
  virtual void step(T dt) = 0;
  // The fields that make up the state: checkpointed, health-checked.
  virtual std::vector<Field<T>*> state() = 0;
  // The fields of an output frame, every component of each in turn
  // (GridOutput's order); by default the state fields. Called on every
  // rank at an output step: a model may compute a derived field here, on
  // the device.
  virtual std::vector<const Field<T>*> frame_fields() {
    const std::vector<Field<T>*> s = state();
    return {s.begin(), s.end()};
  }
  // Turns the frame fields' owned values (one vector per component, in
  // order) into what the frame writes; none: the values as they are. It
  // runs on the background writer beside the next steps, so it may use
  // only what it holds.
  using FrameTransform = std::function<void(std::vector<std::vector<double>>&)>;
  virtual FrameTransform frame_transform() const { return {}; }
  // The diagnostics row (GridOutput's order). Collective; every rank gets
  // the same values. May throw unstable() when a CFL limit is broken.
  virtual std::vector<double> diagnostics() = 0;
  // Bytes one cell update must move at the least (for GB/s).
  virtual double bytes_per_cell_update() const = 0;
  // The closing lines of the run, from the last diagnostics row (where a row was written).
  virtual void print_summary(const std::vector<double>& last) const { (void)last; }

  // Whether diagnostics() should fail on a broken limit (not while the
  // state of an already failed run is being recorded).
  bool checking() const { return checking_; }

  // A collective numerical failure (every rank calls it with the same text).
  [[noreturn]] void unstable(const std::string& why) const {
    throw Error(ExitCode::numerical, why + " at step " + std::to_string(step_) + " (t = " + std::to_string(time_) +
                                         " s)",
                true);
  }

  RunContext& ctx_;
  std::unique_ptr<Grid> grid_;
  std::unique_ptr<GridOutput> output_;
  // The frame fields on their way to the host, one per field.
  std::vector<std::unique_ptr<HostCopy<T>>> frame_copies_;
  // After output_ and frame_copies_: its jobs use them, so it goes first.
  std::unique_ptr<BackgroundWriter> writer_;
  std::vector<double> last_diagnostics_;

 private:
  double next_output_time() const { return static_cast<double>(outputs_done_) * clock_.output_interval; }

  // Bytes of the steps' memory traffic (cell updates times
  // bytes_per_cell_update()) queued on the device between two waits for
  // it (above).
  static constexpr double kQueuedBytes = 274877906944.0;  // 2^38
  std::int64_t fence_every() const {
    const double cells = static_cast<double>(std::max<std::int64_t>(1, grid_->owned().size()));
    const double bytes = cells * std::max(1.0, bytes_per_cell_update());
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(kQueuedBytes / bytes));
  }
  // A frame and a diagnostics row: the values are taken now (off the
  // device), the writing goes to the background writer. One frame at most
  // is in flight: the previous one must have landed before this one's
  // snapshot is taken, so the compute waits for the file system at most
  // one frame, and the host holds one snapshot.
  void write_output(bool check = true) {
    {
      auto t = ctx_.timers.scope("output");
      writer_->drain();
    }
    std::vector<double> d;
    {
      auto t = ctx_.timers.scope("diagnostics");
      checking_ = check;
      d = diagnostics();
      checking_ = true;
    }
    // Every result written must be finite: a non-finite diagnostic (a sum
    // that overflowed over finite cells, say) fails the run like a NaN in
    // the state. Every rank holds the same row, so every rank throws.
    for (std::size_t i = 0; check && i < d.size(); ++i)
      if (!std::isfinite(d[i]))
        unstable("diagnostic " + (i < diagnostic_names_.size() ? diagnostic_names_[i] : std::to_string(i)) + " = " +
                 std::to_string(d[i]) + " is not finite");
    last_diagnostics_ = d;
    if (initial_.empty()) initial_.assign(d.begin(), d.begin() + std::ssize(initial_keys_));
    last_output_step_ = step_;
    auto t = ctx_.timers.scope("output");
    // The fields' owned cells (packed on the device: never the halos, which
    // may hold nothing written yet) leave it beside the next steps; the
    // writer waits for them.
    std::vector<std::pair<HostCopy<T>*, int>> copies;
    const std::size_t cells = static_cast<std::size_t>(grid_->owned_cells());
    for (const Field<T>* f : frame_fields()) {
      if (copies.size() == frame_copies_.size()) frame_copies_.push_back(std::make_unique<HostCopy<T>>(ctx_.device));
      HostCopy<T>& copy = *frame_copies_[copies.size()];
      copy.start_packed(cells * static_cast<std::size_t>(f->ncomp()),
                        [&](T* to) { pack_owned(*grid_, ctx_.device, *f, to); });
      copies.emplace_back(&copy, f->ncomp());
    }
    writer_->submit([out = output_.get(), cells, time = time_, d = std::move(d), copies = std::move(copies),
                     transform = frame_transform()] {
      std::vector<std::vector<double>> values;
      for (const auto& [copy, ncomp] : copies) {
        const T* owned = copy->wait();
        for (int c = 0; c < ncomp; ++c) {
          const T* first = owned + static_cast<std::size_t>(c) * cells;
          values.emplace_back(first, first + cells);
        }
        copy->release();
      }
      if (transform) transform(values);
      out->diagnostics(time, d);
      out->frame(time, values);
    });
    // Frames due at or before now are done (a long step may pass several):
    // outputs_done_ becomes at least the least k with k * interval > now,
    // found from floor(now / interval) and settled on that very comparison
    // (k * interval does not fall as k rises), so the work does not grow
    // with the time and the count is the one counting up one by one gives.
    if (clock_.output_interval > 0) {
      const double now = time_ * (1 + 1e-12), interval = clock_.output_interval;
      const double guess = std::floor(now / interval);
      if (guess < kMaxSteps) {
        std::int64_t k = static_cast<std::int64_t>(guess);
        if (k > 0 && static_cast<double>(k - 1) * interval > now) --k;
        if (static_cast<double>(k) * interval <= now) ++k;
        if (static_cast<double>(k) * interval <= now) ++k;
        outputs_done_ = std::max(outputs_done_, k);
      }
    }
  }

  GridClock clock_;
  std::vector<std::string> diagnostic_names_, initial_keys_;
  std::vector<double> initial_;
  std::int64_t steps_ = 0, step_ = 0, steps_this_run_ = 0, outputs_done_ = 0;
  double time_ = 0;
  double step_seconds_ = 0;   // this process' time in step(), this rank
  std::int64_t last_output_step_ = -1;
  bool failure_recorded_ = false, checking_ = true;
};

// Runs a model's simulation of `params` to its end without output, in the
// run's precision (a model's self-checks): look(sim, true) sees it before
// the first step, look(sim, false) after the last.
template <template <class> class Sim, class Params, class Look>
void run_quietly(RunContext& ctx, const Params& params, const Look& look) {
  RunContext quiet = ctx;
  quiet.output = nullptr;
  const auto run = [&]<class T>() {
    Sim<T> sim(quiet, params);
    look(sim, true);
    while (sim.steps_done() < sim.steps()) sim.advance();
    look(sim, false);
  };
  if (ctx.precision == Precision::fp32) {
    run.template operator()<float>();
  } else {
    run.template operator()<double>();
  }
}

}  // namespace strata::grid
