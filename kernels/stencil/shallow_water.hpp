// The 2-D rotating shallow-water equations in vector-invariant form,
//
//   dh/dt = -div(h u)
//   du/dt = +q (h v) - dB/dx + (nu / h) div(h grad u)
//   dv/dt = -q (h u) - dB/dy + (nu / h) div(h grad v)
//   q = (f + dv/dx - du/dy) / h,   B = g h + (u^2 + v^2) / 2,   f = f0 + beta (y - y_ref),
//
// on an Arakawa C-grid with Sadourny's (1975) energy-conserving scheme
// (J. Atmos. Sci. 32, 680; the "EN" scheme of Arakawa & Lamb 1981, eq. 3.5):
// mass fluxes U = h^x u, V = h^y v, q at cell corners with h^xy, and the
// Coriolis/vorticity terms as the average of q times the flux averaged to
// the corner, mean(q V^x)^y and mean(q U^y)^x, so that they do no work.
// The semi-discrete scheme then conserves mass exactly (the fluxes
// telescope) and total energy sum(h K + g h^2 / 2) (the vorticity terms
// cancel pairwise, B and the continuity equation exchange kinetic and
// potential energy exactly).
//
// Staggering, local indices (i, j) of a rank (kernels/grid/field_view.hpp):
//   h(i, j)  cell centre   (x_i + dx/2, y_j + dy/2)
//   u(i, j)  west face     (x_i,        y_j + dy/2)
//   v(i, j)  south face    (x_i + dx/2, y_j       )
//   q(i, j)  SW corner     (x_i,        y_j       )
// with x_i = origin + (start + i) dx. A wall on the low side of x is the
// face u(0, .), owned and kept exactly 0; on the high side it is u(n, .),
// the first halo face, filled with 0 (NormalVelocityWall). Every stencil
// below reads at most one cell beyond the point it updates: halo width 1.
//
// The viscous term (nu / h) div(h grad u) is the thickness-weighted
// Laplacian: with continuity it makes the momentum equation conservative,
// d(hu)/dt + div(h u u) + grad(g h^2 / 2) = div(nu h grad u), so shocks
// obey the mass and momentum jump conditions (Stoker's dam break), and it
// only removes energy: sum(h u . (1/h) div(nu h grad u)) = -sum(nu h |grad u|^2).
#pragma once

#include <cmath>

#include "kernels/grid/field_view.hpp"

namespace strata::kernels::stencil {

using grid::FieldView;
using grid::index_t;

// f at the corner rows (the y of v faces): f0 + beta (y - y_ref), from the
// global row index so every decomposition computes the same bits.
struct CoriolisRows {
  double f0 = 0, beta = 0;
  double y0 = 0;  // y of global corner row 0 minus y_ref
  double dy = 1;
  index_t start = 0;  // global row of local row 0
  STRATA_HD double at(index_t j) const { return f0 + beta * (y0 + static_cast<double>(start + j) * dy); }
};

// The right-hand side of the equations at one point, from fields whose
// halos are current (exchanged and boundary-filled).
template <class T>
struct ShallowWaterRhs {
  FieldView<const T> h, u, v;
  T g;
  T rdx, rdy;  // 1 / dx, 1 / dy
  T nu;        // viscosity, m2 s-1
  CoriolisRows f;

