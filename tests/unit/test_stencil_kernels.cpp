// The stencil kernels (diffusion, shallow water, euler2d) cell by cell on
// small grids, on every backend and in both precisions, against references
// written here from the published formulas over plain arrays (no helper of
// the kernels is called), plus analytic cases whose answer is exact, and
// the box launch's coverage (each cell once, degenerate boxes included).
//
// Tolerances. On the host the references evaluate each formula in the
// kernel's operation order, and the build has no contraction
// (-ffp-contract=off): the results must be the same bits. Elsewhere (nvcc
// contracts a * b + c into fused multiply-adds, and its pow differs from
// glibc's by an ulp or two) a value computed with n roundings is within
// n eps M of the exact one, M the same expression evaluated on magnitudes
// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 3.1;
// `Mag` below carries M), so device and reference differ by at most 2 n eps M.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/backend/buffer.hpp"
#include "engine/grid/grid.hpp"
#include "models/diffusion/kernels.hpp"
#include "models/euler2d/kernels.hpp"
#include "models/shallow_water/kernels.hpp"
#include "tests/support/test_support.hpp"
#include "tests/unit/stencil_test_functors.hpp"

using namespace strata;
namespace ks = kernels::stencil;
namespace kg = kernels::grid;
namespace ke = kernels::stencil::euler2d;
using kg::Box;
using kg::FieldView;
using kg::index_t;

namespace {

// ---- fields on the host (the references' input) and on a device ----------

// n cells per axis plus a halo of h on both sides, x fastest.
template <class T>
struct HostField {
  index_t n[3], h[3], e[3];
  std::vector<T> v;
  HostField(index_t nx, index_t ny, index_t nz, index_t hx, index_t hy, index_t hz)
      : n{nx, ny, nz}, h{hx, hy, hz}, e{nx + 2 * hx, ny + 2 * hy, nz + 2 * hz} {
    v.assign(static_cast<std::size_t>(e[0] * e[1] * e[2]), T(0));
  }
  std::size_t at(index_t i, index_t j, index_t k) const {
    // A reference reaching outside the stored cells is a bug of the test.
    if (!(i >= -h[0] && i < n[0] + h[0] && j >= -h[1] && j < n[1] + h[1] && k >= -h[2] && k < n[2] + h[2]))
      throw std::out_of_range("HostField: cell outside the stored cells");
    return static_cast<std::size_t>(((k + h[2]) * e[1] + j + h[1]) * e[0] + i + h[0]);
  }
  T& operator()(index_t i, index_t j, index_t k = 0) { return v[at(i, j, k)]; }
  T operator()(index_t i, index_t j, index_t k = 0) const { return v[at(i, j, k)]; }
  // f(i, j, k) into every stored cell, halos included.
  template <class F>
  void fill(F f) {
    for (index_t k = -h[2]; k < n[2] + h[2]; ++k)
      for (index_t j = -h[1]; j < n[1] + h[1]; ++j)
        for (index_t i = -h[0]; i < n[0] + h[0]; ++i) (*this)(i, j, k) = static_cast<T>(f(i, j, k));
  }
};

// A copy of a HostField in a Buffer of the device, viewed as the kernels see it.
template <class T>
struct DeviceField {
  Buffer<T> buf;
  Box stored;
  DeviceField(const Device& d, const HostField<T>& f)
      : buf(d, f.v.size()), stored{{{-f.h[0], -f.h[1], -f.h[2]}}, {{f.e[0], f.e[1], f.e[2]}}} {
    buf.copy_from_host(f.v.data(), f.v.size());
  }
  FieldView<T> view() { return kernels::grid::field_view(buf.data(), stored); }
  HostField<T> read(HostField<T> shape) const {
    buf.copy_to_host(shape.v.data(), shape.v.size());
    return shape;
  }
};

template <class T>
struct DeviceArray {
  Buffer<T> buf;
  DeviceArray(const Device& d, const std::vector<T>& v) : buf(d, v.size()) { buf.copy_from_host(v.data(), v.size()); }
  const T* data() const { return buf.data(); }
};

template <class K>
void launch(const Device& d, const Box& box, const K& k) {
  grid::for_box(d, box, test::Launched<K>{k});
}

// A reproducible value in [-1, 1) per (seed, cell) (splitmix64).
double noise(std::uint64_t seed, index_t i, index_t j, index_t k = 0) {
  std::uint64_t z =
      seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>((i + 16) + 64 * (j + 16) + 4096 * (k + 16));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

// ---- the error bound -------------------------------------------------------

// A value and its magnitude M: the expression with every input replaced by
// its absolute value, sums of magnitudes for + and -, products for *, and
// for a / b the first-order (M_a + |a| M_b / |b|) / |b| (the denominators
// here, depths, densities and spacings, are far from zero). pow(a, y)
// carries |a^y| (1 + y M_a / |a|): y times a's relative error, plus its own.
struct Mag {
  double v = 0, m = 0;
  Mag() = default;
  Mag(double x) : v(x), m(std::fabs(x)) {}  // NOLINT: inputs convert implicitly
  static Mag of(double v, double m) {
    Mag r;
    r.v = v;
    r.m = m;
    return r;
  }
};
Mag operator+(Mag a, Mag b) { return Mag::of(a.v + b.v, a.m + b.m); }
Mag operator-(Mag a, Mag b) { return Mag::of(a.v - b.v, a.m + b.m); }
Mag operator-(Mag a) { return Mag::of(-a.v, a.m); }
Mag operator*(Mag a, Mag b) { return Mag::of(a.v * b.v, a.m * b.m); }
Mag operator/(Mag a, Mag b) {
  const double d = std::fabs(b.v);
  return Mag::of(a.v / b.v, (a.m + std::fabs(a.v) * b.m / d) / d);
}
Mag& operator+=(Mag& a, Mag b) { return a = a + b; }
Mag sqrt(Mag a) {
  const double r = std::sqrt(a.v);
  return Mag::of(r, r * (1 + 0.5 * a.m / std::fabs(a.v)));  // half a's relative error, plus its own
}
Mag fabs(Mag a) { return Mag::of(std::fabs(a.v), a.m); }
bool operator>(Mag a, Mag b) { return a.v > b.v; }
Mag pw(Mag a, Mag y) {
  const double r = std::pow(a.v, y.v);
  return Mag::of(r, std::fabs(r) * (1 + std::fabs(y.v) * a.m / std::fabs(a.v)));
}
double pw(double a, double y) { return std::pow(a, y); }
float pw(float a, float y) { return powf(a, y); }

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Compares a kernel's output cells with the reference: bitwise on the host,
// within 2 n eps M elsewhere (n the roundings on the longest path).
template <class T>
struct Tally {
  const Device& d;
  double roundings;
  std::size_t cells = 0, bad = 0;
  std::ostringstream first;
  double eps = std::numeric_limits<T>::epsilon();
  Tally(const Device& device, double n) : d(device), roundings(n) {}
  void check(const char* what, index_t i, index_t j, index_t k, T got, T ref, double mag) {
    ++cells;
    const double tol = 2 * roundings * eps * mag;
    const bool ok = d.backend == Backend::host ? same_bits(got, ref) : std::fabs(double(got) - double(ref)) <= tol;
    if (ok) return;
    if (++bad <= 4)
      first << what << "(" << i << ", " << j << ", " << k << "): " << got << " against " << ref << " (tolerance "
            << (d.backend == Backend::host ? 0.0 : tol) << ")\n";
  }
  void verdict() {
    INFO(first.str());
    CHECK(cells > 0);
    CHECK(bad == 0);
  }
};

template <class T>
Precision precision_of() {
  return std::is_same_v<T, float> ? Precision::fp32 : Precision::fp64;
}

// ---- diffusion: explicit Euler with the 7-point Laplacian -------------------

// u + dt kappa lap(u) with c_a = kappa dt / d_a^2, written as diffusion.hpp
// does: w u + c_x (u(i-1) + u(i+1)) + ..., w = 1 - 2 (c_x + c_y + c_z).
template <class R, class T>
R heat_reference(const HostField<T>& u, T cx, T cy, T cz, T w, index_t i, index_t j, index_t k) {
  const R c = R(u(i, j, k));
  return R(w) * c + R(cx) * (R(u(i - 1, j, k)) + R(u(i + 1, j, k))) +
         R(cy) * (R(u(i, j - 1, k)) + R(u(i, j + 1, k))) + R(cz) * (R(u(i, j, k - 1)) + R(u(i, j, k + 1)));
}

}  // namespace

TEMPLATE_TEST_CASE("HeatStep matches the 7-point Laplacian cell by cell", "[stencil][diffusion]", double, float) {
  using T = TestType;
  HostField<T> u(6, 5, 4, 1, 1, 1), shape(6, 5, 4, 1, 1, 1);
  u.fill([](index_t i, index_t j, index_t k) { return noise(1, i, j, k); });
  const T cx = T(0.11), cy = T(0.07), cz = T(0.05);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      DeviceField<T> du(d, u), dout(d, shape);
      const Box owned{{0, 0, 0}, {6, 5, 4}};
      const auto step = ks::heat_step<T>(du.view(), dout.view(), cx, cy, cz);
      // The centre's weight, 1 - 2 (cx + cy + cz) to within T's rounding.
      CHECK(std::fabs(double(step.w) - (1 - 2 * (double(cx) + double(cy) + double(cz)))) <=
            std::numeric_limits<T>::epsilon());
      launch(d, owned, step);
      const HostField<T> out = dout.read(shape);
      Tally<T> t{d, 10};  // w c, then per axis a sum, a product and an addition
      for (index_t k = 0; k < 4; ++k)
        for (index_t j = 0; j < 5; ++j)
          for (index_t i = 0; i < 6; ++i)
            t.check("out", i, j, k, out(i, j, k), heat_reference<T>(u, cx, cy, cz, step.w, i, j, k),
                    heat_reference<Mag>(u, cx, cy, cz, step.w, i, j, k).m);
      t.verdict();
      // Halo cells are not written.
      CHECK(out(-1, 0, 0) == T(0));
      CHECK(out(6, 4, 3) == T(0));
    }
  }
}

TEMPLATE_TEST_CASE("HeatStep's Laplacian of a quadratic is exact", "[stencil][diffusion]", double, float) {
  using T = TestType;
  // u = i^2 + 2 j^2 - k^2 + 3 i - j: the second differences are 2, 4 and
  // -2 exactly, so with c = 1/8 on every axis out = u + 1/4 + 1/2 - 1/4:
  // small integers and powers of two, exact in either precision and with
  // or without fused multiply-adds.
  HostField<T> u(6, 5, 4, 1, 1, 1), shape(6, 5, 4, 1, 1, 1);
  const auto quad = [](index_t i, index_t j, index_t k) {
    return static_cast<double>(i * i + 2 * j * j - k * k + 3 * i - j);
  };
  u.fill(quad);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      DeviceField<T> du(d, u), dout(d, shape);
      launch(d, Box{{0, 0, 0}, {6, 5, 4}}, ks::heat_step<T>(du.view(), dout.view(), T(0.125), T(0.125), T(0.125)));
      const HostField<T> out = dout.read(shape);
      std::size_t bad = 0;
      for (index_t k = 0; k < 4; ++k)
        for (index_t j = 0; j < 5; ++j)
          for (index_t i = 0; i < 6; ++i) bad += out(i, j, k) != static_cast<T>(quad(i, j, k) + 0.5);
      CHECK(bad == 0);
    }
  }
}

