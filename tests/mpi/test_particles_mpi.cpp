// The particle layer under 1, 2 and 4 ranks: particles scattered over the
// ranks in any order reach the even share of their global index; H5MD
// frames are id-ordered whatever the decomposition and read back (ids
// sorted, masses, box); checkpoints of particles restore on any rank count.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "engine/io/checkpoint.hpp"
#include "engine/io/h5_output.hpp"
#include "engine/particles/h5md_input.hpp"
#include "engine/particles/h5md_output.hpp"
#include "engine/particles/particle_state.hpp"
#include "engine/runtime/simulation.hpp"
#include "tests/support/test_support.hpp"

using namespace strata;
using namespace strata::particles;
using test::SharedTempDir;

namespace {

constexpr std::int64_t kN = 37;

double coord(std::int64_t i, int d) { return std::sin(0.7 * static_cast<double>(i) + d) * 10.0 + 0.1 * d; }
double speed(std::int64_t i, int d) { return std::cos(1.3 * static_cast<double>(i) - d); }
std::int64_t user_id(std::int64_t i) { return 1000 - 3 * i; }   // descending: reading reverses the order

// Particle i lives on rank i % ranks, in descending order of i: nothing is
// where the even share would put it.
HostParticles scattered(const MpiContext& mpi, bool with_ids) {
  HostParticles p;
  for (std::int64_t i = kN - 1; i >= 0; --i) {
    if (i % mpi.size() != mpi.rank()) continue;
    p.index.push_back(i);
    if (with_ids) p.id.push_back(user_id(i));
    for (int d = 0; d < 3; ++d) {
      p.position.push_back(coord(i, d));
      p.velocity.push_back(speed(i, d));
    }
    p.mass.push_back(1.0 + static_cast<double>(i));
  }
  return p;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A stand-in Simulation whose state is a particle set.
class ParticleState final : public Simulation {
 public:
  explicit ParticleState(const MpiContext& mpi) : mpi_(mpi) {}
  std::int64_t steps() const override { return 10; }
  std::int64_t steps_done() const override { return 3; }
  void advance() override {}
  double work_total() const override { return 10; }
  double work_done() const override { return 3; }
  std::string work_unit() const override { return "steps"; }
  std::optional<std::string> nonfinite() const override { return std::nullopt; }
  void inject_nonfinite() override {}
  void save(StateWriter& w) const override { save_particles(w, mpi_, "particles", p_, kN); }
  void restore(StateReader& r) override { p_ = restore_particles(r, mpi_, "particles"); }
  Performance finish() override { return {}; }
  const MpiContext& mpi_;
  HostParticles p_;
};

}  // namespace

TEST_CASE("even shares cover 0..N-1 and owner_of agrees", "[mpi][particles]") {
  for (std::int64_t n : {0, 1, 5, 37, 1000003}) {
    for (int ranks : {1, 2, 3, 7}) {
      std::int64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        const Share s = even_share(n, r, ranks);
        CHECK(s.first == next);
        next += s.count;
        if (s.count > 0) {
          CHECK(owner_of(s.first, n, ranks) == r);
          CHECK(owner_of(s.first + s.count - 1, n, ranks) == r);
        }
      }
      CHECK(next == n);
    }
  }
}

TEST_CASE("particles reach the even share of their index", "[mpi][particles]") {
  const MpiContext& mpi = test::world();
  const HostParticles share = to_even_share(mpi, scattered(mpi, true), kN);
  const Share mine = even_share(kN, mpi.rank(), mpi.size());
  REQUIRE(static_cast<std::int64_t>(share.size()) == mine.count);
  bool ok = true;
  for (std::size_t k = 0; k < share.size(); ++k) {
    const std::int64_t i = mine.first + static_cast<std::int64_t>(k);
    ok = ok && share.index[k] == i && share.id[k] == user_id(i) && share.mass[k] == 1.0 + static_cast<double>(i);
    for (int d = 0; d < 3; ++d)
      ok = ok && same_bits(share.position[3 * k + d], coord(i, d)) && same_bits(share.velocity[3 * k + d], speed(i, d));
  }
  CHECK(ok);
}