  // Thickness at u points, v points and corners.
  STRATA_HD STRATA_FORCEINLINE T hu(index_t i, index_t j) const { return T(0.5) * (h(i - 1, j) + h(i, j)); }
  STRATA_HD STRATA_FORCEINLINE T hv(index_t i, index_t j) const { return T(0.5) * (h(i, j - 1) + h(i, j)); }
  STRATA_HD STRATA_FORCEINLINE T hq(index_t i, index_t j) const {
    return T(0.25) * ((h(i - 1, j - 1) + h(i, j - 1)) + (h(i - 1, j) + h(i, j)));
  }
  // Mass fluxes. Each is one expression of its own point, so the flux a
  // cell sends and the one its neighbour receives are the same bits and
  // the mass sum telescopes.
  STRATA_HD STRATA_FORCEINLINE T U(index_t i, index_t j) const { return hu(i, j) * u(i, j); }
  STRATA_HD STRATA_FORCEINLINE T V(index_t i, index_t j) const { return hv(i, j) * v(i, j); }
  // Relative vorticity and potential vorticity at corner (i, j).
  STRATA_HD STRATA_FORCEINLINE T zeta(index_t i, index_t j) const {
    return (v(i, j) - v(i - 1, j)) * rdx - (u(i, j) - u(i, j - 1)) * rdy;
  }
  STRATA_HD STRATA_FORCEINLINE T q(index_t i, index_t j) const {
    return (static_cast<T>(f.at(j)) + zeta(i, j)) / hq(i, j);
  }
  // q / 4 with a multiplication fewer: hq is a sum of four h times 1/4, so
  // dividing by the sum gives q's bits over 4 exactly (a power of two
  // scales a correctly rounded quotient exactly, short of subnormals).
  // The momentum tendencies multiply their q terms by 1/4: with q / 4
  // they take the same bits without that multiplication.
  STRATA_HD STRATA_FORCEINLINE T q_quarter(index_t i, index_t j) const {
    return (static_cast<T>(f.at(j)) + zeta(i, j)) / ((h(i - 1, j - 1) + h(i, j - 1)) + (h(i - 1, j) + h(i, j)));
  }
  // Kinetic energy per unit mass at a cell centre: (mean_x u^2 + mean_y v^2) / 2.
  STRATA_HD STRATA_FORCEINLINE T K(index_t i, index_t j) const {
    const T u0 = u(i, j), u1 = u(i + 1, j), v0 = v(i, j), v1 = v(i, j + 1);
    return T(0.25) * ((u0 * u0 + u1 * u1) + (v0 * v0 + v1 * v1));
  }
  STRATA_HD STRATA_FORCEINLINE T B(index_t i, index_t j) const { return g * h(i, j) + K(i, j); }

