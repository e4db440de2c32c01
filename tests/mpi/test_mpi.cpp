// Run under mpiexec with 1, 2 and 4 ranks: distributed results must be
// bitwise those of one process, and the shared HDF5 file must read back.
#include <catch2/catch.hpp>

#include <hdf5.h>
#include <hdf5_hl.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "engine/io/h5_output.hpp"
#include "engine/runtime/cartesian.hpp"
#include "engine/runtime/tree_sum.hpp"
#include "models/pricing/monte_carlo.hpp"
#include "tests/support/test_support.hpp"

using namespace strata;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("tree_sum over ranks equals the one-process tree bitwise", "[mpi]") {
  const MpiContext& mpi = test::world();
  for (std::int64_t n : {1, 2, 3, 4, 7, 64, 1000, 1025}) {
    // Every rank generates the same global block values; each keeps its share.
    std::mt19937_64 gen(static_cast<std::uint64_t>(n));
    std::uniform_real_distribution<double> u(-1e3, 1e3);
    std::vector<double> all(static_cast<std::size_t>(2 * n));
    for (double& x : all) x = u(gen);
    const BlockRange r = block_range(n, mpi.rank(), mpi.size());
    const std::vector<double> mine(all.begin() + 2 * r.first, all.begin() + 2 * r.last);
    const std::vector<double> got = tree_sum(mpi, n, r.first, mine, 2);
    const std::vector<double> want = test::tree_sum_serial(all, 2);
    INFO("n = " << n << ", ranks = " << mpi.size());
    CHECK(same_bits(got[0], want[0]));
    CHECK(same_bits(got[1], want[1]));

    // Streamed in uneven chunks (as the pricing chunk loop does): same bits.
    TreeSum streamed(n, r, 2);
    std::int64_t done = 0;
    for (std::int64_t piece = 1; done < r.size(); piece = piece * 3 % 11 + 1) {
      const std::int64_t take = std::min(piece, r.size() - done);
      streamed.add(mine.data() + 2 * done, take);
      done += take;
    }
    const std::vector<double> got_streamed = streamed.finish(mpi);
    CHECK(same_bits(got_streamed[0], want[0]));
    CHECK(same_bits(got_streamed[1], want[1]));
  }
}

TEST_CASE("portfolio prices are bitwise the same on any number of ranks", "[mpi][pricing]") {
  using namespace strata::pricing;
  const MpiContext& world = test::world();
  const MpiContext self(MPI_COMM_SELF);
  Portfolio p;
  p.rate = 0.05;
  p.paths = 200'003;
  p.seed = 99;
  p.assets = {{"A", 100.0, 0.02, 0.3, "gbm"}, {"H", 100.0, 0.0, 0.0, "heston"}};
  p.assets[1].v0 = p.assets[1].theta = 0.04;
  p.assets[1].kappa = 1.0;
  p.assets[1].xi = 0.5;
  p.assets[1].rho = -0.7;
  p.steps_per_year = 12;
  p.instruments = {{"c", "european", true, 100.0, 1.0, 0}, {"p", "european", false, 90.0, 0.5, 0}};
  // Time-stepped path groups too: an Asian on A, a barrier on Heston.
  Instrument asian{"asian", "asian", true, 100.0, 1.0, 0};
  asian.fixings = 4;
  Instrument barrier{"barrier", "barrier", true, 100.0, 1.0, 1};
  barrier.barrier = 130.0;
  barrier.kind.up = true;
  p.instruments.push_back(asian);
  p.instruments.push_back(barrier);
  for (const Device& d : test::devices()) {
    for (Precision prec : {Precision::fp64, Precision::fp32}) {
      INFO(test::describe(d, prec) << ", " << world.size() << " ranks");
      const auto distributed = price_portfolio(p, plan_samples(p, d, world), d, prec, world);
      const auto alone = price_portfolio(p, plan_samples(p, d, self), d, prec, self);
      for (std::size_t i = 0; i < alone.size(); ++i) {
        CHECK(same_bits(distributed[i].price, alone[i].price));
        CHECK(same_bits(distributed[i].standard_error, alone[i].standard_error));
      }
    }
  }
}

