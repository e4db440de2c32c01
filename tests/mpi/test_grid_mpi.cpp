// The distributed grid layer under 1, 2, 3, 4 and 6 ranks: halo exchange
// and physical boundaries fill every halo cell with what a single-domain
// grid would hold, the overlapped update (interior while messages fly,
// strips after) gives fields bitwise equal to one rank's for every
// decomposition, and global sums are bitwise decomposition-independent.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <iostream>

#include "engine/grid/grid.hpp"
#include "engine/grid/grid_simulation.hpp"
#include "engine/runtime/error.hpp"
#include "engine/runtime/timers.hpp"
#include "tests/mpi/grid_test_functors.hpp"
#include "tests/support/test_support.hpp"

using namespace strata;
using namespace strata::grid;

namespace {

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

GridSpec spec_2d(Boundary x, Boundary y, index_t nx, index_t ny, int halo) {
  GridSpec s;
  s.dims = 2;
  s.n = {nx, ny, 1};
  s.boundary[0] = {x, x};
  s.boundary[1] = {y, y};
  s.halo = halo;
  s.decomposition.key = "test.decomposition";
  return s;
}

GridSpec spec_3d(Boundary x, Boundary y, Boundary z, index_t n0, index_t n1, index_t n2, int halo) {
  GridSpec s = spec_2d(x, y, n0, n1, halo);
  s.dims = 3;
  s.n[2] = n2;
  s.boundary[2] = {z, z};
  return s;
}

// Every way to split `size` ranks over `dims` axes.
std::vector<std::array<int, 3>> factorisations(int size, int dims) {
  std::vector<std::array<int, 3>> out;
  for (int a = 1; a <= size; ++a) {
    if (size % a) continue;
    if (dims == 2) {
      out.push_back({a, size / a, 1});
      continue;
    }
    for (int b = 1; b <= size / a; ++b)
      if ((size / a) % b == 0) out.push_back({a, b, size / a / b});
  }
  return out;
}

bool fits(const GridSpec& s, const std::array<int, 3>& r) {
  for (int a = 0; a < s.dims; ++a)
    if (s.n[static_cast<std::size_t>(a)] / r[static_cast<std::size_t>(a)] < s.halo) return false;
  return true;
}

// Where a halo cell's value comes from in the whole domain: the global cell
// and the sign (walls mirror with the axis' sign, open sides clamp).
bool source_cell(const GridSpec& s, int axis, index_t g, index_t& src, double& sign, double wall_sign) {
  const index_t n = s.n[static_cast<std::size_t>(axis)];
  if (g >= 0 && g < n) {
    src = g;
    return true;
  }
  const Boundary b = s.boundary[static_cast<std::size_t>(axis)][g < 0 ? 0 : 1];
  switch (b) {
    case Boundary::periodic: src = (g % n + n) % n; return true;
    case Boundary::wall:
      src = g < 0 ? -1 - g : 2 * n - 1 - g;
      sign *= wall_sign;
      return true;
    case Boundary::open: src = g < 0 ? 0 : n - 1; return true;
  }
  return false;
}

template <class T>
void check_halos(const Grid& g, const Field<T>& f, std::array<double, 3> wall_sign) {
  std::vector<T> all(static_cast<std::size_t>(g.storage()));
  f.buffer().copy_to_host(all.data(), all.size());
  const auto e = g.extent();
  const auto start = g.start();
  std::size_t bad = 0;
  std::string first;
  for (index_t k = 0; k < e[2]; ++k)
    for (index_t j = 0; j < e[1]; ++j)
      for (index_t i = 0; i < e[0]; ++i) {
        const index_t l[3] = {i - g.halo(0), j - g.halo(1), k - g.halo(2)};
        index_t src[3] = {0, 0, 0};
        double sign = 1;
        for (int a = 0; a < 3; ++a)
          source_cell(g.spec(), a, start[static_cast<std::size_t>(a)] + l[a], src[a], sign,
                      wall_sign[static_cast<std::size_t>(a)]);
        const T want = static_cast<T>(sign * test::cell_label(src[0], src[1], src[2]));
        const T got = all[static_cast<std::size_t>((k * e[1] + j) * e[0] + i)];
        if (!same_bits(got, want)) {
          if (bad++ == 0)
            first = "local (" + std::to_string(l[0]) + ", " + std::to_string(l[1]) + ", " + std::to_string(l[2]) +
                    "): got " + std::to_string(got) + ", want " + std::to_string(want);
        }
      }
  INFO("rank " << g.mpi().rank() << ": " << bad << " wrong cells; first " << first);
  CHECK(bad == 0);
}

template <class T>
void halo_case(const Device& d, const GridSpec& spec) {
  const MpiContext& mpi = test::world();
  for (const auto& r : factorisations(mpi.size(), spec.dims)) {
    if (!fits(spec, r)) continue;
    GridSpec s = spec;
    s.decomposition.ranks = r;
    INFO("decomposition " << r[0] << "x" << r[1] << "x" << r[2] << ", dims " << s.dims << ", halo " << s.halo);
    Grid g(mpi, s);
    Field<T> f(g, d, "label");
    const auto st = g.start();
    for_box(d, g.owned(), test::FillCells<T>{f.view(), {st[0], st[1], st[2]}, false});
    HaloExchange<T> hx(g, d, 2);
    hx.exchange({&f});
    fill_boundaries(g, d, f, {T(-1), T(1), T(-1)});
    check_halos(g, f, {-1, 1, -1});
  }
}

// Runs `steps` overlapped updates of the wide stencil on a noise field and
// returns this rank's owned cells and the global sum of the result. With
// `remote`, the opt-in split (Grid::interior_remote): physical halos filled
// after begin() for the interior, and again after end() for the edges and
// corners next to remote faces, which the wide stencil reads.
template <class T>
std::pair<std::vector<double>, double> evolve(const MpiContext& mpi, const Device& d, GridSpec s, int steps,
                                              bool remote = false) {
  Grid g(mpi, s);
  Field<T> a(g, d, "a"), b(g, d, "b");
  const auto st = g.start();
  for_box(d, g.owned(), test::FillCells<T>{a.view(), {st[0], st[1], st[2]}, true});
  HaloExchange<T> hx(g, d, 1);
  const T c = T(0.02);
  const std::array<T, 3> sign{T(-1), T(1), T(1)};
  for (int n = 0; n < steps; ++n) {
    hx.begin({&a});
    if (remote) fill_boundaries(g, d, a, sign);
    for_box(d, remote ? g.interior_remote(2) : g.interior(2), test::WideStencil<T>{a.view(), b.view(), s.dims, c});
    hx.end();
    fill_boundaries(g, d, a, sign);
    for (const Box& box : remote ? g.strips_remote(2) : g.strips(2))
      for_box(d, box, test::WideStencil<T>{a.view(), b.view(), s.dims, c});
    a.swap(b);
  }
  const double sum = global_sum(g, d, test::CellValue<T>{a.view()});
  return {owned_values(g, d, a), sum};
}

template <class T>
void decomposition_case(const Device& d, const GridSpec& spec) {
  const MpiContext& mpi = test::world();
  const MpiContext self(MPI_COMM_SELF);
  GridSpec one = spec;
  one.decomposition.ranks = {1, 1, 1};
  const auto [whole, whole_sum] = evolve<T>(self, d, one, 6);
  std::vector<std::array<int, 3>> splits = factorisations(mpi.size(), spec.dims);
  splits.push_back({0, 0, 0});   // MPI_Dims_create's choice
  for (const auto& r : splits) {
    GridSpec s = spec;
    s.decomposition.ranks = r;
    if (r[0] > 0 && !fits(spec, r)) continue;
    for (bool remote : {false, true}) {
      INFO("decomposition " << r[0] << "x" << r[1] << "x" << r[2] << " (0: automatic), " << mpi.size()
                            << " ranks, " << (remote ? "interior_remote" : "interior"));
      const auto [mine, sum] = evolve<T>(mpi, d, s, 6, remote);
      Grid g(mpi, s);
      const auto st = g.start();
      const auto n = g.count();
      std::size_t bad = 0, c = 0;
      for (index_t k = 0; k < n[2]; ++k)
        for (index_t j = 0; j < n[1]; ++j)
          for (index_t i = 0; i < n[0]; ++i) {
            const auto at = static_cast<std::size_t>(((st[2] + k) * spec.n[1] + st[1] + j) * spec.n[0] + st[0] + i);
            if (!same_bits(mine[c++], whole[at])) ++bad;
          }
      CHECK(mpi.sum(static_cast<double>(bad)) == 0);
      CHECK(same_bits(sum, whole_sum));
    }
  }
}

// The smallest grid model: one two-component field ("label", "noise") whose
// halos nothing writes, and begin()'s frame 0, whose values it keeps.
class FrameProbe final : public GridSimulation<double> {
 public:
  FrameProbe(RunContext& ctx, const GridSpec& spec) : GridSimulation(ctx) {
    auto g = std::make_unique<Grid>(ctx.mpi, spec);
    q_ = Field<double>(*g, ctx.device, std::vector<std::string>{"label", "noise"});
    const auto st = g->start();
    for (int c = 0; c < 2; ++c)
      for_box(ctx.device, g->owned(), test::FillCells<double>{q_.view().component(c), {st[0], st[1], st[2]}, c == 1});
    begin(std::move(g), GridClock{1, 1, 0}, {{"label", "1", ""}, {"noise", "1", ""}}, {});
  }
  // Values of the frame the output received, one vector per component.
  std::shared_ptr<std::vector<std::vector<double>>> frame = std::make_shared<std::vector<std::vector<double>>>();
  // Values the frame's copy moved off the device.
  std::size_t copied() const {
    std::size_t n = 0;
    for (const auto& copy : frame_copies_) n += copy->size();
    return n;
  }
  const Grid& grid() const { return *grid_; }

