// Checkpoints under 1, 2 and 4 ranks: state written by one decomposition
// reads back on any other (a single process included), damage is detected,
// and a pricing run restored on another rank count ends bitwise equal to an
// uninterrupted one.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/io/checkpoint.hpp"
#include "engine/runtime/simulation.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "models/pricing/monte_carlo.hpp"
#include "tests/support/test_support.hpp"

using namespace strata;
using test::SharedTempDir;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

double value_at(std::int64_t i) { return std::sin(0.37 * static_cast<double>(i)) * 1e3 + static_cast<double>(i); }

// A 2-D field ny x nx: rank r owns rows (written) or columns (read back).
constexpr std::int64_t kNy = 13, kNx = 17;
double cell_value(std::int64_t j, std::int64_t i) { return value_at(j * 1000 + i) * 0.5; }
struct Box2 {
  std::int64_t start[2], count[2];
};
Box2 rows_of(int rank, int ranks) {
  const BlockRange r = block_range(kNy, rank, ranks);
  return {{r.first, 0}, {r.size(), kNx}};
}
Box2 columns_of(int rank, int ranks) {
  const BlockRange c = block_range(kNx, rank, ranks);
  return {{0, c.first}, {kNy, c.size()}};
}

// A stand-in for a grid model: one distributed array in global order, one
// set of records, scalars. Holds elements [first, last) of n.
class FieldState final : public Simulation {
 public:
  FieldState(std::int64_t n, BlockRange mine, int rank, Box2 box) : n_(n), mine_(mine), rank_(rank), box_(box) {
    local_.resize(static_cast<std::size_t>(mine.size()));
    cells_.resize(static_cast<std::size_t>(box.count[0] * box.count[1]));
  }
  void fill() {
    for (std::int64_t i = mine_.first; i < mine_.last; ++i) local_[static_cast<std::size_t>(i - mine_.first)] = value_at(i);
    for (std::int64_t j = 0; j < box_.count[0]; ++j) {
      for (std::int64_t i = 0; i < box_.count[1]; ++i) {
        cells_[static_cast<std::size_t>(j * box_.count[1] + i)] = cell_value(box_.start[0] + j, box_.start[1] + i);
      }
    }
    step_ = 7;
  }
  bool cells_match() const {
    bool ok = true;
    for (std::int64_t j = 0; j < box_.count[0]; ++j) {
      for (std::int64_t i = 0; i < box_.count[1]; ++i) {
        ok = ok && same_bits(cells_[static_cast<std::size_t>(j * box_.count[1] + i)],
                             cell_value(box_.start[0] + j, box_.start[1] + i));
      }
    }
    return ok;
  }
  std::int64_t steps() const override { return 10; }
  std::int64_t steps_done() const override { return step_; }
  void advance() override { ++step_; }
  double work_total() const override { return 10; }
  double work_done() const override { return static_cast<double>(step_); }
  std::string work_unit() const override { return "steps"; }
  std::optional<std::string> nonfinite() const override { return std::nullopt; }
  void inject_nonfinite() override {}
  void save(StateWriter& w) const override {
    w.scalar("step", step_);
    w.scalar("time", 0.125 * static_cast<double>(step_));
    w.array("field", local_, mine_.first, n_);
    const std::int64_t global[2] = {kNy, kNx};
    w.box("cells", cells_, global, box_.start, box_.count);
    // One record per rank: (rank, count).
    const double rec[2] = {static_cast<double>(rank_), static_cast<double>(local_.size())};
    w.records("ranks", rec, 2);
  }
  void restore(StateReader& r) override {
    step_ = r.integer("step");
    time_ = r.real("time");
    r.array("field", local_, mine_.first);
    r.box("cells", cells_, box_.start, box_.count);
    records_ = r.records("ranks", 2);
  }
  Performance finish() override { return {}; }

  std::int64_t n_, step_ = 0;
  BlockRange mine_;
  int rank_;
  Box2 box_;
  double time_ = 0;
  std::vector<double> local_, records_, cells_;
};

// A PortfolioRun seen through the Simulation interface the checkpoint
// store takes (the pricing model's own adapter also prints and writes files).
struct PortfolioSimulation final : Simulation {
  pricing::PortfolioRun& run;
  explicit PortfolioSimulation(pricing::PortfolioRun& r) : run(r) {}
  std::int64_t steps() const override { return run.steps(); }
  std::int64_t steps_done() const override { return run.steps_done(); }
  void advance() override { run.advance(); }
  double work_total() const override { return 1; }
  double work_done() const override { return 0; }
  std::string work_unit() const override { return ""; }
  std::optional<std::string> nonfinite() const override { return run.nonfinite(); }
  void inject_nonfinite() override {}
  void save(StateWriter& w) const override { run.save(w); }
  void restore(StateReader& r) override { run.restore(r); }
  Performance finish() override { return {}; }
};

}  // namespace