// md's atoms travel in the same record as every particle set: periodic
// image counts (int) and the neighbour lists' build positions arrive with
// the particle, exactly.
TEST_CASE("the migration record carries images and build positions", "[mpi][particles]") {
  const MpiContext& mpi = test::world();
  HostParticles p = scattered(mpi, false);
  p.mass.clear();
  for (std::size_t k = 0; k < p.size(); ++k)
    for (int d = 0; d < 3; ++d) {
      p.image.push_back(static_cast<int>(p.index[k]) * (d - 1) - 1000000 * d);
      p.reference.push_back(coord(p.index[k], d) + 1e-3 * speed(p.index[k], d));
    }
  const HostParticles share = to_even_share(mpi, p, kN);
  const Share mine = even_share(kN, mpi.rank(), mpi.size());
  REQUIRE(static_cast<std::int64_t>(share.size()) == mine.count);
  REQUIRE(share.image.size() == 3 * share.size());
  REQUIRE(share.reference.size() == 3 * share.size());
  CHECK(share.mass.empty());
  bool ok = true;
  for (std::size_t k = 0; k < share.size(); ++k) {
    const std::int64_t i = mine.first + static_cast<std::int64_t>(k);
    for (int d = 0; d < 3; ++d)
      ok = ok && share.image[3 * k + d] == static_cast<int>(i) * (d - 1) - 1000000 * d &&
           same_bits(share.reference[3 * k + d], coord(i, d) + 1e-3 * speed(i, d)) &&
           same_bits(share.position[3 * k + d], coord(i, d));
  }
  CHECK(ok);
}

TEST_CASE("H5MD frames are in index order and read back sorted by id", "[mpi][particles]") {
  const MpiContext& mpi = test::world();
  SharedTempDir dir(mpi);
  const std::string path = dir.path + "/traj.h5";
  Box box;
  box.edges = {3, 4, 5};
  box.periodic = true;
  {
    H5Output out(path, "run.output", mpi);
    H5mdOutput h5md(&out, mpi, kN, box, {"1", "1", "1", "1", "", ""}, "test",
                    {{"total_energy", "1", "total energy", 0}, {"momentum", "1", "total momentum", 3}});
    const HostParticles p = scattered(mpi, true);
    h5md.create(p);
    h5md.frame(0, 0.0, p);
    h5md.observables(0, 0.0, {{-1.5}, {1, 2, 3}});
    HostParticles later = p;
    for (double& x : later.position) x += 1;
    h5md.frame(10, 0.5, later);
    CHECK(h5md.frames() == 2);
    CHECK(h5md.rows() == 1);
    CHECK(out.read("/particles/all/position/time") == std::vector<double>{0.0, 0.5});
    const std::vector<double> first_row = out.read("/particles/all/position/value");
    REQUIRE(first_row.size() == static_cast<std::size_t>(2 * kN * 3));
    CHECK(same_bits(first_row[3 * 5 + 1], coord(5, 1)));
    CHECK(out.read("/observables/momentum/value") == std::vector<double>{1, 2, 3});
    // A restart from a checkpoint taken after frame 1 drops frame 2.
    h5md.resume(1, 1, p);
    CHECK(out.series_length("/particles/all/velocity/value") == 1);
    CHECK(out.series_length("/particles/all/velocity/step") == 1);
    CHECK(h5md.missing_frames().empty());
    CHECK(h5md.missing_rows().empty());
    // One whose checkpoint counts frames and rows the file lost (a hard
    // kill) keeps their indices, filled and listed.
    h5md.resume(3, 2, p);
    CHECK(out.series_length("/particles/all/position/value") == 3);
    CHECK(h5md.missing_frames() == std::vector<std::int64_t>{1, 2});
    CHECK(h5md.missing_rows() == std::vector<std::int64_t>{1});
    CHECK(out.integer_attribute("/", "missing_frames") == std::vector<std::int64_t>{1, 2});
    CHECK(describe_missing_output(out) == "frames 1-2 and rows 1");
  }
  const H5mdSnapshot snap = read_h5md(path, "nbody.initial_file", {0, "nbody.initial_frame"}, mpi);
  CHECK(snap.n == kN);
  CHECK(snap.has_box);
  CHECK(snap.box.periodic);
  CHECK(snap.box.edges == std::array<double, 3>{3, 4, 5});
  CHECK(snap.has_mass);
  const Share mine = even_share(kN, mpi.rank(), mpi.size());
  REQUIRE(static_cast<std::int64_t>(snap.particles.size()) == mine.count);
  bool ok = true;
  for (std::size_t k = 0; k < snap.particles.size(); ++k) {
    // Ascending ids: new index j holds old particle kN - 1 - j.
    const std::int64_t j = mine.first + static_cast<std::int64_t>(k), i = kN - 1 - j;
    ok = ok && snap.particles.index[k] == j && snap.particles.id[k] == user_id(i) &&
         snap.particles.mass[k] == 1.0 + static_cast<double>(i);
    for (int d = 0; d < 3; ++d) ok = ok && same_bits(snap.particles.position[3 * k + d], coord(i, d));
  }
  CHECK(ok);
}