TEMPLATE_TEST_CASE("PeriodicHeatStep gives HeatStep's bits after a wrap, and writes the y halo rows it owes",
                   "[stencil][diffusion]", double, float) {
  // Every combination of wrapped axes, on the owned box and on a part of
  // it (a strip along an axis that is not wrapped), by the backends'
  // launches and by every thread of the CUDA launch walked on the host
  // (thread_cells, 1 to 16 rows a thread).
  using T = TestType;
  const index_t n[3] = {7, 6, 5};
  HostField<T> u(n[0], n[1], n[2], 1, 1, 1), shape(n[0], n[1], n[2], 1, 1, 1);
  u.fill([](index_t i, index_t j, index_t k) { return noise(7, i, j, k); });
  const T cx = T(0.11), cy = T(0.07), cz = T(0.05);
  for (int mask = 0; mask < 8; ++mask) {
    const bool wrap[3] = {(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
    // The reference: the wrapped axes' halos copied across the seams (as
    // HaloExchange's wrap does), then HeatStep on every cell.
    HostField<T> wrapped = u;
    for (int a = 0; a < 3; ++a) {
      if (!wrap[a]) continue;
      wrapped.fill([&](index_t i, index_t j, index_t k) {
        index_t c[3] = {i, j, k};
        for (int b = 0; b <= a; ++b)
          if (wrap[b]) c[b] = c[b] < 0 ? c[b] + n[b] : (c[b] >= n[b] ? c[b] - n[b] : c[b]);
        return wrapped(c[0], c[1], c[2]);
      });
    }
    std::vector<Box> boxes = {Box{{0, 0, 0}, {n[0], n[1], n[2]}}};
    if (!wrap[2]) boxes.push_back(Box{{0, 0, 1}, {n[0], n[1], 3}});
    if (!wrap[0]) boxes.push_back(Box{{1, 0, 0}, {5, n[1], n[2]}});
    for (const Box& box : boxes) {
      const auto differ = [](T a, T b) { return std::memcmp(&a, &b, sizeof(T)) != 0; };
      const auto check = [&](const HostField<T>& out, const std::string& how) {
        INFO(how << ": wrapped x " << wrap[0] << " y " << wrap[1] << " z " << wrap[2] << ", box lo (" << box.lo[0]
                 << ", " << box.lo[1] << ", " << box.lo[2] << ")");
        const auto ref = ks::heat_step<T>(FieldView<const T>{}, FieldView<T>{}, cx, cy, cz);
        std::size_t bad = 0, halo = 0;
        for (index_t k = box.lo[2]; k < box.lo[2] + box.n[2]; ++k)
          for (index_t j = box.lo[1]; j < box.lo[1] + box.n[1]; ++j)
            for (index_t i = box.lo[0]; i < box.lo[0] + box.n[0]; ++i) {
              const T want =
                  ref.update(wrapped(i, j, k), wrapped(i - 1, j, k), wrapped(i + 1, j, k), wrapped(i, j - 1, k),
                             wrapped(i, j + 1, k), wrapped(i, j, k - 1), wrapped(i, j, k + 1));
              bad += differ(want, out(i, j, k));
              // The halo rows of y: copies of the rows across the seam.
              if (wrap[1] && j == 0) halo += differ(out(i, n[1], k), out(i, 0, k));
              if (wrap[1] && j == n[1] - 1) halo += differ(out(i, -1, k), out(i, j, k));
            }
        CHECK(bad == 0);
        CHECK(halo == 0);
      };
      // u as a step sees it: the y halo rows of a wrapped y hold the
      // copies (the step before wrote them), every other halo is left as
      // it was (noise), which the wrapped axes must never read.
      HostField<T> input = u;
      if (wrap[1])
        for (index_t k = -1; k <= n[2]; ++k)
          for (index_t i = -1; i <= n[0]; ++i) {
            input(i, -1, k) = u(i, n[1] - 1, k);
            input(i, n[1], k) = u(i, 0, k);
          }
      for (const Device& d : test::devices()) {
        DeviceField<T> du(d, input), dout(d, shape);
        const auto step = ks::periodic_heat_step(ks::heat_step<T>(du.view(), dout.view(), cx, cy, cz), box, n, wrap);
        parallel_for(d, box.size(), step);
        check(dout.read(shape), std::string(to_string(d.backend)));
      }
      for (int rows : {1, 2, 3, 8, 16}) {
        HostField<T> in = input, out = shape;
        const Box stored{{-1, -1, -1}, {n[0] + 2, n[1] + 2, n[2] + 2}};
        const auto step =
            ks::periodic_heat_step(ks::heat_step<T>(kernels::grid::field_view<const T>(in.v.data(), stored),
                                                    kernels::grid::field_view(out.v.data(), stored), cx, cy, cz),
                                   box, n, wrap);
        const kernels::grid::BoxLaunchShape launch_shape(box, rows);
        const std::int64_t y_threads = launch_shape.grid[1] * launch_shape.block[1];
        for (std::int64_t bz = 0; bz < launch_shape.grid[2]; ++bz)
          for (std::int64_t ty = 0; ty < y_threads; ++ty)
            for (std::int64_t tx = 0; tx < launch_shape.grid[0] * launch_shape.block[0]; ++tx)
              step.thread_cells(rows, tx, ty, y_threads, bz, launch_shape.grid[2]);
        check(out, rows == 1 ? "CUDA threads, 1 row" : "CUDA threads, several rows");
      }
    }
  }
}

// ---- shallow water: Sadourny's energy-conserving C-grid scheme --------------

namespace {

// The right-hand side and the SSP-RK3 stage of shallow_water.hpp's header,
// h at centres, u on west faces, v on south faces, q at SW corners.
template <class R, class T>
struct ShallowWaterReference {
  const HostField<T>& h;
  const HostField<T>& u;
  const HostField<T>& v;
  T g, rdx, rdy, nu;
  double f0, beta, y0, dy;  // f = f0 + beta (y0 + (start + j) dy) at corner row j
  index_t start;

  R H(index_t i, index_t j) const { return R(h(i, j)); }
  R Uf(index_t i, index_t j) const { return R(u(i, j)); }
  R Vf(index_t i, index_t j) const { return R(v(i, j)); }
  R depth_west(index_t i, index_t j) const { return R(T(0.5)) * (H(i - 1, j) + H(i, j)); }
  R depth_south(index_t i, index_t j) const { return R(T(0.5)) * (H(i, j - 1) + H(i, j)); }
  R depth_corner(index_t i, index_t j) const {
    return R(T(0.25)) * ((H(i - 1, j - 1) + H(i, j - 1)) + (H(i - 1, j) + H(i, j)));
  }
  R mass_x(index_t i, index_t j) const { return depth_west(i, j) * Uf(i, j); }
  R mass_y(index_t i, index_t j) const { return depth_south(i, j) * Vf(i, j); }
  R vorticity(index_t i, index_t j) const {
    return (Vf(i, j) - Vf(i - 1, j)) * R(rdx) - (Uf(i, j) - Uf(i, j - 1)) * R(rdy);
  }
  R potential_vorticity(index_t i, index_t j) const {
    const R f = R(static_cast<T>(f0 + beta * (y0 + static_cast<double>(start + j) * dy)));
    return (f + vorticity(i, j)) / depth_corner(i, j);
  }
  R bernoulli(index_t i, index_t j) const {
    const R u0 = Uf(i, j), u1 = Uf(i + 1, j), v0 = Vf(i, j), v1 = Vf(i, j + 1);
    return R(g) * H(i, j) + R(T(0.25)) * ((u0 * u0 + u1 * u1) + (v0 * v0 + v1 * v1));
  }
  R dh(index_t i, index_t j) const {
    return -((mass_x(i + 1, j) - mass_x(i, j)) * R(rdx) + (mass_y(i, j + 1) - mass_y(i, j)) * R(rdy));
  }
  R du(index_t i, index_t j) const {
    R r = R(T(0.25)) * (potential_vorticity(i, j) * (mass_y(i - 1, j) + mass_y(i, j)) +
                        potential_vorticity(i, j + 1) * (mass_y(i - 1, j + 1) + mass_y(i, j + 1))) -
          (bernoulli(i, j) - bernoulli(i - 1, j)) * R(rdx);
    if (nu != T(0)) {
      const R c = Uf(i, j);
      const R fx = H(i, j) * (Uf(i + 1, j) - c) - H(i - 1, j) * (c - Uf(i - 1, j));
      const R fy = depth_corner(i, j + 1) * (Uf(i, j + 1) - c) - depth_corner(i, j) * (c - Uf(i, j - 1));
      r += R(nu) * (fx * R(rdx) * R(rdx) + fy * R(rdy) * R(rdy)) / depth_west(i, j);
    }
    return r;
  }
  R dv(index_t i, index_t j) const {
    R r = R(-T(0.25)) * (potential_vorticity(i, j) * (mass_x(i, j - 1) + mass_x(i, j)) +
                         potential_vorticity(i + 1, j) * (mass_x(i + 1, j - 1) + mass_x(i + 1, j))) -
          (bernoulli(i, j) - bernoulli(i, j - 1)) * R(rdy);
    if (nu != T(0)) {
      const R c = Vf(i, j);
      const R fx = depth_corner(i + 1, j) * (Vf(i + 1, j) - c) - depth_corner(i, j) * (c - Vf(i - 1, j));
      const R fy = H(i, j) * (Vf(i, j + 1) - c) - H(i, j - 1) * (c - Vf(i, j - 1));
      r += R(nu) * (fx * R(rdx) * R(rdx) + fy * R(rdy) * R(rdy)) / depth_south(i, j);
    }
    return r;
  }
  // s0 + b ((s - s0) + dt L(s)) for one variable.
  static R stage(T s0, T s, R tendency, T b, T dt) { return R(s0) + R(b) * ((R(s) - R(s0)) + R(dt) * tendency); }
};

// The beta plane of the shallow-water cases: f = f0 + beta (y0 + (start + j) dy).
constexpr double kF0 = 0.5, kBeta = 0.01, kY0 = -2, kDy = 4;

ks::CoriolisRows beta_plane(index_t start) {
  ks::CoriolisRows f;
  f.f0 = kF0;
  f.beta = kBeta;
  f.y0 = kY0;
  f.dy = kDy;
  f.start = start;
  return f;
}

struct ShallowWaterCase {
  double nu;
  bool walls;
  bool columns = false;  // the model's launch (ShallowWaterColumns), not the cell launch
};

// A stage's input s (h, u, v) and start state s0 (h0, u0, v0) on nx x ny
// cells with a halo of 1: depths 10 +- 0.5, velocities +-1, from noise
// seeds `seed` to seed + 5.
template <class T>
struct ShallowWaterFields {
  HostField<T> h, u, v, h0, u0, v0;
  ShallowWaterFields(index_t nx, index_t ny, std::uint64_t seed)
      : h(nx, ny, 1, 1, 1, 0), u(h), v(h), h0(h), u0(h), v0(h) {
    HostField<T>* const all[6] = {&h, &u, &v, &h0, &u0, &v0};
    for (int f = 0; f < 6; ++f) {
      const bool depth = f % 3 == 0;
      const std::uint64_t k = seed + static_cast<std::uint64_t>(f);
      all[f]->fill([&](index_t i, index_t j, index_t) { return depth ? 10 + 0.5 * noise(k, i, j) : noise(k, i, j); });
    }
  }
};

template <class T>
void shallow_water_stage_case(const Device& d, const ShallowWaterCase& c, const HostField<T>& h, const HostField<T>& u,
                              const HostField<T>& v, const HostField<T>& h0, const HostField<T>& u0,
                              const HostField<T>& v0, bool at_rest) {
  const T g = T(9.81), rdx = T(0.25), rdy = T(0.2), nu = static_cast<T>(c.nu), b = T(2) / T(3), dt = T(0.05);
  const double f0 = kF0, beta = kBeta, y0 = kY0, dy = kDy;
  const index_t start = 3, nx = h.n[0], ny = h.n[1];
  const HostField<T> shape(nx, ny, 1, 1, 1, 0);
  DeviceField<T> dh(d, h), du(d, u), dv(d, v), dh0(d, h0), du0(d, u0), dv0(d, v0);
  DeviceField<T> oh(d, shape), ou(d, shape), ov(d, shape);
  ks::CoriolisRows f = beta_plane(start);
  const ks::ShallowWaterRhs<T> rhs{dh.view(), du.view(), dv.view(), g, rdx, rdy, nu, f};
  const ks::ShallowWaterStage<T> stage{rhs,       dh0.view(), du0.view(), dv0.view(), oh.view(), ou.view(),
                                       ov.view(), b,          dt,         c.walls,    c.walls};
  const Box box{{0, 0, 0}, {nx, ny, 1}};
  if (c.columns) {
    parallel_for(d, box.size(), shallow_water::ShallowWaterColumns<T>{stage, box});
  } else {
    launch(d, box, stage);
  }
  const HostField<T> got_h = oh.read(shape), got_u = ou.read(shape), got_v = ov.read(shape);
  if (at_rest) {
    // Flat and at rest: every term of L is an exact zero, whatever the
    // rounding or contraction, and the stage returns its input.
    std::size_t bad = 0;
    for (index_t j = 0; j < ny; ++j)
      for (index_t i = 0; i < nx; ++i) bad += got_h(i, j) != h(i, j) || got_u(i, j) != T(0) || got_v(i, j) != T(0);
    CHECK(bad == 0);
    return;
  }
  const ShallowWaterReference<T, T> ref{h, u, v, g, rdx, rdy, nu, f0, beta, y0, dy, start};
  const ShallowWaterReference<Mag, T> mag{h, u, v, g, rdx, rdy, nu, f0, beta, y0, dy, start};
  using Ref = ShallowWaterReference<T, T>;
  using MagRef = ShallowWaterReference<Mag, T>;
  // The longest path, du with viscosity: 11 roundings for q (5 for zeta,
  // 4 for the corner depth, the cast of f, the sum, the division), 3 for a
  // mass flux, 4 to combine, 7 for B's difference, 15 for the viscous
  // term, 5 for the stage: 45; 50 bounds every path.
  Tally<T> t{d, 50};
  for (index_t j = 0; j < ny; ++j)
    for (index_t i = 0; i < nx; ++i) {
      t.check("h", i, j, 0, got_h(i, j), Ref::stage(h0(i, j), h(i, j), ref.dh(i, j), b, dt),
              MagRef::stage(h0(i, j), h(i, j), mag.dh(i, j), b, dt).m);
      const bool u_wall = c.walls && i == 0, v_wall = c.walls && j == 0;
      t.check("u", i, j, 0, got_u(i, j), u_wall ? T(0) : Ref::stage(u0(i, j), u(i, j), ref.du(i, j), b, dt),
              MagRef::stage(u0(i, j), u(i, j), mag.du(i, j), b, dt).m);
      t.check("v", i, j, 0, got_v(i, j), v_wall ? T(0) : Ref::stage(v0(i, j), v(i, j), ref.dv(i, j), b, dt),
              MagRef::stage(v0(i, j), v(i, j), mag.dv(i, j), b, dt).m);
    }
  t.verdict();
}

}  // namespace

TEMPLATE_TEST_CASE("ShallowWaterStage matches the C-grid scheme cell by cell", "[stencil][shallow_water]", double,
                   float) {
  using T = TestType;
  // 6 x 5 cells with a halo of 1: depths 10 +- 0.5, velocities +-1, a stage
  // start state s0 different from the stage input s (b = 2/3, the third stage).
  const ShallowWaterFields<T> s(6, 5, 11);
  const HostField<T>&h = s.h, &u = s.u, &v = s.v, &h0 = s.h0, &u0 = s.u0, &v0 = s.v0;
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      for (const ShallowWaterCase c : {ShallowWaterCase{0.0, false}, ShallowWaterCase{0.3, true},
                                       ShallowWaterCase{0.0, false, true}, ShallowWaterCase{0.3, true, true}}) {
        INFO("nu " << c.nu << (c.walls ? ", low walls" : ", no walls")
                   << (c.columns ? ", ShallowWaterColumns" : ", a thread a cell"));
        shallow_water_stage_case(d, c, h, u, v, h0, u0, v0, false);
      }
    }
  }
}