TEST_CASE("checkpoint arrays read back on any decomposition", "[mpi][checkpoint]") {
  const MpiContext& mpi = test::world();
  const MpiContext self(MPI_COMM_SELF);
  SharedTempDir dir(mpi);
  const std::int64_t n = 1001;

  CheckpointStore store(dir.path + "/run.h5", mpi);
  FieldState written(n, block_range(n, mpi.rank(), mpi.size()), mpi.rank(), rows_of(mpi.rank(), mpi.size()));
  written.fill();
  CheckpointHeader h{"field", "fp64", "host", "[run]\nmodel = \"field\"\n", written.steps_done(), 10, mpi.size(), 1.5};
  const std::string path = store.write(written, h, 2);
  CHECK(std::filesystem::path(path).filename() == "step-000000000007.h5");

  const CheckpointHeader back = verify_checkpoint(path, mpi);
  CHECK(back.step == 7);
  CHECK(back.ranks == mpi.size());
  CHECK(back.config_toml == h.config_toml);

  // Reversed decomposition on the same ranks.
  FieldState reversed(n, block_range(n, mpi.size() - 1 - mpi.rank(), mpi.size()), mpi.rank(),
                      columns_of(mpi.rank(), mpi.size()));
  restore_checkpoint(path, reversed, mpi);
  CHECK(reversed.steps_done() == 7);
  CHECK(reversed.time_ == 0.875);
  bool all_equal = true;
  for (std::int64_t i = reversed.mine_.first; i < reversed.mine_.last; ++i) {
    all_equal = all_equal && same_bits(reversed.local_[static_cast<std::size_t>(i - reversed.mine_.first)], value_at(i));
  }
  CHECK(all_equal);
  CHECK(reversed.cells_match());   // rows written, columns read
  REQUIRE(reversed.records_.size() == static_cast<std::size_t>(2 * mpi.size()));
  for (int r = 0; r < mpi.size(); ++r) CHECK(reversed.records_[static_cast<std::size_t>(2 * r)] == r);

  // One process alone reads the whole array.
  FieldState whole(n, {0, n}, 0, rows_of(0, 1));
  restore_checkpoint(path, whole, self);
  CHECK(whole.cells_match());
  for (std::int64_t i = 0; i < n; i += 97) CHECK(same_bits(whole.local_[static_cast<std::size_t>(i)], value_at(i)));

  // keep = 2: a third checkpoint removes the oldest.
  written.step_ = 8;
  h.step = 8;
  store.write(written, h, 2);
  written.step_ = 9;
  h.step = 9;
  store.write(written, h, 2);
  const std::vector<std::string> kept = store.list();
  REQUIRE(kept.size() == 2);
  CHECK(std::filesystem::path(kept[0]).filename() == "step-000000000009.h5");

  // Damage: a truncated file and one with a changed value are refused.
  MPI_Barrier(mpi.comm());
  if (mpi.root()) std::filesystem::resize_file(kept[0], std::filesystem::file_size(kept[0]) / 2);
  MPI_Barrier(mpi.comm());
  CHECK_THROWS_WITH(verify_checkpoint(kept[0], mpi), Catch::Contains("corrupt"));
  std::vector<std::string> skipped;
  CHECK(newest_valid_checkpoint(store, mpi, skipped) == kept[1]);
  CHECK(skipped.size() == 1);
}

TEST_CASE("a pricing run restored on another rank count equals the uninterrupted run", "[mpi][checkpoint][pricing]") {
  using namespace strata::pricing;
  const MpiContext& world = test::world();
  const MpiContext self(MPI_COMM_SELF);
  SharedTempDir dir(world);
  const Device host = select_device("host", world);

  Portfolio p;
  p.rate = 0.05;
  p.paths = 1'000'003;   // a short last block
  p.seed = 99;
  p.chunk_paths = 3 * 16384;
  p.assets = {{"A", 100.0, 0.01, 0.3, "gbm"}};
  p.instruments = {{"c", "european", true, 110.0, 1.0, 0}, {"p", "european", false, 90.0, 2.0, 0}};
  // And a path group (4 steps): its trees restart like the Europeans'.
  p.steps_per_year = 4;
  Instrument lookback{"lookback", "lookback", false, 0.0, 1.0, 0};
  lookback.floating = true;
  p.instruments.push_back(lookback);

  // Reference: one process, no interruption.
  const std::vector<Estimate> ref = price_portfolio(p, plan_samples(p, host, self), host, Precision::fp64, self);

  for (std::int64_t stop_after : {1, 3}) {
    PortfolioRun first(p, plan_samples(p, host, world), host, Precision::fp64, world);
    for (std::int64_t s = 0; s < stop_after; ++s) first.advance();
    CheckpointStore store(dir.path + "/p" + std::to_string(stop_after) + ".h5", world);
    const CheckpointHeader h{"pricing", "fp64", "host", "", first.steps_done(), first.steps(), world.size(), 0.0};
    PortfolioSimulation saving(first);
    const std::string path = store.write(saving, h, 1);

    // Every rank restores it alone, with another chunk size, and finishes.
    Portfolio q = p;
    q.chunk_paths = 5 * 16384 + 7;
    PortfolioRun second(q, plan_samples(q, host, self), host, Precision::fp64, self);
    PortfolioSimulation restoring(second);
    restore_checkpoint(path, restoring, self);
    CHECK(second.steps_done() == stop_after);
    while (second.steps_done() < second.steps()) second.advance();
    const std::vector<Estimate> got = second.finish();
    INFO("stopped after " << stop_after << " step(s) on " << world.size() << " rank(s)");
    REQUIRE(got.size() == ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) {
      CHECK(same_bits(got[i].price, ref[i].price));
      CHECK(same_bits(got[i].standard_error, ref[i].standard_error));
    }
  }
}