 private:
  void step(double) override {}
  std::vector<Field<double>*> state() override { return {&q_}; }
  std::vector<double> diagnostics() override { return {}; }
  double bytes_per_cell_update() const override { return 0; }
  FrameTransform frame_transform() const override {
    return [frame = frame](std::vector<std::vector<double>>& values) { *frame = values; };
  }
  Field<double> q_;
};

}  // namespace

// Output frames leave the device as owned cells only: halos may hold
// memory nothing wrote (poison in tests, garbage on a GPU), and moving them
// costs PCIe bytes for nothing.
TEST_CASE("an output frame copies each field's owned cells off the device, never its halos", "[mpi][grid]") {
  const MpiContext& mpi = test::world();
  for (const Device& d : test::devices()) {
    for (const GridSpec& spec : {spec_2d(Boundary::periodic, Boundary::wall, 13, 9, 2),
                                 spec_3d(Boundary::open, Boundary::periodic, Boundary::wall, 7, 6, 5, 1)}) {
      INFO(test::describe(d, Precision::fp64) << ", " << spec.dims << "-D");
      Timers timers;
      RunContext ctx{mpi, nullptr, d, Precision::fp64, timers, nullptr, std::cout};
      FrameProbe probe(ctx, spec);
      probe.flush_output(true);
      const Grid& g = probe.grid();
      CHECK(probe.copied() == 2 * static_cast<std::size_t>(g.owned_cells()));
      const std::vector<std::vector<double>>& frame = *probe.frame;
      REQUIRE(frame.size() == 2);
      const auto st = g.start(), n = g.count();
      std::size_t bad = 0, at = 0;
      for (index_t k = 0; k < n[2]; ++k)
        for (index_t j = 0; j < n[1]; ++j)
          for (index_t i = 0; i < n[0]; ++i, ++at) {
            const index_t gi = st[0] + i, gj = st[1] + j, gk = st[2] + k;
            bad += !same_bits(frame[0].at(at), test::cell_label(gi, gj, gk));
            bad += !same_bits(frame[1].at(at), test::cell_noise(gi, gj, gk));
          }
      CHECK(at == frame[1].size());
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("halo exchange and boundaries fill every halo cell as one domain would", "[mpi][grid]") {
  for (const Device& d : test::devices()) {
    INFO(test::describe(d, Precision::fp64));
    halo_case<double>(d, spec_2d(Boundary::periodic, Boundary::wall, 13, 7, 2));
    halo_case<double>(d, spec_2d(Boundary::open, Boundary::periodic, 6, 12, 2));
    halo_case<float>(d, spec_2d(Boundary::wall, Boundary::open, 12, 9, 1));
    halo_case<double>(d, spec_3d(Boundary::periodic, Boundary::periodic, Boundary::periodic, 7, 6, 6, 1));
    halo_case<double>(d, spec_3d(Boundary::wall, Boundary::periodic, Boundary::open, 6, 7, 8, 2));
  }
}

TEST_CASE("overlapped stencil updates are bitwise equal to one rank's for every decomposition", "[mpi][grid]") {
  for (const Device& d : test::devices()) {
    INFO(test::describe(d, Precision::fp64));
    decomposition_case<double>(d, spec_2d(Boundary::periodic, Boundary::wall, 24, 18, 2));
    decomposition_case<float>(d, spec_2d(Boundary::open, Boundary::periodic, 18, 12, 2));
    decomposition_case<double>(d, spec_3d(Boundary::periodic, Boundary::wall, Boundary::periodic, 12, 12, 12, 2));
    decomposition_case<float>(d, spec_3d(Boundary::wall, Boundary::periodic, Boundary::open, 10, 12, 12, 2));
  }
}

TEST_CASE("interior and strips tile the owned box exactly once", "[mpi][grid]") {
  const MpiContext& mpi = test::world();
  for (int margin : {1, 2, 3, 5}) {
    for (GridSpec s : {spec_2d(Boundary::periodic, Boundary::wall, 17, 9, 1),
                       spec_3d(Boundary::wall, Boundary::open, Boundary::periodic, 8, 9, 11, 1)}) {
      Grid g(mpi, s);
      const auto n = g.count();
      std::vector<int> hits(static_cast<std::size_t>(g.owned_cells()), 0);
      auto mark = [&](const Box& b) {
        for (index_t k = b.lo[2]; k < b.lo[2] + b.n[2]; ++k)
          for (index_t j = b.lo[1]; j < b.lo[1] + b.n[1]; ++j)
            for (index_t i = b.lo[0]; i < b.lo[0] + b.n[0]; ++i) {
              REQUIRE((i >= 0 && i < n[0] && j >= 0 && j < n[1] && k >= 0 && k < n[2]));
              ++hits[static_cast<std::size_t>((k * n[1] + j) * n[0] + i)];
            }
      };
      const Box in = g.interior(margin);
      if (in.size() > 0) {
        mark(in);
        for (int a = 0; a < s.dims; ++a) {
          CHECK(in.lo[a] >= margin);
          CHECK(in.lo[a] + in.n[a] <= n[static_cast<std::size_t>(a)] - margin);
        }
      }
      for (const Box& b : g.strips(margin)) mark(b);
      INFO("margin " << margin << ", dims " << s.dims);
      CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
    }
  }
}

TEST_CASE("interior_remote and strips_remote tile the owned box and cut only remote faces", "[mpi][grid]") {
  const MpiContext& mpi = test::world();
  for (int margin : {1, 2, 3}) {
    for (GridSpec s : {spec_2d(Boundary::periodic, Boundary::wall, 17, 9, 1),
                       spec_3d(Boundary::periodic, Boundary::open, Boundary::periodic, 8, 9, 11, 1),
                       spec_3d(Boundary::periodic, Boundary::periodic, Boundary::periodic, 7, 6, 9, 1)}) {
      for (const auto& r : factorisations(mpi.size(), s.dims)) {
        s.decomposition.ranks = r;
        Grid g(mpi, s);
        const auto n = g.count();
        std::vector<int> hits(static_cast<std::size_t>(g.owned_cells()), 0);
        auto mark = [&](const Box& b) {
          for (index_t k = b.lo[2]; k < b.lo[2] + b.n[2]; ++k)
            for (index_t j = b.lo[1]; j < b.lo[1] + b.n[1]; ++j)
              for (index_t i = b.lo[0]; i < b.lo[0] + b.n[0]; ++i) {
                REQUIRE((i >= 0 && i < n[0] && j >= 0 && j < n[1] && k >= 0 && k < n[2]));
                ++hits[static_cast<std::size_t>((k * n[1] + j) * n[0] + i)];
              }
        };
        INFO("margin " << margin << ", dims " << s.dims << ", decomposition " << r[0] << "x" << r[1] << "x" << r[2]);
        const Box in = g.interior_remote(margin);
        if (in.size() > 0) {
          mark(in);
          for (int a = 0; a < s.dims; ++a) {
            const index_t na = n[static_cast<std::size_t>(a)];
            // A remote face keeps `margin` cells out; any other reaches the face.
            CHECK(in.lo[a] == (g.remote(a, 0) ? margin : 0));
            CHECK(in.lo[a] + in.n[a] == (g.remote(a, 1) ? na - margin : na));
            // Remote exactly where a message crosses: a neighbour that is another rank.
            const bool periodic = s.boundary[static_cast<std::size_t>(a)][0] == Boundary::periodic;
            CHECK(g.remote(a, 0) == (g.ranks()[static_cast<std::size_t>(a)] > 1 && (periodic || !g.physical(a, 0))));
          }
        }
        for (const Box& b : g.strips_remote(margin)) mark(b);
        CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
        if (mpi.size() == 1) CHECK(g.strips_remote(margin).empty());
      }
    }
  }
}

namespace {
// Counts the calls per cell (host only: the row launch's traversal order).
struct CountVisits {
  FieldView<int> hits;
  void operator()(index_t i, index_t j, index_t k) const { ++hits(i, j, k); }
};
}  // namespace

TEST_CASE("the host box launch visits every cell of a box once", "[grid]") {
  // Storage 9 x 8 x 8 with the box's lower corner at (1, 1, 1); boxes with
  // an even and an odd number of planes (the plane pairs and the last
  // plane alone), a single plane or row, and an empty box.
  const index_t ex = 9, ey = 8, ez = 8;
  for (const Box& box : {Box{{1, 1, 1}, {7, 6, 6}}, Box{{0, 2, 1}, {9, 5, 7}}, Box{{2, 0, 3}, {3, 8, 1}},
                         Box{{0, 3, 0}, {9, 1, 5}}, Box{{4, 4, 4}, {1, 1, 1}}, Box{{1, 1, 1}, {0, 6, 6}}}) {
    std::vector<int> hits(static_cast<std::size_t>(ex * ey * ez), 0);
    const FieldView<int> view = kernels::grid::field_view(hits.data(), Box{{{0, 0, 0}}, {{ex, ey, ez}}});
    kernels::grid::BoxKernel<CountVisits>{box, {view}}.host_for(box.size());
    std::size_t bad = 0;
    for (index_t k = 0; k < ez; ++k)
      for (index_t j = 0; j < ey; ++j)
        for (index_t i = 0; i < ex; ++i) {
          const bool inside = i >= box.lo[0] && i < box.lo[0] + box.n[0] && j >= box.lo[1] &&
                              j < box.lo[1] + box.n[1] && k >= box.lo[2] && k < box.lo[2] + box.n[2];
          if (view(i, j, k) != (inside ? 1 : 0)) ++bad;
        }
    INFO("box lo (" << box.lo[0] << ", " << box.lo[1] << ", " << box.lo[2] << "), n (" << box.n[0] << ", "
                    << box.n[1] << ", " << box.n[2] << ")");
    CHECK(bad == 0);
  }
}

TEST_CASE("global sums are exact to the quantum and see NaN", "[mpi][grid]") {
  const MpiContext& mpi = test::world();
  const Device host = test::devices().front();
  Grid g(mpi, spec_2d(Boundary::periodic, Boundary::periodic, 40, 30, 1));
  Field<double> f(g, host, "f");
  const auto st = g.start();
  // Labels 1 + i + 64 j: the exact sum is known in closed form.
  for_box(host, g.owned(), test::FillCells<double>{f.view(), {st[0], st[1], st[2]}, false});
  double want = 0;
  for (int j = 0; j < 30; ++j)
    for (int i = 0; i < 40; ++i) want += 1 + i + 64 * j;
  CHECK(global_sum(g, host, test::CellValue<double>{f.view()}) == want);
  CHECK(global_max(g, host, test::CellValue<double>{f.view()}) == 1 + 39 + 64 * 29);
  if (mpi.rank() == mpi.size() - 1) {
    std::vector<double> all(static_cast<std::size_t>(g.storage()));
    f.buffer().copy_to_host(all.data(), all.size());
    const auto e = g.extent();   // owned cell (1, 1): past the halo of width 1
    all[static_cast<std::size_t>(2 * e[0] + 2)] = std::numeric_limits<double>::quiet_NaN();
    f.buffer().copy_from_host(all.data(), all.size());
  }
  CHECK(std::isnan(global_sum(g, host, test::CellValue<double>{f.view()})));
  CHECK(std::isnan(global_max(g, host, test::CellValue<double>{f.view()})));
}

TEST_CASE("a decomposition that does not fit is an input error naming the key", "[mpi][grid]") {
  const MpiContext& mpi = test::world();
  GridSpec s = spec_2d(Boundary::periodic, Boundary::wall, 16, 8, 2);
  s.decomposition.ranks = {mpi.size() + 1, 1, 1};
  try {
    Grid g(mpi, s);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("test.decomposition = [") && Catch::Contains("ranks, but the run has"));
  }
  if (mpi.size() > 1) {
    // 3 cells along x over `size` ranks with halo 2: some rank gets fewer than 2.
    GridSpec thin = spec_2d(Boundary::periodic, Boundary::wall, 3, 8, 2);
    thin.decomposition.ranks = {mpi.size(), 1, 1};
    try {
      Grid g(mpi, thin);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Contains("fewer than the halo width 2"));
    }
  }
}