  // The tendencies at one point. The forms taking the corner and centre
  // values a cell shares between them (q at its SW, NW and SE corners, B at
  // its centre, the fluxes through its own faces) are the stage's: each is
  // then computed once a cell, and the values are those of the forms that
  // compute their own, bit for bit.
  STRATA_HD STRATA_FORCEINLINE T dh(index_t i, index_t j) const { return dh(U(i, j), U(i + 1, j), V(i, j), V(i, j + 1)); }
  STRATA_HD STRATA_FORCEINLINE T dh(T u_w, T u_e, T v_s, T v_n) const {
    return -((u_e - u_w) * rdx + (v_n - v_s) * rdy);
  }
  STRATA_HD STRATA_FORCEINLINE T du(index_t i, index_t j) const {
    return du(i, j, q_quarter(i, j), q_quarter(i, j + 1), B(i, j), V(i, j), V(i, j + 1));
  }
  // With the quarters of q: q4_sw = q_quarter(i, j), q4_nw = q_quarter(i, j
  // + 1); b = B(i, j), v_s = V(i, j), v_n = V(i, j + 1). The value is
  // 0.25 (q(i, j) (V(i - 1, j) + V(i, j)) + q(i, j + 1) (...)) - (B(i, j) -
  // B(i - 1, j)) / dx.
  STRATA_HD STRATA_FORCEINLINE T du(index_t i, index_t j, T q4_sw, T q4_nw, T b, T v_s, T v_n) const {
    return du(i, j, q4_sw, q4_nw, b, v_s, v_n, V(i - 1, j), V(i - 1, j + 1));
  }
  // And the west neighbour's fluxes v_sw = V(i - 1, j), v_nw = V(i - 1, j
  // + 1) and its b_w = B(i - 1, j) (a thread's columns and rows share
  // them: ShallowWaterStage::columns).
  STRATA_HD STRATA_FORCEINLINE T du(index_t i, index_t j, T q4_sw, T q4_nw, T b, T v_s, T v_n, T v_sw, T v_nw) const {
    return du(i, j, q4_sw, q4_nw, b, v_s, v_n, v_sw, v_nw, B(i - 1, j));
  }
  STRATA_HD STRATA_FORCEINLINE T du(index_t i, index_t j, T q4_sw, T q4_nw, T b, T v_s, T v_n, T v_sw, T v_nw,
                                    T b_w) const {
    T r = (q4_sw * (v_sw + v_s) + q4_nw * (v_nw + v_n)) - (b - b_w) * rdx;
    if (nu != T(0)) {
      const T c = u(i, j);
      const T fx = h(i, j) * (u(i + 1, j) - c) - h(i - 1, j) * (c - u(i - 1, j));
      const T fy = hq(i, j + 1) * (u(i, j + 1) - c) - hq(i, j) * (c - u(i, j - 1));
      r += nu * (fx * rdx * rdx + fy * rdy * rdy) / hu(i, j);
    }
    return r;
  }
  STRATA_HD STRATA_FORCEINLINE T dv(index_t i, index_t j) const {
    return dv(i, j, q_quarter(i, j), q_quarter(i + 1, j), B(i, j), U(i, j), U(i + 1, j));
  }
  // q4_sw = q_quarter(i, j), q4_se = q_quarter(i + 1, j), b = B(i, j), u_w =
  // U(i, j), u_e = U(i + 1, j): -0.25 (q(i, j) (U(i, j - 1) + U(i, j)) +
  // q(i + 1, j) (...)) - (B(i, j) - B(i, j - 1)) / dy.
  STRATA_HD STRATA_FORCEINLINE T dv(index_t i, index_t j, T q4_sw, T q4_se, T b, T u_w, T u_e) const {
    return dv(i, j, q4_sw, q4_se, b, u_w, u_e, B(i, j - 1), U(i, j - 1), U(i + 1, j - 1));
  }
  // And the south neighbour's b_s = B(i, j - 1), u_sw = U(i, j - 1), u_se
  // = U(i + 1, j - 1): the row below's b, u_w and u_e.
  STRATA_HD STRATA_FORCEINLINE T dv(index_t i, index_t j, T q4_sw, T q4_se, T b, T u_w, T u_e, T b_s, T u_sw,
                                    T u_se) const {
    T r = -(q4_sw * (u_sw + u_w) + q4_se * (u_se + u_e)) - (b - b_s) * rdy;
    if (nu != T(0)) {
      const T c = v(i, j);
      const T fx = hq(i + 1, j) * (v(i + 1, j) - c) - hq(i, j) * (c - v(i - 1, j));
      const T fy = h(i, j) * (v(i, j + 1) - c) - h(i, j - 1) * (c - v(i, j - 1));
      r += nu * (fx * rdx * rdx + fy * rdy * rdy) / hv(i, j);
    }
    return r;
  }
};

// One stage of the SSP-RK3 of Shu & Osher (1988), written as
//   out = s0 + b ((s - s0) + dt L(s)),   b = 1, 1/4, 2/3
// (= a s0 + b (s + dt L(s)) with a = 1 - b): the weights sum to 1 exactly
// even where b = 2/3 is rounded, so the stages add no systematic mass
// change (a s0 + b s with rounded 1/3 and 2/3 would, some 1e-16 a step).
// L reads the stage input `rhs` (halos current); s0, the state at the
// start of the step, is read only at the point written, so `out` may be s0
// itself. A wall face (u at i = 0 on the low x wall, v at j = 0 on the low
// y wall) stays 0.
template <class T>
struct ShallowWaterStage {
  ShallowWaterRhs<T> rhs;
  FieldView<const T> h0, u0, v0;
  FieldView<T> h, u, v;
  T b, dt;
  bool wall_x_low, wall_y_low;  // this rank holds the low wall of x / y
  // A periodic axis this rank spans alone: its owned cells along it (x, y),
  // whose images the output's halos hold (wrap_cell); 0: none.
  index_t wrap[2] = {0, 0};

  // A cell of the box launch (a thread a cell, or its rows without
  // carrying: the tests' and the reference launch; the model launches
  // ShallowWaterColumns): h, u, v of the stage input and of s0 read, h, u,
  // v written; without viscosity (its branch adds two divisions), three
  // corners' q / 4 (a division each) and 97 other FP instructions (nvcc
  // 13's PTX for sm_90, fp64; fp32 has 93 and the Coriolis rows' 4 FP64
  // FMAs).
  static constexpr Work cell_work() { return item_work<T>(9, 3 * OpCost<T>::div + 97); }

  STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t) const {
    // What du, dv and dh share, once: three corners' q / 4 (a division
    // each), the centre's B and the fluxes through the cell's four faces.
    const T q_sw = rhs.q_quarter(i, j), q_nw = rhs.q_quarter(i, j + 1), q_se = rhs.q_quarter(i + 1, j);
    const T bernoulli = rhs.B(i, j);
    const T u_w = rhs.U(i, j), u_e = rhs.U(i + 1, j), v_s = rhs.V(i, j), v_n = rhs.V(i, j + 1);
    const T dh = rhs.dh(u_w, u_e, v_s, v_n);
    const T du = rhs.du(i, j, q_sw, q_nw, bernoulli, v_s, v_n);
    const T dv = rhs.dv(i, j, q_sw, q_se, bernoulli, u_w, u_e);
    update(i, j, dh, du, dv);
  }