TEST_CASE("bad H5MD input names the file and the dataset", "[mpi][particles]") {
  const MpiContext& mpi = test::world();
  SharedTempDir dir(mpi);
  const std::string path = dir.path + "/no_velocity.h5";
  {
    H5Output out(path, "run.output", mpi);
    const std::int64_t frame[2] = {kN, 3};
    out.series("/particles/all/position/value", frame);
  }
  try {
    (void)read_h5md(path, "md.initial_file", {0, "md.initial_frame"}, mpi);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    const std::string m = e.what();
    CHECK(m.find("md.initial_file") != std::string::npos);
    CHECK(m.find(path) != std::string::npos);
    CHECK(m.find("/particles/all/velocity/value") != std::string::npos);
  }
  CHECK_THROWS_AS(read_h5md(dir.path + "/missing.h5", "md.initial_file", {0, "md.initial_frame"}, mpi), Error);
}

TEST_CASE("particle checkpoints restore on any number of ranks", "[mpi][particles][checkpoint]") {
  const MpiContext& mpi = test::world();
  const MpiContext self(MPI_COMM_SELF);
  SharedTempDir dir(mpi);
  CheckpointStore store(dir.path + "/run.h5", mpi);
  ParticleState written(mpi);
  written.p_ = scattered(mpi, true);
  const CheckpointHeader h{"particles", "fp64", "host", "[run]\n", 3, 10, mpi.size(), 1.0};
  const std::string path = store.write(written, h, 2);
  (void)verify_checkpoint(path, mpi);
  // Checks particles [first, first + count) came back exactly.
  const auto exact = [](const HostParticles& p, std::int64_t first, std::int64_t count) {
    bool ok = static_cast<std::int64_t>(p.size()) == count && p.id.size() == p.size() && p.mass.size() == p.size();
    for (std::size_t k = 0; ok && k < p.size(); ++k) {
      const std::int64_t i = first + static_cast<std::int64_t>(k);
      ok = p.index[k] == i && p.id[k] == user_id(i) && same_bits(p.mass[k], 1.0 + static_cast<double>(i));
      for (int d = 0; d < 3; ++d)
        ok = ok && same_bits(p.position[3 * k + d], coord(i, d)) && same_bits(p.velocity[3 * k + d], speed(i, d));
    }
    return ok;
  };
  ParticleState back(mpi);
  restore_checkpoint(path, back, mpi);
  const Share mine = even_share(kN, mpi.rank(), mpi.size());
  CHECK(exact(back.p_, mine.first, mine.count));
  if (mpi.root()) {
    ParticleState whole(self);
    restore_checkpoint(path, whole, self);
    CHECK(exact(whole.p_, 0, kN));
  }
  MPI_Barrier(mpi.comm());
}