TEMPLATE_TEST_CASE("ShallowWaterStage::columns shares a thread's values with the cell's bits",
                   "[stencil][shallow_water]", double, float) {
  using T = TestType;
  // 7 x 19 cells with a halo of 1, walked as CUDA's ShallowWaterColumns
  // threads walk them (groups of K = 1, 2, 3 neighbouring columns, the last
  // group short of 7; runs of 1 to 16 rows; the stage with one row stride
  // for its views) and cell by cell: the same bits, with and without
  // viscosity and the low walls.
  const index_t nx = 7, ny = 19;
  const ShallowWaterFields<T> s(nx, ny, 21);
  const HostField<T>&h = s.h, &u = s.u, &v = s.v, &h0 = s.h0, &u0 = s.u0, &v0 = s.v0;
  const Box stored{{-1, -1, 0}, {nx + 2, ny + 2, 1}};
  const auto in = [&](const HostField<T>& f) { return kg::field_view(f.v.data(), stored); };
  const auto walk = [&](auto k_columns, const ShallowWaterCase& c) {
    constexpr int K = decltype(k_columns)::value;
    const ks::ShallowWaterRhs<T> rhs{in(h),        in(u), in(v), T(9.81), T(0.25), T(0.2), static_cast<T>(c.nu),
                                     beta_plane(3)};
    for (int rows = 1; rows <= 16; ++rows) {
      INFO(K << " columns a thread, " << rows << " rows a run");
      HostField<T> ch = h, cu = h, cv = h, oh = h, ou = h, ov = h;
      const auto out = [&](HostField<T>& f) { return kg::field_view(f.v.data(), stored); };
      const ks::ShallowWaterStage<T> cells{rhs,     in(h0),      in(u0),  in(v0),  out(ch), out(cu),
                                           out(cv), T(2) / T(3), T(0.05), c.walls, c.walls};
      const ks::ShallowWaterStage<T> threads{rhs,     in(h0),      in(u0),  in(v0),  out(oh), out(ou),
                                             out(ov), T(2) / T(3), T(0.05), c.walls, c.walls};
      REQUIRE(threads.one_row_stride());
      const ks::ShallowWaterStage<T> shared = threads.with_one_row_stride();
      for (index_t i = 0; i < nx; ++i)
        for (index_t j = 0; j < ny; ++j) cells(i, j, 0);
      for (index_t i0 = 0; i0 < nx; i0 += K)
        for (index_t j = 0; j < ny; j += rows) shared.template columns<K>(i0, nx, j, std::min<index_t>(j + rows, ny));
      CHECK(std::memcmp(ch.v.data(), oh.v.data(), ch.v.size() * sizeof(T)) == 0);
      CHECK(std::memcmp(cu.v.data(), ou.v.data(), cu.v.size() * sizeof(T)) == 0);
      CHECK(std::memcmp(cv.v.data(), ov.v.data(), cv.v.size() * sizeof(T)) == 0);
    }
  };
  for (const ShallowWaterCase c : {ShallowWaterCase{0.0, false}, ShallowWaterCase{0.3, true}}) {
    INFO("nu " << c.nu << (c.walls ? ", low walls" : ", no walls"));
    walk(std::integral_constant<int, 1>{}, c);
    walk(std::integral_constant<int, 2>{}, c);
    walk(std::integral_constant<int, 3>{}, c);
  }
}

TEMPLATE_TEST_CASE("ShallowWaterColumns writes the halo images of a wrapped axis' ends", "[stencil][shallow_water]",
                   double, float) {
  using T = TestType;
  // A rank that spans a periodic axis alone: the stage writes its output's
  // halo cells that copy the owned cells at either end of that axis (halo
  // column n0 of column 0, -1 of n0 - 1; rows likewise; the corners of
  // both), so the next stage needs no wrap. The owned cells must be those
  // of the stage without it, bit for bit, every image its cell's bits, and
  // a halo of an axis not wrapped untouched. The owned box in one launch
  // and in two (rows split, as the interior and a strip go on more ranks);
  // both axes, x alone, y alone; one row (a one-dimensional run) and one
  // column.
  struct Case {
    index_t nx, ny;
    bool wrap_x, wrap_y;
    index_t split;  // rows of the first launch (0: one launch)
  };
  const T sentinel = T(-12345);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      for (const Case c : {Case{6, 5, true, true, 0}, Case{6, 5, true, true, 2}, Case{6, 5, true, false, 0},
                           Case{6, 5, false, true, 3}, Case{7, 1, true, true, 0}, Case{1, 4, true, true, 0}}) {
        INFO(c.nx << " x " << c.ny << (c.wrap_x ? ", x wrapped" : "") << (c.wrap_y ? ", y wrapped" : "")
                  << (c.split > 0 ? ", two launches" : ""));
        const ShallowWaterFields<T> s(c.nx, c.ny, 61);
        HostField<T> shape(c.nx, c.ny, 1, 1, 1, 0);
        shape.fill([&](index_t, index_t, index_t) { return sentinel; });
        DeviceField<T> dh(d, s.h), du(d, s.u), dv(d, s.v), dh0(d, s.h0), du0(d, s.u0), dv0(d, s.v0);
        DeviceField<T> wh(d, shape), wu(d, shape), wv(d, shape), ph(d, shape), pu(d, shape), pv(d, shape);
        const ks::ShallowWaterRhs<T> rhs{dh.view(), du.view(), dv.view(), T(9.81),
                                         T(0.25),   T(0.2),    T(0),      beta_plane(3)};
        ks::ShallowWaterStage<T> wrapped{rhs,       dh0.view(),  du0.view(), dv0.view(), wh.view(), wu.view(),
                                         wv.view(), T(2) / T(3), T(0.05),    false,      false};
        ks::ShallowWaterStage<T> plain = wrapped;
        plain.h = ph.view();
        plain.u = pu.view();
        plain.v = pv.view();
        wrapped.wrap[0] = c.wrap_x ? c.nx : 0;
        wrapped.wrap[1] = c.wrap_y ? c.ny : 0;
        std::vector<Box> boxes = {Box{{0, 0, 0}, {c.nx, c.ny, 1}}};
        if (c.split > 0) boxes = {Box{{0, 0, 0}, {c.nx, c.split, 1}}, Box{{0, c.split, 0}, {c.nx, c.ny - c.split, 1}}};
        for (const Box& box : boxes) {
          parallel_for(d, box.size(), shallow_water::ShallowWaterColumns<T>{wrapped, box});
          parallel_for(d, box.size(), shallow_water::ShallowWaterColumns<T>{plain, box});
        }
        const HostField<T> got[3] = {wh.read(shape), wu.read(shape), wv.read(shape)};
        const HostField<T> want[3] = {ph.read(shape), pu.read(shape), pv.read(shape)};
        // The owned cell a stored cell copies (itself if owned), or none.
        const auto source = [&](index_t i, index_t j, index_t& si, index_t& sj) {
          si = i;
          sj = j;
          if (i < 0 || i >= c.nx) {
            if (!c.wrap_x) return false;
            si = i < 0 ? c.nx - 1 : 0;
          }
          if (j < 0 || j >= c.ny) {
            if (!c.wrap_y) return false;
            sj = j < 0 ? c.ny - 1 : 0;
          }
          return true;
        };
        std::size_t bad = 0;
        for (int f = 0; f < 3; ++f)
          for (index_t j = -1; j <= c.ny; ++j)
            for (index_t i = -1; i <= c.nx; ++i) {
              index_t si = 0, sj = 0;
              const T expect = source(i, j, si, sj) ? want[f](si, sj) : sentinel;
              const T have = got[f](i, j);
              bad += std::memcmp(&expect, &have, sizeof(T)) != 0;
            }
        CHECK(bad == 0);
      }
    }
  }
}