  // K neighbouring columns i0 .. i0 + K - 1 at once (those left of i_end:
  // a box's last thread may hold fewer), rows j_begin .. j_end - 1 in
  // order: the CUDA launch (models/shallow_water/kernels.hpp:
  // ShallowWaterColumns). A row computes once what its K cells share with
  // each other and with the row above: q / 4 at the K + 1 corners above
  // them, B at the K + 1 centres from i0 - 1 on, U through the K + 1 west
  // faces from i0 on, V through the K + 1 north faces from i0 - 1 on; it
  // carries to the next row the corners' q / 4, its cells' B and the
  // faces' U and V (the row below the first computes them). So a row of K
  // cells takes K + 1 divisions, where a cell alone takes 3. The same
  // expressions as operator()'s, so the same bits. A corner or a face
  // beyond i_end (a partial thread's) is taken at i_end's, its value
  // unused, so nothing is read beyond the halo. A cell at the end of a
  // wrapped axis also writes its halo images (wrap_cell).
  template <int K>
  STRATA_HD STRATA_FORCEINLINE void columns(index_t i0, index_t i_end, index_t j_begin, index_t j_end) const {
    index_t cq[K + 1], cb[K + 1];  // the columns of corners and west faces, of centres and north faces
    for (int k = 0; k <= K; ++k) {
      cq[k] = i0 + k < i_end ? i0 + k : i_end;
      cb[k] = i0 + k - 1 < i_end - 1 ? i0 + k - 1 : i_end - 1;
    }
    // From the row below: q / 4 at the corners of row j, B of the cells of
    // row j - 1, U of row j - 1's west faces, V of row j's south faces.
    T qs[K + 1], bs[K], us[K + 1], vs[K + 1];
    for (int k = 0; k <= K; ++k) {
      qs[k] = rhs.q_quarter(cq[k], j_begin);
      us[k] = rhs.U(cq[k], j_begin - 1);
      vs[k] = rhs.V(cb[k], j_begin);
      if (k < K) bs[k] = rhs.B(cb[k + 1], j_begin - 1);
    }
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (index_t j = j_begin; j < j_end; ++j) {
      T qn[K + 1], b[K + 1], u[K + 1], vn[K + 1];
      for (int k = 0; k <= K; ++k) {
        qn[k] = rhs.q_quarter(cq[k], j + 1);
        b[k] = rhs.B(cb[k], j);
        u[k] = rhs.U(cq[k], j);
        vn[k] = rhs.V(cb[k], j + 1);
      }
      for (int k = 0; k < K; ++k) {
        const index_t i = i0 + k;
        if (i >= i_end) break;
        const T dh = rhs.dh(u[k], u[k + 1], vs[k + 1], vn[k + 1]);
        const T du = rhs.du(i, j, qs[k], qn[k], b[k + 1], vs[k + 1], vn[k + 1], vs[k], vn[k], b[k]);
        const T dv = rhs.dv(i, j, qs[k], qs[k + 1], b[k + 1], u[k], u[k + 1], bs[k], us[k], us[k + 1]);
        update(i, j, dh, du, dv);
        wrap_cell(i, j);
      }
      for (int k = 0; k <= K; ++k) {
        qs[k] = qn[k];
        us[k] = u[k];
        vs[k] = vn[k];
        if (k < K) bs[k] = b[k + 1];
      }
    }
  }

  // Whether the nine fields have one row stride (one grid's fields do), and
  // the stage with that one stride in each view: the same cells, but a
  // kernel then computes a cell's offset once for all nine fields instead
  // of once for each (ShallowWaterColumns' CUDA launch).
  bool one_row_stride() const {
    const index_t sy = rhs.h.sy;
    return rhs.u.sy == sy && rhs.v.sy == sy && h0.sy == sy && u0.sy == sy && v0.sy == sy && h.sy == sy && u.sy == sy &&
           v.sy == sy;
  }
  STRATA_HD STRATA_FORCEINLINE ShallowWaterStage with_one_row_stride() const {
    ShallowWaterStage s = *this;
    const index_t sy = rhs.h.sy;
    s.rhs.u.sy = s.rhs.v.sy = s.h0.sy = s.u0.sy = s.v0.sy = s.h.sy = s.u.sy = s.v.sy = sy;
    return s;
  }