TEST_CASE("the shared HDF5 file holds what every rank wrote collectively", "[mpi][hdf5]") {
  const MpiContext& mpi = test::world();
  std::string path = (std::filesystem::temp_directory_path() / "strata_mpi_h5_test").string();
  {
    // Rank 0 picks a unique name; everyone uses it.
    char name[256] = {};
    if (mpi.root()) std::snprintf(name, sizeof name, "%s_%d/out.h5", path.c_str(), static_cast<int>(::getpid()));
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, mpi.comm());
    path = name;
  }
  {
    H5Output out(path, "run.output", mpi);
    out.attribute("/", "status", std::string("running"));
    out.attribute("/", "ranks", static_cast<std::int64_t>(mpi.size()));
    out.attribute("/", "devices", mpi.gather_strings("rank" + std::to_string(mpi.rank())));
    out.text("/config", "[run]\nmodel = \"pricing\"\n");
    out.scalar("/pricing/x/price", 3.25, "currency");
    out.scalar("/pricing/x/paths", std::int64_t{1000}, "paths");
    H5Table t;
    t.columns = {{"name", "", std::vector<std::string>{"a", "bb"}}, {"v", "s", std::vector<double>{1.5, 2.5}}};
    out.table("/timers", t);
    out.set_status("complete");
  }
  MPI_Barrier(mpi.comm());
  if (mpi.root()) {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    double price = 0;
    hid_t ds = H5Dopen2(f, "/pricing/x/price", H5P_DEFAULT);
    H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &price);
    H5Dclose(ds);
    CHECK(price == 3.25);
    std::int64_t ranks = 0;
    hid_t a = H5Aopen(f, "ranks", H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_INT64, &ranks);
    H5Aclose(a);
    CHECK(ranks == mpi.size());
    a = H5Aopen(f, "devices", H5P_DEFAULT);
    hid_t space = H5Aget_space(a);
    CHECK(H5Sget_simple_extent_npoints(space) == mpi.size());
    H5Sclose(space);
    H5Aclose(a);
    CHECK(string_attribute(f, "status").value_or("") == "complete");
    // A table is a group of columns along the first column, its dimension scale.
    ds = H5Dopen2(f, "/timers/name", H5P_DEFAULT);
    CHECK(H5DSis_scale(ds) > 0);
    hid_t type = H5Dget_type(ds);
    CHECK(H5Tis_variable_str(type) > 0);  // netCDF 4.9.0 reads no fixed-length string dataset
    char* names[2] = {nullptr, nullptr};
    REQUIRE(H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0);
    CHECK(std::string(names[0] ? names[0] : "") == "a");
    CHECK(std::string(names[1] ? names[1] : "") == "bb");
    H5free_memory(names[0]);
    H5free_memory(names[1]);
    H5Tclose(type);
    hid_t v = H5Dopen2(f, "/timers/v", H5P_DEFAULT);
    CHECK(H5DSis_attached(v, ds, 0) > 0);
    space = H5Dget_space(v);
    CHECK(H5Sget_simple_extent_npoints(space) == 2);
    H5Sclose(space);
    CHECK(string_attribute(v, "units").value_or("") == "s");
    H5Dclose(v);
    H5Dclose(ds);
    H5Fclose(f);
    std::filesystem::remove_all(std::filesystem::path(path).parent_path());
  }
}

// The one rank decomposition of the grids and md: its neighbours are MPI's
// own (MPI_Cart_shift, periodic or not), beyond a 2-D grid there are none,
// and the blocks of a global count tile it.
TEST_CASE("Cartesian decomposition: neighbours as MPI's, blocks that tile", "[mpi]") {
  const MpiContext& mpi = test::world();
  for (int dims : {2, 3}) {
    for (bool periodic : {false, true}) {
      const std::array<int, 3> most_first = dims == 3 ? std::array<int, 3>{2, 1, 0} : std::array<int, 3>{1, 0, 2};
      const std::array<int, 3> ranks = Cartesian::choose(mpi.size(), dims, most_first);
      CHECK(ranks[0] * ranks[1] * ranks[2] == mpi.size());
      const Cartesian cart(mpi.comm(), dims, ranks, {periodic, periodic, periodic});
      CHECK(cart.rank() == mpi.rank());
      for (int a = 0; a < dims; ++a) {
        int lower = 0, upper = 0;
        MPI_Cart_shift(cart.comm(), a, 1, &lower, &upper);
        CHECK(cart.lower(a) == lower);
        CHECK(cart.upper(a) == upper);
        std::int64_t mine = cart.own(a, 29).size(), all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, mpi.comm());
        CHECK(all == 29 * mpi.size() / ranks[static_cast<std::size_t>(a)]);
      }
      if (dims == 2) {
        CHECK(cart.neighbour(0, 0, 1) == MPI_PROC_NULL);
        CHECK(cart.neighbour(0, 0, -1) == MPI_PROC_NULL);
      }
      CHECK(cart.neighbour(0, 0, 0) == mpi.rank());
    }
  }
}