TEMPLATE_TEST_CASE("ShallowWaterStage keeps a flat fluid at rest", "[stencil][shallow_water]", double, float) {
  using T = TestType;
  HostField<T> h(6, 5, 1, 1, 1, 0), zero = h;
  h.fill([](index_t, index_t, index_t) { return 10.0; });
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      // With rotation (f != 0), viscosity and walls: still exactly at rest.
      shallow_water_stage_case(d, ShallowWaterCase{0.3, true}, h, zero, zero, h, zero, zero, true);
    }
  }
}

TEMPLATE_TEST_CASE("NormalVelocityWall makes the normal velocity odd about a wall, 0 on it", "[stencil][shallow_water]",
                   double, float) {
  using T = TestType;
  // A halo of 2, so that beside the wall face itself (face n on the high
  // side, a halo face) a mirrored face is checked on each side:
  // f(-a) = -f(a) below, f(n + a) = -f(n - a) above.
  const index_t n[2] = {6, 5};
  HostField<T> f(n[0], n[1], 1, 2, 2, 0);
  f.fill([](index_t i, index_t j, index_t) { return noise(71, i, j); });
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      for (int axis = 0; axis < 2; ++axis)
        for (int side = 0; side < 2; ++side) {
          INFO("axis " << axis << ", side " << side);
          const int other = 1 - axis;
          Box box;
          box.lo[axis] = side == 0 ? -2 : n[axis];
          box.n[axis] = 2;
          box.lo[other] = -2;
          box.n[other] = n[other] + 4;
          DeviceField<T> df(d, f);
          launch(d, box, ks::NormalVelocityWall<T>{df.view(), axis, n[axis], side});
          const HostField<T> got = df.read(f);
          std::size_t bad = 0;
          for (index_t j = -2; j < n[1] + 2; ++j)
            for (index_t i = -2; i < n[0] + 2; ++i) {
              const index_t a = axis == 0 ? i : j;
              const bool in_box = side == 0 ? a < 0 : a >= n[axis];
              T expect = f(i, j);
              if (in_box && side == 1 && a == n[axis]) {
                expect = T(0);
              } else if (in_box) {
                const index_t mirror = side == 0 ? -a : 2 * n[axis] - a;
                expect = -(axis == 0 ? f(mirror, j) : f(i, mirror));
              }
              bad += !same_bits(got(i, j), expect);
            }
          CHECK(bad == 0);
        }
    }
  }
}

TEMPLATE_TEST_CASE("VorticityAtCentres is the mean of the four corner vorticities", "[stencil][shallow_water]", double,
                   float) {
  using T = TestType;
  HostField<T> h(6, 5, 1, 1, 1, 0), u = h, v = h;
  h.fill([](index_t i, index_t j, index_t) { return 10 + 0.5 * noise(91, i, j); });
  u.fill([](index_t i, index_t j, index_t) { return noise(92, i, j); });
  v.fill([](index_t i, index_t j, index_t) { return noise(93, i, j); });
  const T rdx = T(0.25), rdy = T(0.2);
  const ShallowWaterReference<T, T> ref{h, u, v, T(9.81), rdx, rdy, T(0), 0, 0, 0, 1, 0};
  const ShallowWaterReference<Mag, T> mag{h, u, v, T(9.81), rdx, rdy, T(0), 0, 0, 0, 1, 0};
  const auto centre = [](const auto& r, index_t i, index_t j) {
    using R = decltype(r.vorticity(i, j));
    return R(T(0.25)) *
           ((r.vorticity(i, j) + r.vorticity(i + 1, j)) + (r.vorticity(i, j + 1) + r.vorticity(i + 1, j + 1)));
  };
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      DeviceField<T> dh(d, h), du(d, u), dv(d, v), dout(d, h);
      const ks::ShallowWaterRhs<T> rhs{dh.view(), du.view(), dv.view(), T(9.81), rdx, rdy, T(0), ks::CoriolisRows{}};
      launch(d, Box{{0, 0, 0}, {6, 5, 1}}, ks::VorticityAtCentres<T>{rhs, dout.view()});
      const HostField<T> got = dout.read(h);
      Tally<T> t{d, 9};  // 5 roundings per corner, 3 sums, 1 product
      for (index_t j = 0; j < 5; ++j)
        for (index_t i = 0; i < 6; ++i)
          t.check("vorticity", i, j, 0, got(i, j), centre(ref, i, j), centre(mag, i, j).m);
      t.verdict();
    }
  }
}

namespace {

template <class F>
void launch_cells(const Device& d, const Box& box, const F& f, FieldView<double> out) {
  grid::for_box(d, box, test::CellValues<F>{f, out});
}

// Total energy per unit area h K + g h^2 / 2, K = (mean_x u^2 + mean_y v^2) / 2, in double.
template <class R, class T>
R energy_reference(const HostField<T>& h, const HostField<T>& u, const HostField<T>& v, T g, index_t i, index_t j) {
  const R hh = R(double(h(i, j)));
  const R u0 = R(double(u(i, j))), u1 = R(double(u(i + 1, j))), v0 = R(double(v(i, j))), v1 = R(double(v(i, j + 1)));
  const R k = R(0.25) * ((u0 * u0 + u1 * u1) + (v0 * v0 + v1 * v1));
  return hh * k + R(0.5) * R(double(g)) * hh * hh;
}

// Potential enstrophy h q^2 / 2 at a corner (q and h there in the field's
// precision), a cell taking the mean of its four corners.
template <class R, class Ref>
R enstrophy_corner(const Ref& s, index_t i, index_t j) {
  const R q = R(s.potential_vorticity(i, j));
  return R(0.5) * R(s.depth_corner(i, j)) * q * q;
}
template <class R, class Ref>
R enstrophy_reference(const Ref& s, index_t i, index_t j) {
  return R(0.25) * ((enstrophy_corner<R>(s, i, j) + enstrophy_corner<R>(s, i + 1, j)) +
                    (enstrophy_corner<R>(s, i, j + 1) + enstrophy_corner<R>(s, i + 1, j + 1)));
}

}  // namespace

TEMPLATE_TEST_CASE("shallow-water diagnostics per cell: energy, enstrophy, Courant number", "[stencil][shallow_water]",
                   double, float) {
  using T = TestType;
  HostField<T> h(6, 5, 1, 1, 1, 0), u = h, v = h;
  h.fill([](index_t i, index_t j, index_t) { return 10 + 0.5 * noise(101, i, j); });
  u.fill([](index_t i, index_t j, index_t) { return noise(102, i, j); });
  v.fill([](index_t i, index_t j, index_t) { return noise(103, i, j); });
  const T g = T(9.81), rdx = T(0.25), rdy = T(0.2);
  const double f0 = kF0, beta = kBeta, y0 = kY0, dy = kDy;
  const index_t start = 3;
  const ShallowWaterReference<T, T> ref{h, u, v, g, rdx, rdy, T(0), f0, beta, y0, dy, start};
  const ShallowWaterReference<Mag, T> mag{h, u, v, g, rdx, rdy, T(0), f0, beta, y0, dy, start};
  ks::CourantCoefficients cc;
  cc.rdx = 0.25;
  cc.rdy = 0.2;
  cc.viscous = 0.3;
  cc.g = 9.81;
  cc.dt = 0.7;
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      DeviceField<T> dh(d, h), du(d, u), dv(d, v);
      const HostField<double> shape(6, 5, 1, 1, 1, 0);
      DeviceField<double> energy(d, shape), enstrophy(d, shape), courant(d, shape);
      const ks::CoriolisRows f = beta_plane(start);
      const ks::ShallowWaterRhs<T> rhs{dh.view(), du.view(), dv.view(), g, rdx, rdy, T(0), f};
      const Box owned{{0, 0, 0}, {6, 5, 1}};
      launch_cells(d, owned, ks::EnergyOf<T>{rhs}, energy.view());
      launch_cells(d, owned, ks::EnstrophyOf<T>{rhs}, enstrophy.view());
      launch_cells(d, owned, ks::CourantOf<T>{dh.view(), du.view(), dv.view(), cc}, courant.view());
      const HostField<double> got_e = energy.read(shape), got_z = enstrophy.read(shape), got_c = courant.read(shape);
      // Energy: 9 roundings in double. Enstrophy: q (11 roundings) and the
      // corner depth (4) in the field's precision, 8 more: 25 of eps(T).
      // Courant: a sum of positive terms (M is the value), 10 roundings.
      Tally<double> te{d, 9}, tz{d, 25}, tc{d, 10};
      tz.eps = std::numeric_limits<T>::epsilon();
      for (index_t j = 0; j < 5; ++j)
        for (index_t i = 0; i < 6; ++i) {
          te.check("energy", i, j, 0, got_e(i, j), energy_reference<double>(h, u, v, g, i, j),
                   energy_reference<Mag>(h, u, v, g, i, j).m);
          tz.check("enstrophy", i, j, 0, got_z(i, j), enstrophy_reference<double>(ref, i, j),
                   enstrophy_reference<Mag>(mag, i, j).m);
          const double wave = std::sqrt(cc.g * double(h(i, j)));
          const double su = std::max(std::fabs(double(u(i, j))), std::fabs(double(u(i + 1, j))));
          const double sv = std::max(std::fabs(double(v(i, j))), std::fabs(double(v(i, j + 1))));
          const double c = cc.dt * ((su + wave) * cc.rdx + (sv + wave) * cc.rdy + cc.viscous);
          tc.check("courant", i, j, 0, got_c(i, j), c, c);
        }
      te.verdict();
      tz.verdict();
      tc.verdict();
    }
  }
}