  // Along a periodic axis this rank spans alone, the output's halo cells
  // that are images of cell (i, j) (halo column n0 of column 0 and -1 of
  // n0 - 1; rows likewise; a corner of both) take its values: the next
  // stage then reads its input's halos without a wrap of its own. A cell
  // at no such end writes nothing.
  STRATA_HD STRATA_FORCEINLINE void wrap_cell(index_t i, index_t j) const {
    const bool x_low = wrap[0] > 0 && i == 0, x_high = wrap[0] > 0 && i == wrap[0] - 1;
    const bool y_low = wrap[1] > 0 && j == 0, y_high = wrap[1] > 0 && j == wrap[1] - 1;
    if (!(x_low || x_high || y_low || y_high)) return;
    const T hc = h(i, j), uc = u(i, j), vc = v(i, j);
    const index_t xs[3] = {i, wrap[0], -1}, ys[3] = {j, wrap[1], -1};
    const bool x_on[3] = {true, x_low, x_high}, y_on[3] = {true, y_low, y_high};
    for (int a = 0; a < 3; ++a)
      for (int c = 0; c < 3; ++c)
        if ((a > 0 || c > 0) && x_on[a] && y_on[c]) {
          h(xs[a], ys[c]) = hc;
          u(xs[a], ys[c]) = uc;
          v(xs[a], ys[c]) = vc;
        }
  }

  // The stage's update of cell (i, j) from its tendencies.
  STRATA_HD STRATA_FORCEINLINE void update(index_t i, index_t j, T dh, T du, T dv) const {
    const T h_start = h0(i, j), u_start = u0(i, j), v_start = v0(i, j);
    const T hn = h_start + b * ((rhs.h(i, j) - h_start) + dt * dh);
    const T un = u_start + b * ((rhs.u(i, j) - u_start) + dt * du);
    const T vn = v_start + b * ((rhs.v(i, j) - v_start) + dt * dv);
    h(i, j) = hn;
    u(i, j) = wall_x_low && i == 0 ? T(0) : un;
    v(i, j) = wall_y_low && j == 0 ? T(0) : vn;
  }
};

// The halo of a velocity component normal to a wall, over a box of halo
// cells on one side of `axis`: the wall is face 0 on the low side and face
// n (the first halo face) on the high side; the velocity is 0 on the wall
// and odd about it (free slip: the tangential components and h are even,
// grid::fill_side with sign +1).
template <class T>
struct NormalVelocityWall {
  FieldView<T> f;
  int axis;         // 0 x (u), 1 y (v)
  index_t n_owned;  // owned cells along `axis`
  int side;         // 0 low, 1 high
  STRATA_HD void operator()(index_t i, index_t j, index_t k) const {
    index_t from[3] = {i, j, k};
    const index_t a = axis == 0 ? i : j;
    if (side == 1 && a == n_owned) {
      f(i, j, k) = T(0);
      return;
    }
    from[axis] = side == 0 ? -a : 2 * n_owned - a;
    f(i, j, k) = -f(from[0], from[1], from[2]);
  }
};

// Every wall halo of one axis at once (BoxListKernel over the halo slabs
// of its wall sides, box b on side side[b]), as grid::fill_side and
// NormalVelocityWall fill them one field and one side at a time: h and the
// tangential velocity even about the wall (mirrored, times 1), the normal
// one odd (NormalVelocityWall). The sides may share a launch only where
// neither reads the other's halo: more owned cells along the axis than the
// halo is wide.
template <class T>
struct ShallowWaterWalls {
  FieldView<T> h, u, v;
  int axis;         // 0 x, 1 y
  index_t n_owned;  // owned cells along `axis`
  int side[2];
  // h, u and v: a value read and one written each.
  static constexpr Work cell_work() { return item_work<T>(6, 1); }
  struct One {
    FieldView<T> h, tangential;
    NormalVelocityWall<T> normal;
    STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t k) const {
      const int axis = normal.axis;
      const index_t a = axis == 0 ? i : j;
      const index_t from = normal.side == 0 ? -1 - a : 2 * normal.n_owned - 1 - a;
      const index_t fi = axis == 0 ? from : i, fj = axis == 1 ? from : j;
      h(i, j, k) = T(1) * h(fi, fj, k);
      tangential(i, j, k) = T(1) * tangential(fi, fj, k);
      normal(i, j, k);
    }
  };
  STRATA_HD One at(int b, int, const grid::Box&) const {
    return {h, axis == 0 ? v : u, NormalVelocityWall<T>{axis == 0 ? u : v, axis, n_owned, side[b]}};
  }
};

// --- diagnostics: per-cell values for grid::global_sum / global_max -----------

// Total energy per unit area h K + g h^2 / 2 (the scheme's conserved energy).
template <class T>
struct EnergyOf {
  ShallowWaterRhs<T> s;
  STRATA_HD double operator()(index_t i, index_t j, index_t) const {
    const double h = static_cast<double>(s.h(i, j));
    const double u0 = s.u(i, j), u1 = s.u(i + 1, j), v0 = s.v(i, j), v1 = s.v(i, j + 1);
    const double k = 0.25 * ((u0 * u0 + u1 * u1) + (v0 * v0 + v1 * v1));
    return h * k + 0.5 * static_cast<double>(s.g) * h * h;
  }
};

// Potential enstrophy per unit area h q^2 / 2, lives at corners: each cell
// takes the mean of its four, so a periodic sum counts every corner once
// and walls weight their corners by 1/2 (1/4 in the domain's corners).
template <class T>
struct EnstrophyOf {
  ShallowWaterRhs<T> s;
  STRATA_HD double corner(index_t i, index_t j) const {
    const double q = static_cast<double>(s.q(i, j));
    return 0.5 * static_cast<double>(s.hq(i, j)) * q * q;
  }
  STRATA_HD double operator()(index_t i, index_t j, index_t) const {
    return 0.25 * ((corner(i, j) + corner(i + 1, j)) + (corner(i, j + 1) + corner(i + 1, j + 1)));
  }
};

// The Courant number of a cell:
//   dt [ (max|u| + c) / dx + (max|v| + c) / dy + kv nu (1/dx^2 + 1/dy^2) ]
// with c = sqrt(g h), the largest speed on the cell's two faces per axis,
// an axis of one cell (no gradients along it) left out, and the viscous
// eigenvalue 4 nu / d^2 scaled from the SSP-RK3 real-axis limit (2.5127)
// to the imaginary-axis one (sqrt 3), kv = 4 (sqrt(3)/2) / 2.5127, so
// that one number <= sqrt(3)/2 bounds every eigenvalue of the linearised
// scheme inside the RK3 stability region. NaN (a negative depth) propagates.
struct CourantCoefficients {
  double rdx = 0, rdy = 0;  // 1/dx, 1/dy; 0 for an axis of one cell
  double viscous = 0;       // kv nu (rdx^2 + rdy^2)
  double g = 0;
  double dt = 0;
  static constexpr double kViscous = 4.0 * 0.8660254037844386 / 2.5127;
};

STRATA_HD inline double courant_rate(const CourantCoefficients& c, double h, double u_w, double u_e, double v_s,
                                     double v_n) {
  const double wave = sqrt(c.g * h);
  const double su = fabs(u_w) > fabs(u_e) ? fabs(u_w) : fabs(u_e);
  const double sv = fabs(v_s) > fabs(v_n) ? fabs(v_s) : fabs(v_n);
  return (su + wave) * c.rdx + (sv + wave) * c.rdy + c.viscous;
}

template <class T>
struct CourantOf {
  FieldView<const T> h, u, v;
  CourantCoefficients c;
  STRATA_HD double operator()(index_t i, index_t j, index_t) const {
    return c.dt * courant_rate(c, static_cast<double>(h(i, j)), static_cast<double>(u(i, j)),
                               static_cast<double>(u(i + 1, j)), static_cast<double>(v(i, j)),
                               static_cast<double>(v(i, j + 1)));
  }
};

// Relative vorticity at the cell centre (mean of the four corners), an
// output field.
template <class T>
struct VorticityAtCentres {
  ShallowWaterRhs<T> s;
  FieldView<T> out;
  STRATA_HD void operator()(index_t i, index_t j, index_t) const {
    out(i, j) = T(0.25) * ((s.zeta(i, j) + s.zeta(i + 1, j)) + (s.zeta(i, j + 1) + s.zeta(i + 1, j + 1)));
  }
};

}  // namespace strata::kernels::stencil