// ---- euler2d: miniWeather's fourth-order finite volumes ---------------------

namespace {

// miniWeather's constants (miniWeather.cpp), restated rather than taken
// from the kernel header, so a changed digit there shows here.
constexpr double kC0 = 27.5629410929725921310572974482;     // Rd^gamma p0^(-Rd/cv)
constexpr double kGamma = 1.40027894002789400278940027894;  // cp / cv
constexpr double kGrav = 9.8;
constexpr index_t kNx = 6, kNz = 5, kHalo = 2;

template <class T>
using Vars = std::vector<HostField<T>>;  // rho', rho u, rho w, (rho theta)'

template <class T>
Vars<T> euler_vars() {
  return Vars<T>(4, HostField<T>(kNx, kNz, 1, kHalo, kHalo, 0));
}

template <class T>
struct BackgroundArrays {
  std::vector<T> dens_cell, dens_theta_cell;              // cells -2 .. nz+1 at element k + 2
  std::vector<T> dens_int, dens_theta_int, pressure_int;  // faces 0 .. nz
  index_t k0 = 0, nz = 0;
};

// A random background of nz global rows, rank row 0 at global row k0.
template <class T>
BackgroundArrays<T> random_background(index_t k0, index_t nz) {
  BackgroundArrays<T> b;
  b.k0 = k0;
  b.nz = nz;
  for (index_t k = 0; k < nz + 4; ++k) {
    b.dens_cell.push_back(static_cast<T>(1 + 0.1 * noise(21, k, 0)));
    b.dens_theta_cell.push_back(static_cast<T>(300 * (1 + 0.05 * noise(22, k, 0))));
  }
  for (index_t k = 0; k <= nz; ++k) {
    b.dens_int.push_back(static_cast<T>(1 + 0.1 * noise(23, k, 0)));
    b.dens_theta_int.push_back(static_cast<T>(300 * (1 + 0.05 * noise(24, k, 0))));
    b.pressure_int.push_back(static_cast<T>(kC0 * std::pow(300.0, kGamma) * (1 + 0.01 * noise(25, k, 0))));
  }
  return b;
}

// The background on a device, and the kernels' view of it.
template <class T>
struct DeviceBackground {
  DeviceArray<T> dc, dtc, di, dti, pi;
  index_t k0, nz;
  DeviceBackground(const Device& d, const BackgroundArrays<T>& b)
      : dc(d, b.dens_cell),
        dtc(d, b.dens_theta_cell),
        di(d, b.dens_int),
        dti(d, b.dens_theta_int),
        pi(d, b.pressure_int),
        k0(b.k0),
        nz(b.nz) {}
  ke::Background<T> view() const {
    ke::Background<T> v;
    v.dens_cell = dc.data();
    v.dens_theta_cell = dtc.data();
    v.dens_int = di.data();
    v.dens_theta_int = dti.data();
    v.pressure_int = pi.data();
    v.k0 = k0;
    v.nz = nz;
    return v;
  }
};

// The four variables as the model holds them: one field of 4 components.
template <class T>
struct DeviceVars {
  Buffer<T> buf;
  Box stored;
  DeviceVars(const Device& d, const Vars<T>& q)
      : buf(d, 4 * q[0].v.size()),
        stored{{{-q[0].h[0], -q[0].h[1], -q[0].h[2]}}, {{q[0].e[0], q[0].e[1], q[0].e[2]}}} {
    std::vector<T> all;
    for (const HostField<T>& x : q) all.insert(all.end(), x.v.begin(), x.v.end());
    buf.copy_from_host(all.data(), all.size());
  }
  ke::State<T> state() { return kernels::grid::field_view(buf.data(), stored, 4); }
  ke::ConstState<T> cstate() { return state(); }
  Vars<T> read() const {
    Vars<T> out = euler_vars<T>();
    std::vector<T> all(buf.size());
    buf.copy_to_host(all.data(), all.size());
    const std::size_t cells = out[0].v.size();
    for (std::size_t v = 0; v < 4; ++v)
      std::copy(all.begin() + static_cast<std::ptrdiff_t>(v * cells),
                all.begin() + static_cast<std::ptrdiff_t>((v + 1) * cells), out[v].v.begin());
    return out;
  }
};

// The value at the face between cells 1 and 2 of four cell averages s[0..3]
// (the fourth-order interpolation, exact for cubics' averages) and their
// third difference (miniWeather's compute_tendencies_x/_z; the value as
// (7 (s1 + s2) - (s0 + s3)) times 1/12, as euler2d.hpp writes it).
template <class R, class T>
void face_reference(const R s[4], R& val, R& d3) {
  val = (R(T(7)) * (s[1] + s[2]) - (s[0] + s[3])) * R(T(1. / 12));
  d3 = -s[0] + R(T(3)) * s[1] - R(T(3)) * s[2] + s[3];
}

// The four fluxes through x-face i of row j (axis 0) or z-face j of
// column i (axis 1): mass r u, momentum r u u + p, r u w, r u theta minus
// hv times the third difference; along z only the pressure perturbation,
// and w and the density's third difference zero on the bottom and top faces.
template <class R, class T>
std::vector<R> flux_reference(const Vars<T>& q, const BackgroundArrays<T>& bg, T hv, int axis, index_t i, index_t j) {
  R val[4], d3[4];
  for (std::size_t v = 0; v < 4; ++v) {
    R s[4];
    for (index_t m = 0; m < 4; ++m) s[m] = axis == 0 ? R(q[v](i - 2 + m, j)) : R(q[v](i, j - 2 + m));
    face_reference<R, T>(s, val[v], d3[v]);
  }
  const R rhv = R(hv);
  if (axis == 0) {
    const std::size_t c = static_cast<std::size_t>(bg.k0 + j + 2);
    const R r = val[0] + R(bg.dens_cell[c]);
    const R rr = R(T(1)) / r;
    const R u = val[1] * rr, w = val[2] * rr;
    const R t = (val[3] + R(bg.dens_theta_cell[c])) * rr;
    const R p = R(T(kC0)) * pw(r * t, R(T(kGamma)));
    return {r * u - rhv * d3[0], r * u * u + p - rhv * d3[1], r * u * w - rhv * d3[2], r * u * t - rhv * d3[3]};
  }
  const index_t kf = bg.k0 + j;
  const std::size_t f = static_cast<std::size_t>(kf);
  const R r = val[0] + R(bg.dens_int[f]);
  const R rr = R(T(1)) / r;
  const R u = val[1] * rr;
  R w = val[2] * rr;
  const R t = (val[3] + R(bg.dens_theta_int[f])) * rr;
  const R p = R(T(kC0)) * pw(r * t, R(T(kGamma))) - R(bg.pressure_int[f]);
  if (kf == 0 || kf == bg.nz) {
    w = R(T(0));
    d3[0] = R(T(0));
  }
  return {r * w - rhv * d3[0], r * w * u - rhv * d3[1], r * w * w + p - rhv * d3[2], r * w * t - rhv * d3[3]};
}

// init + dt (-(F(face + 1) - F(face)) / d + S), S = -rho' g for w along z,
// plus wforce three times (as the model adds it).
template <class R, class T>
R tendency_reference(const Vars<T>& init, const Vars<T>& forcing, const Vars<T>& flux, const HostField<T>* wforce,
                     int axis, T d, T dt, std::size_t v, index_t i, index_t j) {
  const index_t i1 = axis == 0 ? i + 1 : i, j1 = axis == 0 ? j : j + 1;
  R tend = (R(flux[v](i, j)) - R(flux[v](i1, j1))) * R(T(1) / d);
  if (v == 2 && axis == 1) tend = tend - R(forcing[0](i, j)) * R(T(kGrav));
  if (v == 2 && wforce != nullptr) {
    const R f = R((*wforce)(i, j));
    tend += f;
    tend += f;
    tend += f;
  }
  return R(init[v](i, j)) + R(dt) * tend;
}

template <class T>
Vars<T> random_state(std::uint64_t seed) {
  Vars<T> q = euler_vars<T>();
  const double scale[4] = {0.01, 10, 10, 3};
  for (std::size_t v = 0; v < 4; ++v)
    q[v].fill([&](index_t i, index_t j, index_t) { return scale[v] * noise(seed + v, i, j); });
  return q;
}

// Faces of the rank's box: x-faces 0 .. nx of every row, z-faces 0 .. nz of
// every column (the model's flux boxes, joined).
const Box kFacesX{{0, 0, 0}, {kNx + 1, kNz, 1}};
const Box kFacesZ{{0, 0, 0}, {kNx, kNz + 1, 1}};
const Box kOwned{{0, 0, 0}, {kNx, kNz, 1}};

const char* const kVarNames[4] = {"rho'", "rho u", "rho w", "(rho theta)'"};

}  // namespace

TEMPLATE_TEST_CASE("euler2d FluxX and FluxZ match miniWeather's face fluxes", "[stencil][euler2d]", double, float) {
  using T = TestType;
  const Vars<T> q = random_state<T>(31);
  const T hv = T(-0.7);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      // k0 = 0: this rank holds the bottom and top walls (faces 0 and 5);
      // k0 = 1 of 7 global rows: neither.
      for (const index_t k0 : {index_t{0}, index_t{1}}) {
        INFO("k0 = " << k0);
        const BackgroundArrays<T> bg = random_background<T>(k0, kNz + 2 * k0);
        const DeviceBackground<T> dbg(d, bg);
        DeviceVars<T> dq(d, q), fx(d, euler_vars<T>()), fz(d, euler_vars<T>());
        launch(d, kFacesX, ke::Flux<T, 0>{dq.cstate(), fx.state(), dbg.view(), hv});
        launch(d, kFacesZ, ke::Flux<T, 1>{dq.cstate(), fz.state(), dbg.view(), hv});
        const Vars<T> got_x = fx.read(), got_z = fz.read();
        // The longest path, the momentum flux: 6 roundings for the face
        // value (two sums, 7 times one, their difference, 1/12 and the
        // product), 1 for r, 1 for 1 / r, 2 for t, 1 for r t, pow (within 2
        // ulp on CUDA, counted 4), 1 for C0, 3 to combine, 1 for the third
        // difference's product, 1 for the subtraction (z): 22.
        Tally<T> t{d, 22};
        for (int axis = 0; axis < 2; ++axis) {
          const Box& faces = axis == 0 ? kFacesX : kFacesZ;
          const Vars<T>& got = axis == 0 ? got_x : got_z;
          for (index_t j = 0; j < faces.n[1]; ++j)
            for (index_t i = 0; i < faces.n[0]; ++i) {
              const std::vector<T> ref = flux_reference<T, T>(q, bg, hv, axis, i, j);
              const std::vector<Mag> mag = flux_reference<Mag, T>(q, bg, hv, axis, i, j);
              for (std::size_t v = 0; v < 4; ++v) t.check(kVarNames[v], i, j, axis, got[v](i, j), ref[v], mag[v].m);
            }
        }
        t.verdict();
      }
    }
  }
}

TEMPLATE_TEST_CASE("euler2d ApplyTendency is q + dt (flux divergence + sources)", "[stencil][euler2d]", double, float) {
  using T = TestType;
  const Vars<T> init = random_state<T>(41), forcing = random_state<T>(45), flux = random_state<T>(49);
  HostField<T> wforce(kNx, kNz, 1, kHalo, kHalo, 0);
  wforce.fill([](index_t i, index_t j, index_t) { return 0.01 * noise(53, i, j); });
  const T d_x = T(250), d_z = T(125), dt = T(0.7);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      // Along x without wforce, along z (buoyancy) with it.
      for (int axis = 0; axis < 2; ++axis) {
        INFO("axis " << axis);
        DeviceVars<T> di(d, init), df(d, forcing), dflux(d, flux), dout(d, euler_vars<T>());
        DeviceField<T> dw(d, wforce);
        const FieldView<const T> wf = axis == 1 ? FieldView<const T>(dw.view()) : FieldView<const T>{};
        const T step = axis == 0 ? d_x : d_z;
        launch(d, kOwned,
               ke::ApplyTendency<T>{di.cstate(), df.cstate(), dflux.cstate(), dout.state(), wf, axis, step, dt});
        const Vars<T> got = dout.read();
        const HostField<T>* w = axis == 1 ? &wforce : nullptr;
        // Subtraction, 1 / d and the product, buoyancy (2), wforce (3), dt,
        // sum: 10.
        Tally<T> t{d, 10};
        for (index_t j = 0; j < kNz; ++j)
          for (index_t i = 0; i < kNx; ++i)
            for (std::size_t v = 0; v < 4; ++v)
              t.check(kVarNames[v], i, j, 0, got[v](i, j),
                      tendency_reference<T, T>(init, forcing, flux, w, axis, step, dt, v, i, j),
                      tendency_reference<Mag, T>(init, forcing, flux, w, axis, step, dt, v, i, j).m);
        t.verdict();
      }
    }
  }
}

TEMPLATE_TEST_CASE("euler2d SweepStage is Flux then ApplyTendency in one launch", "[stencil][euler2d]", double,
                   float) {
  using T = TestType;
  // The fused stage (models/euler2d/kernels.hpp) against the two kernels
  // it replaces, on the same device: bitwise on the host (its row and
  // column loops, and the plain per-cell reference); elsewhere the fused
  // kernel may contract differently, so within 64 eps of the variable's
  // largest value.
  const Vars<T> init = random_state<T>(71), forcing = random_state<T>(73);
  HostField<T> wforce(kNx, kNz, 1, kHalo, kHalo, 0);
  wforce.fill([](index_t i, index_t j, index_t) { return 0.01 * noise(79, i, j); });
  const T hv = T(-0.7), dt = T(0.7);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      for (const index_t k0 : {index_t{0}, index_t{1}})
        for (int axis = 0; axis < 2; ++axis) {
          INFO("k0 = " << k0 << ", axis " << axis);
          const BackgroundArrays<T> bg = random_background<T>(k0, kNz + 2 * k0);
          const DeviceBackground<T> dbg(d, bg);
          DeviceVars<T> di(d, init), df(d, forcing), flux(d, euler_vars<T>()), two(d, euler_vars<T>()),
              one(d, euler_vars<T>()), ref(d, euler_vars<T>());
          DeviceField<T> dw(d, wforce);
          const FieldView<const T> wf = axis == 1 ? FieldView<const T>(dw.view()) : FieldView<const T>{};
          const T step = axis == 0 ? T(250) : T(125);
          const ke::ApplyTendency<T> apply{di.cstate(), df.cstate(), {}, two.state(), wf, axis, step, dt};
          ke::ApplyTendency<T> apply_two = apply;
          apply_two.flux = flux.cstate();
          ke::ApplyTendency<T> apply_one = apply, apply_ref = apply;
          apply_one.out = one.state();
          apply_ref.out = ref.state();
          if (axis == 0) {
            launch(d, kFacesX, ke::Flux<T, 0>{df.cstate(), flux.state(), dbg.view(), hv});
            launch(d, kOwned, apply_two);
            const euler2d::SweepStage<T, 0> fused{{{df.cstate(), {}, dbg.view(), hv}, apply_one}, kOwned};
            parallel_for(d, kOwned.size(), fused);
            if (d.backend == Backend::host)
              for (index_t idx = 0; idx < kOwned.size(); ++idx)
                euler2d::SweepStage<T, 0>{{{df.cstate(), {}, dbg.view(), hv}, apply_ref}, kOwned}(idx);
          } else {
            launch(d, kFacesZ, ke::Flux<T, 1>{df.cstate(), flux.state(), dbg.view(), hv});
            launch(d, kOwned, apply_two);
            const euler2d::SweepStage<T, 1> fused{{{df.cstate(), {}, dbg.view(), hv}, apply_one}, kOwned};
            parallel_for(d, kOwned.size(), fused);
            if (d.backend == Backend::host)
              for (index_t idx = 0; idx < kOwned.size(); ++idx)
                euler2d::SweepStage<T, 1>{{{df.cstate(), {}, dbg.view(), hv}, apply_ref}, kOwned}(idx);
          }
          const Vars<T> want = two.read(), got = one.read(), got_ref = ref.read();
          for (std::size_t v = 0; v < 4; ++v) {
            double scale = 0;
            for (index_t j = 0; j < kNz; ++j)
              for (index_t i = 0; i < kNx; ++i) scale = std::max(scale, std::fabs(double(want[v](i, j))));
            const double tol = d.backend == Backend::host ? 0.0 : 64 * std::numeric_limits<T>::epsilon() * scale;
            std::size_t bad = 0, bad_ref = 0;
            for (index_t j = 0; j < kNz; ++j)
              for (index_t i = 0; i < kNx; ++i) {
                bad += !(std::fabs(double(got[v](i, j)) - double(want[v](i, j))) <= tol);
                if (d.backend == Backend::host) bad_ref += got_ref[v](i, j) != want[v](i, j);
              }
            INFO(kVarNames[v]);
            CHECK(bad == 0);
            CHECK(bad_ref == 0);
          }
        }
    }
  }
}

TEMPLATE_TEST_CASE("euler2d's x sweep reads across a periodic seam as from wrapped halos", "[stencil][euler2d]", double,
                   float) {
  using T = TestType;
  // A rank that spans a periodic x alone: the x sweep with `seam` reads
  // the owned cells beyond either end, and must give the bits of the
  // sweep that reads x halos holding their copies. The seam's halos hold
  // NaN: a read of one shows in the result. kNx = 6 columns: faces 0, 1
  // and 5, 6 read across, 2 to 4 do not (the host's peeled faces and its
  // vectorised loop; on CUDA a warp's lanes of both kinds).
  Vars<T> wrapped = random_state<T>(83), stale = wrapped;
  for (std::size_t v = 0; v < 4; ++v)
    for (index_t j = -kHalo; j < kNz + kHalo; ++j)
      for (index_t h = 1; h <= kHalo; ++h) {
        wrapped[v](-h, j) = wrapped[v](kNx - h, j);
        wrapped[v](kNx - 1 + h, j) = wrapped[v](h - 1, j);
        stale[v](-h, j) = stale[v](kNx - 1 + h, j) = std::numeric_limits<T>::quiet_NaN();
      }
  const Vars<T> init = random_state<T>(89);
  const T hv = T(-0.7), dt = T(0.7);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      for (const index_t k0 : {index_t{0}, index_t{1}}) {
        INFO("k0 = " << k0);
        const BackgroundArrays<T> bg = random_background<T>(k0, kNz + 2 * k0);
        const DeviceBackground<T> dbg(d, bg);
        DeviceVars<T> di(d, init), dw(d, wrapped), ds(d, stale), want(d, euler_vars<T>()), got(d, euler_vars<T>());
        const ke::ApplyTendency<T> a_want{di.cstate(), dw.cstate(), {}, want.state(), {}, 0, T(250), dt};
        const ke::ApplyTendency<T> a_got{di.cstate(), ds.cstate(), {}, got.state(), {}, 0, T(250), dt};
        parallel_for(d, kOwned.size(), euler2d::SweepStage<T, 0>{{{dw.cstate(), {}, dbg.view(), hv}, a_want}, kOwned});
        parallel_for(d, kOwned.size(),
                     euler2d::SweepStage<T, 0>{{{ds.cstate(), {}, dbg.view(), hv}, a_got}, kOwned, kNx});
        const Vars<T> w = want.read(), g = got.read();
        for (std::size_t v = 0; v < 4; ++v) {
          std::size_t bad = 0;
          for (index_t j = 0; j < kNz; ++j)
            for (index_t i = 0; i < kNx; ++i) {
              const T a = w[v](i, j), b = g[v](i, j);
              bad += std::memcmp(&a, &b, sizeof(T)) != 0;
            }
          INFO(kVarNames[v]);
          CHECK(bad == 0);
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("euler2d: a state uniform along x has no x tendency", "[stencil][euler2d]", double, float) {
  using T = TestType;
  // Any state that depends on z only: every x-face of a row computes the
  // same bits, so the flux differences are exact zeros on every backend.
  Vars<T> q = euler_vars<T>();
  const double scale[4] = {0.01, 10, 10, 3};
  for (std::size_t v = 0; v < 4; ++v)
    q[v].fill([&](index_t, index_t j, index_t) { return scale[v] * noise(61 + v, 0, j); });
  const BackgroundArrays<T> bg = random_background<T>(0, kNz);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      const DeviceBackground<T> dbg(d, bg);
      DeviceVars<T> dq(d, q), flux(d, euler_vars<T>()), out(d, euler_vars<T>());
      launch(d, kFacesX, ke::Flux<T, 0>{dq.cstate(), flux.state(), dbg.view(), T(-0.7)});
      launch(d, kOwned,
             ke::ApplyTendency<T>{dq.cstate(), dq.cstate(), flux.cstate(), out.state(), {}, 0, T(250), T(0.7)});
      const Vars<T> got = out.read();
      std::size_t bad = 0;
      for (std::size_t v = 0; v < 4; ++v)
        for (index_t j = 0; j < kNz; ++j)
          for (index_t i = 0; i < kNx; ++i) bad += got[v](i, j) != q[v](i, j);
      CHECK(bad == 0);
    }
  }
}

TEMPLATE_TEST_CASE("euler2d: the hydrostatic background at rest stays at rest", "[stencil][euler2d]", double, float) {
  using T = TestType;
  // No perturbation over a background whose face densities are powers of
  // two (so r t = rho theta exactly) and whose face pressure is C0 (rho
  // theta)^gamma as the scheme computes it (miniWeather's hy_pressure_int):
  // the perturbation pressure is exactly 0 on the host. A device's pow may
  // differ by an ulp or two: p' within 8 eps p, its difference over a cell
  // 16 eps p / dz.
  const Vars<T> q = euler_vars<T>();
  BackgroundArrays<T> bg = random_background<T>(0, kNz);
  double p_max = 0;
  for (std::size_t k = 0; k < bg.dens_int.size(); ++k) {
    bg.dens_int[k] = static_cast<T>(std::ldexp(1.0, static_cast<int>(k % 3) - 1));
    bg.pressure_int[k] = T(kC0) * pw(bg.dens_theta_int[k], T(kGamma));
    p_max = std::max(p_max, static_cast<double>(bg.pressure_int[k]));
  }
  const T dz = T(125), dt = T(0.7);
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      const DeviceBackground<T> dbg(d, bg);
      DeviceVars<T> dq(d, q), flux(d, euler_vars<T>()), out(d, euler_vars<T>());
      launch(d, kFacesZ, ke::Flux<T, 1>{dq.cstate(), flux.state(), dbg.view(), T(-0.7)});
      launch(d, kOwned, ke::ApplyTendency<T>{dq.cstate(), dq.cstate(), flux.cstate(), out.state(), {}, 1, dz, dt});
      const Vars<T> got = out.read();
      const double w_tol =
          d.backend == Backend::host ? 0.0 : double(dt) * 16 * std::numeric_limits<T>::epsilon() * p_max / double(dz);
      std::size_t bad = 0;
      for (index_t j = 0; j < kNz; ++j)
        for (index_t i = 0; i < kNx; ++i) {
          bad += got[0](i, j) != T(0) || got[1](i, j) != T(0) || got[3](i, j) != T(0);
          bad += !(std::fabs(double(got[2](i, j))) <= w_tol);
        }
      CHECK(bad == 0);
    }
  }
}

TEMPLATE_TEST_CASE("euler2d: face values of a linear field are exact, its hyperviscosity zero", "[stencil][euler2d]",
                   double, float) {
  using T = TestType;
  // rho u = 3 + 2 i along x (small integers), nothing else, background
  // density 1: the mass flux at face i is the interpolated rho u, which is
  // the field's value 2 i + 2 there up to the face value's 5 roundings on
  // magnitudes summing to 16/12 of the largest |rho u| (gamma_5 < 6 eps);
  // its third difference is an exact 0, so the large hv adds nothing.
  Vars<T> q = euler_vars<T>();
  q[1].fill([](index_t i, index_t, index_t) { return 3.0 + 2.0 * static_cast<double>(i); });
  BackgroundArrays<T> bg = random_background<T>(0, kNz);
  for (T& x : bg.dens_cell) x = T(1);
  const double s_max = 3.0 + 2.0 * static_cast<double>(kNx + 1);
  const double tol = 6 * std::numeric_limits<T>::epsilon() * 16.0 / 12.0 * s_max;
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      const DeviceBackground<T> dbg(d, bg);
      DeviceVars<T> dq(d, q), flux(d, euler_vars<T>());
      launch(d, kFacesX, ke::Flux<T, 0>{dq.cstate(), flux.state(), dbg.view(), T(-1000)});
      const Vars<T> got = flux.read();
      std::size_t bad = 0;
      for (index_t j = 0; j < kNz; ++j)
        for (index_t i = 0; i <= kNx; ++i) bad += !(std::fabs(double(got[0](i, j)) - (2.0 * double(i) + 2.0)) <= tol);
      CHECK(bad == 0);
    }
  }
}

TEMPLATE_TEST_CASE("euler2d: the hyperviscous mass flux of a cubic is -6 hv, none through the walls",
                   "[stencil][euler2d]", double, float) {
  using T = TestType;
  // rho' = m^3 + 1000 along the sweep's axis m and no momentum: u = w = 0,
  // so the mass flux is the hyperviscous term alone, -hv times the third
  // difference of m^3, which is 6 (integers: exact in either precision),
  // one rounding of hv 6 on every backend; on the bottom and top faces the
  // scheme drops it (no mass crosses a wall).
  const T hv = T(-0.7);
  const T expect = T(0) - hv * T(6);
  const BackgroundArrays<T> bg = random_background<T>(0, kNz);
  for (int axis = 0; axis < 2; ++axis) {
    Vars<T> q = euler_vars<T>();
    q[0].fill([&](index_t i, index_t j, index_t) {
      const double m = static_cast<double>(axis == 0 ? i : j);
      return m * m * m + 1000;
    });
    for (const Device& d : test::devices()) {
      SECTION(test::describe(d, precision_of<T>()) + (axis == 0 ? " x" : " z")) {
        const DeviceBackground<T> dbg(d, bg);
        DeviceVars<T> dq(d, q), flux(d, euler_vars<T>());
        if (axis == 0) {
          launch(d, kFacesX, ke::Flux<T, 0>{dq.cstate(), flux.state(), dbg.view(), hv});
        } else {
          launch(d, kFacesZ, ke::Flux<T, 1>{dq.cstate(), flux.state(), dbg.view(), hv});
        }
        const Vars<T> got = flux.read();
        const Box& faces = axis == 0 ? kFacesX : kFacesZ;
        std::size_t bad = 0;
        for (index_t j = 0; j < faces.n[1]; ++j)
          for (index_t i = 0; i < faces.n[0]; ++i) {
            const bool wall = axis == 1 && (j == 0 || j == kNz);
            bad += got[0](i, j) != (wall ? T(0) : expect);
          }
        CHECK(bad == 0);
      }
    }
  }
}

TEMPLATE_TEST_CASE("euler2d WallHaloZ and InjectJet fill halos as miniWeather does", "[stencil][euler2d]", double,
                   float) {
  using T = TestType;
  const Vars<T> q = random_state<T>(81);
  const BackgroundArrays<T> bg = random_background<T>(0, kNz);
  const auto dens = [&](index_t j) { return bg.dens_cell[static_cast<std::size_t>(j + 2)]; };
  const auto dens_theta = [&](index_t j) { return bg.dens_theta_cell[static_cast<std::size_t>(j + 2)]; };
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      // 0, 1: the two rows beyond the bottom and the top wall (rho' and
      // (rho theta)' copied from the nearest owned row, rho w = 0, rho u
      // scaled by the background densities); 2: the jet in the left halo,
      // rho u = rho 50 m/s, (rho theta)' = rho 298 K - background rho theta.
      for (int which = 0; which < 3; ++which) {
        INFO((which == 0 ? "bottom wall" : which == 1 ? "top wall" : "jet"));
        const DeviceBackground<T> dbg(d, bg);
        DeviceVars<T> dq(d, q);
        const index_t src = which == 0 ? 0 : kNz - 1;
        const Box box = which == 2 ? Box{{-kHalo, 0, 0}, {kHalo, kNz, 1}}
                                   : Box{{-kHalo, which == 0 ? -kHalo : kNz, 0}, {kNx + 2 * kHalo, kHalo, 1}};
        if (which == 2) {
          launch(d, box, ke::InjectJet<T>{dq.state(), dbg.view()});
        } else {
          launch(d, box, ke::WallHaloZ<T>{dq.state(), dbg.view(), src});
        }
        const Vars<T> got = dq.read();
        // rho u of a wall: a division and a product; the jet: a sum, a
        // product and, for (rho theta)', a difference.
        Tally<T> t{d, 3};
        for (index_t j = -kHalo; j < kNz + kHalo; ++j)
          for (index_t i = -kHalo; i < kNx + kHalo; ++i) {
            const bool in_box =
                i >= box.lo[0] && i < box.lo[0] + box.n[0] && j >= box.lo[1] && j < box.lo[1] + box.n[1];
            T expect[4] = {q[0](i, j), q[1](i, j), q[2](i, j), q[3](i, j)};
            double mag[4] = {0, 0, 0, 0};
            if (in_box && which < 2) {
              expect[0] = q[0](i, src);
              expect[1] = q[1](i, src) / dens(src) * dens(j);
              mag[1] = std::fabs(double(expect[1]));
              expect[2] = T(0);
              expect[3] = q[3](i, src);
            } else if (in_box) {
              expect[1] = (q[0](i, j) + dens(j)) * T(50);
              expect[3] = (q[0](i, j) + dens(j)) * T(298) - dens_theta(j);
              mag[1] = (std::fabs(double(q[0](i, j))) + double(dens(j))) * 50;
              mag[3] = (std::fabs(double(q[0](i, j))) + double(dens(j))) * 298 + double(dens_theta(j));
            }
            for (std::size_t v = 0; v < 4; ++v) t.check(kVarNames[v], i, j, 0, got[v](i, j), expect[v], mag[v]);
          }
        t.verdict();
      }
    }
  }
}

namespace {

// miniWeather's reductions(): mass rho dx dz, energy (rho (u^2 + w^2) + rho
// cv T) dx dz with T = theta / (p0 / p)^(Rd / cp), and the Courant number
// dt max((|u| + c) / dx, (|w| + c) / dz), c = sqrt(gamma p / rho); in double.
constexpr double kP0 = 1.e5, kRd = 287., kCp = 1004., kCv = 717.;

template <class R, class T>
void primitives_reference(const Vars<T>& q, const BackgroundArrays<T>& bg, index_t i, index_t j, R& r, R& u, R& w,
                          R& th, R& p) {
  const std::size_t c = static_cast<std::size_t>(bg.k0 + j + 2);
  r = R(double(q[0](i, j))) + R(double(bg.dens_cell[c]));
  u = R(double(q[1](i, j))) / r;
  w = R(double(q[2](i, j))) / r;
  th = (R(double(q[3](i, j))) + R(double(bg.dens_theta_cell[c]))) / r;
  p = R(kC0) * pw(r * th, R(kGamma));
}

template <class R, class T>
R cell_energy_reference(const Vars<T>& q, const BackgroundArrays<T>& bg, double dx, double dz, index_t i, index_t j) {
  R r, u, w, th, p;
  primitives_reference(q, bg, i, j, r, u, w, th, p);
  const R t = th / pw(R(kP0) / p, R(kRd / kCp));
  const R ke = r * (u * u + w * w);
  const R ie = r * R(kCv) * t;
  return (ke + ie) * R(dx) * R(dz);
}

template <class R, class T>
R cell_courant_reference(const Vars<T>& q, const BackgroundArrays<T>& bg, double dx, double dz, double dt, index_t i,
                         index_t j) {
  R r, u, w, th, p;
  primitives_reference(q, bg, i, j, r, u, w, th, p);
  using std::fabs;   // for R = double; Mag's overloads otherwise hide them
  using std::sqrt;
  const R sound = sqrt(R(kGamma) * p / r);
  const R cx = (fabs(u) + sound) / R(dx), cz = (fabs(w) + sound) / R(dz);
  return R(dt) * (cx > cz ? cx : cz);
}

}  // namespace

TEMPLATE_TEST_CASE("euler2d diagnostics per cell: mass, energy, Courant number", "[stencil][euler2d]", double, float) {
  using T = TestType;
  const Vars<T> q = random_state<T>(111);
  const BackgroundArrays<T> bg = random_background<T>(0, kNz);
  const double dx = 250, dz = 125, dt = 0.7;
  for (const Device& d : test::devices()) {
    SECTION(test::describe(d, precision_of<T>())) {
      const DeviceBackground<T> dbg(d, bg);
      DeviceVars<T> dq(d, q);
      const HostField<double> shape(kNx, kNz, 1, kHalo, kHalo, 0);
      DeviceField<double> mass(d, shape), energy(d, shape), courant(d, shape);
      const ke::CellTotals<T> totals{dq.cstate(), dbg.view(), dx, dz};
      launch_cells(d, kOwned, ke::CellMass<T>{totals}, mass.view());
      launch_cells(d, kOwned, ke::CellEnergy<T>{totals}, energy.view());
      launch_cells(d, kOwned, ke::CellCourant<T>{totals, dt}, courant.view());
      const HostField<double> got_m = mass.read(shape), got_e = energy.read(shape), got_c = courant.read(shape);
      // Roundings (pow counted as 4): mass 3; the primitives 11, the
      // temperature 6, the energy 8 more: 25; the Courant number 16.
      Tally<double> tm{d, 3}, te{d, 25}, tc{d, 16};
      for (index_t j = 0; j < kNz; ++j)
        for (index_t i = 0; i < kNx; ++i) {
          const Mag r = Mag(double(q[0](i, j))) + Mag(double(bg.dens_cell[static_cast<std::size_t>(j + 2)]));
          tm.check("mass", i, j, 0, got_m(i, j),
                   (double(q[0](i, j)) + double(bg.dens_cell[static_cast<std::size_t>(j + 2)])) * dx * dz,
                   (r * Mag(dx) * Mag(dz)).m);
          te.check("energy", i, j, 0, got_e(i, j), cell_energy_reference<double>(q, bg, dx, dz, i, j),
                   cell_energy_reference<Mag>(q, bg, dx, dz, i, j).m);
          tc.check("courant", i, j, 0, got_c(i, j), cell_courant_reference<double>(q, bg, dx, dz, dt, i, j),
                   cell_courant_reference<Mag>(q, bg, dx, dz, dt, i, j).m);
        }
      tm.verdict();
      te.verdict();
      tc.verdict();
    }
  }
}

// ---- the box launch ----------------------------------------------------------

TEST_CASE("for_box visits each cell of a box exactly once on every backend", "[stencil][grid]") {
  // Storage 9 x 8 x 8 viewed with cell (0, 0, 0) at storage (2, 2, 2), so
  // boxes may reach into halos (negative indices). Even and odd plane
  // counts (the host pairs planes), one plane, one row per plane, one-cell
  // rows, one cell, the whole storage, and empty boxes along each axis.
  const index_t e[3] = {9, 8, 8}, off = 2;
  const std::vector<Box> boxes = {Box{{-2, -2, -2}, {9, 8, 8}}, Box{{0, 0, 0}, {5, 4, 4}},   Box{{-1, 0, 1}, {6, 5, 3}},
                                  Box{{2, -2, 0}, {3, 8, 1}},   Box{{-2, 3, -2}, {9, 1, 5}}, Box{{1, 1, 1}, {1, 4, 5}},
                                  Box{{4, 1, 2}, {1, 1, 1}},    Box{{1, 1, 1}, {0, 6, 4}},   Box{{1, 1, 1}, {3, 0, 4}},
                                  Box{{1, 1, 1}, {3, 4, 0}},    Box{{0, 0, 0}, {0, 0, 0}}};
  const std::vector<int> zeros(static_cast<std::size_t>(e[0] * e[1] * e[2]), 0);
  for (const Device& d : test::devices()) {
    SECTION(std::string(to_string(d.backend))) {
      for (const Box& box : boxes) {
        Buffer<int> hits(d, zeros.size());
        hits.copy_from_host(zeros.data(), zeros.size());
        const FieldView<int> view = kernels::grid::field_view(hits.data(), Box{{{-off, -off, -off}}, {{e[0], e[1], e[2]}}});
        grid::for_box(d, box, test::CountCalls{view});
        std::vector<int> got(zeros.size());
        hits.copy_to_host(got.data(), got.size());
        std::size_t bad = 0;
        for (index_t k = -off; k < e[2] - off; ++k)
          for (index_t j = -off; j < e[1] - off; ++j)
            for (index_t i = -off; i < e[0] - off; ++i) {
              const bool inside = i >= box.lo[0] && i < box.lo[0] + box.n[0] && j >= box.lo[1] &&
                                  j < box.lo[1] + box.n[1] && k >= box.lo[2] && k < box.lo[2] + box.n[2];
              const int n = got[static_cast<std::size_t>(((k + off) * e[1] + j + off) * e[0] + i + off)];
              bad += n != (inside ? 1 : 0);
            }
        INFO("box lo (" << box.lo[0] << ", " << box.lo[1] << ", " << box.lo[2] << "), n (" << box.n[0] << ", "
                        << box.n[1] << ", " << box.n[2] << ")");
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("a CUDA box launch's threads cover each cell once, several rows a thread", "[stencil][grid]") {
  // Every thread of the launch as the CUDA kernel runs it
  // (box_thread_cells), walked here: rows a thread from 1 to 8 (a tail of
  // fewer rows where n[1] is no multiple), and grids cut below the box's
  // extent in y and z (a launch past 65,535 blocks loops over the rest).
  using kernels::grid::BoxLaunchShape;
  const std::vector<Box> boxes = {Box{{-2, -1, 3}, {37, 29, 5}}, Box{{0, 0, 0}, {300, 17, 2}},
                                  Box{{1, 2, 3}, {2, 64, 3}}, Box{{0, 0, 0}, {1, 1, 1}}};
  for (const Box& box : boxes) {
    for (int rows : {1, 2, 3, 8}) {
      const BoxLaunchShape shape(box, rows);
      for (std::int64_t gy : {shape.grid[1], std::int64_t{1}, std::int64_t{2}}) {
        for (std::int64_t gz : {shape.grid[2], std::int64_t{1}, std::int64_t{2}}) {
          std::vector<int> hits(static_cast<std::size_t>(box.size()), 0);
          std::int64_t outside = 0;
          const std::int64_t y_threads = gy * shape.block[1];
          for (std::int64_t bz = 0; bz < gz; ++bz)
            for (std::int64_t ty = 0; ty < y_threads; ++ty)
              for (std::int64_t tx = 0; tx < shape.grid[0] * shape.block[0]; ++tx)
                kernels::grid::box_thread_cells(box, rows, tx, ty, y_threads, bz, gz,
                                                [&](index_t i, index_t j, index_t k) {
                                                  if (!box.contains(i, j, k)) {
                                                    ++outside;
                                                  } else {
                                                    ++hits[static_cast<std::size_t>(box.linear(i, j, k))];
                                                  }
                                                });
          INFO("box n (" << box.n[0] << ", " << box.n[1] << ", " << box.n[2] << "), " << rows << " rows a thread, grid y "
                         << gy << ", z " << gz);
          CHECK(outside == 0);
          CHECK(std::count(hits.begin(), hits.end(), 1) == box.size());
        }
      }
    }
  }
  // The launch's own choice: 8 rows a thread for a box of 2^23 cells or
  // more, fewer below, down to a cell a thread under 2^21.
  CHECK(BoxLaunchShape(Box{{0, 0, 0}, {384, 384, 384}}).rows == 8);
  CHECK(BoxLaunchShape(Box{{0, 0, 0}, {4000, 2000, 1}}).rows == 4);
  CHECK(BoxLaunchShape(Box{{0, 0, 0}, {64, 64, 64}}).rows == 1);
  CHECK(BoxLaunchShape(Box{{0, 0, 0}, {384, 384, 384}}).threads() == 384 * (384 / 8) * 384);
}

TEST_CASE("for_box covers a box large enough for several rows a CUDA thread once", "[stencil][grid]") {
  // 260 x 255 x 127 cells: 8 rows a thread on CUDA, blocks of 32 x 8
  // threads, a tail of rows in y and of threads in x.
  const Box box{{0, 0, 0}, {260, 255, 127}};
  REQUIRE(kernels::grid::BoxLaunchShape(box).rows == 8);
  const std::vector<int> zeros(static_cast<std::size_t>(box.size()), 0);
  for (const Device& d : test::devices()) {
    SECTION(std::string(to_string(d.backend))) {
      Buffer<int> hits(d, zeros.size());
      hits.copy_from_host(zeros.data(), zeros.size());
      grid::for_box(d, box, test::CountCalls{kernels::grid::field_view(hits.data(), box)});
      std::vector<int> got(zeros.size());
      hits.copy_to_host(got.data(), got.size());
      CHECK(std::count(got.begin(), got.end(), 1) == box.size());
    }
  }
}

TEST_CASE("for_boxes visits each cell of each box of a list exactly once on every backend", "[stencil][grid]") {
  // Disjoint boxes of the same storage as above, with halos (negative
  // indices), one-cell rows, a single cell and empty boxes (left out of
  // the list), in two components; up to kMaxBoxes boxes in one launch.
  const index_t e[3] = {9, 8, 8}, off = 2;
  const std::vector<std::vector<Box>> lists = {
      {Box{{-2, -2, -2}, {9, 8, 8}}},
      {Box{{-2, -2, -2}, {2, 8, 8}}, Box{{5, -2, -2}, {2, 8, 8}}, Box{{0, -2, -2}, {5, 2, 8}},
       Box{{0, 4, -2}, {5, 2, 1}}, Box{{1, 1, 1}, {0, 3, 3}}, Box{{2, 2, 2}, {1, 1, 1}}},
      {Box{{0, 0, 0}, {0, 0, 0}}},
  };
  std::vector<Box> many;   // 26 boxes of one cell each along a row of planes
  for (int b = 0; b < kernels::grid::kMaxBoxes; ++b) many.push_back(Box{{b % 9 - 2, b / 9, 0}, {1, 1, 1}});
  std::vector<std::vector<Box>> all = lists;
  all.push_back(many);
  constexpr int kComps = 2;
  const std::size_t cells = static_cast<std::size_t>(e[0] * e[1] * e[2]);
  const std::vector<int> zeros(kComps * cells, 0);
  for (const Device& d : test::devices()) {
    SECTION(std::string(to_string(d.backend))) {
      for (const std::vector<Box>& boxes : all) {
        kernels::grid::BoxList list;
        std::vector<int> weight_of(cells, 0);
        for (const Box& box : boxes) {
          list.add(box);
          if (box.size() <= 0) continue;
          for (index_t k = box.lo[2]; k < box.lo[2] + box.n[2]; ++k)
            for (index_t j = box.lo[1]; j < box.lo[1] + box.n[1]; ++j)
              for (index_t i = box.lo[0]; i < box.lo[0] + box.n[0]; ++i)
                weight_of[static_cast<std::size_t>(((k + off) * e[1] + j + off) * e[0] + i + off)] = list.count;
        }
        Buffer<int> hits(d, zeros.size());
        hits.copy_from_host(zeros.data(), zeros.size());
        const FieldView<int> view =
            kernels::grid::field_view(hits.data(), Box{{{-off, -off, -off}}, {{e[0], e[1], e[2]}}}, kComps);
        grid::for_boxes(d, list, test::CountListCalls{view}, kComps);
        std::vector<int> got(zeros.size());
        hits.copy_to_host(got.data(), got.size());
        std::size_t bad = 0;
        for (int c = 0; c < kComps; ++c)
          for (std::size_t x = 0; x < cells; ++x) bad += got[static_cast<std::size_t>(c) * cells + x] != weight_of[x];
        INFO(boxes.size() << " boxes, " << list.count << " listed");
        CHECK(bad == 0);
      }
    }
  }
}
