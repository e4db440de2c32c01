// The dry compressible Euler equations in an x-z slice, as the miniWeather
// mini-app (M. Norman, ORNL; github.com/mrnorman/miniWeather, README
// "Physics, PDEs, and Numerical Approximations") defines and discretises
// them. State: q = (rho', rho u, rho w, (rho theta)'), perturbations of a
// hydrostatic background that depends on z only; pressure p = C0 (rho
// theta)^gamma. Finite volumes: the value at a cell face is the fourth-order
// interpolation of the four cell averages around it, plus hyperviscosity
// from their third difference; the update of one direction sweep is
// q_out = q_init + dt (-(F_{i+1/2} - F_{i-1/2}) / dx + S).
//
// Axes: local index i is x, j is z (the grid's axis 1); k is unused (0).
// Every expression keeps miniWeather's operation order but three, which
// trade its divisions for multiplications (the face value's four divisions
// by 12, the three by the face's density and the tendency's four by the
// cell size; an FP64 division is a dozen instructions on a GPU): the same
// values to a rounding or two. A serial loop code written the same way
// (scripts/bench/euler2d_reference.cpp) agrees bit for bit on the host.
#pragma once

#include <cmath>

#include "kernels/grid/field_view.hpp"

namespace strata::kernels::stencil::euler2d {

using kernels::grid::FieldView;
using kernels::grid::index_t;

// miniWeather's constants (SI units).
inline constexpr double kPi = 3.14159265358979323846264338327;
inline constexpr double kGrav = 9.8;       // m s-2
inline constexpr double kCp = 1004.;       // J kg-1 K-1
inline constexpr double kCv = 717.;        // J kg-1 K-1
inline constexpr double kRd = 287.;        // J kg-1 K-1
inline constexpr double kP0 = 1.e5;        // Pa
// C0 = Rd^gamma p0^(-Rd/cv) and gamma = cp/cv, to the digits miniWeather uses.
inline constexpr double kC0 = 27.5629410929725921310572974482;
inline constexpr double kGamma = 1.40027894002789400278940027894;
inline constexpr double kXLen = 2.e4;      // m
inline constexpr double kZLen = 1.e4;      // m
inline constexpr double kMaxSpeed = 450;   // m s-1: the wave speed dt assumes
inline constexpr int kHalo = 2;            // the 4-point stencil reaches two cells out
// FP instructions of a face's fluxes besides its division (1 / r) and its
// pow, and of a cell's update besides its division (1 / d): nvcc 13's PTX
// for sm_90, fp64, the z face (the x face has 63).
inline constexpr double kFaceSlots = 64;
inline constexpr double kUpdateSlots = 16;

enum Var { kDens = 0, kUmom = 1, kWmom = 2, kRhot = 3, kVars = 4 };

STRATA_HD STRATA_FORCEINLINE double power(double a, double b) { return pow(a, b); }
STRATA_HD STRATA_FORCEINLINE float power(float a, float b) { return powf(a, b); }

// The four state variables of one buffer (state or state_tmp): components
// kDens .. kRhot of one field, q(i, j, 0, v).
template <class T>
using State = FieldView<T>;
template <class T>
using ConstState = FieldView<const T>;

// The hydrostatic background, indexed by global vertical index: cell
// averages of rho and rho theta for cells -2 .. nz+1 (element k + 2), and
// rho, rho theta and p at the faces 0 .. nz (element k).
template <class T>
struct Background {
  const T* dens_cell = nullptr;
  const T* dens_theta_cell = nullptr;
  const T* dens_int = nullptr;
  const T* dens_theta_int = nullptr;
  const T* pressure_int = nullptr;
  index_t k0 = 0;        // global vertical index of this rank's row 0
  index_t nz = 0;        // global cells along z
  STRATA_HD T cell_dens(index_t j) const { return dens_cell[k0 + j + 2]; }
  STRATA_HD T cell_dens_theta(index_t j) const { return dens_theta_cell[k0 + j + 2]; }
};

// Fourth-order face value and third difference of four cell averages.
// miniWeather's -s0/12 + 7 s1/12 + 7 s2/12 - s3/12 as (7 (s1 + s2) - (s0 +
// s3)) times 1/12: no division.
template <class T>
STRATA_HD STRATA_FORCEINLINE void face_stencil(T s0, T s1, T s2, T s3, T& val, T& d3) {
  val = (T(7) * (s1 + s2) - (s0 + s3)) * T(1. / 12);
  d3 = -s0 + T(3) * s1 - T(3) * s2 + s3;
}

// Fluxes through the face i (Axis 0: x-face between cells i-1 and i of row
// j) or j (Axis 1: z-face between rows j-1 and j of column i): needs the
// four cells around it. hv = -hv_beta dx / (16 dt_stage), miniWeather's
// hyperviscosity coefficient for the stage length. Along z only the
// pressure perturbation enters (the background is in balance); at the
// bottom and top faces w = 0 and the density's hyperviscous flux is
// dropped, so no mass crosses the walls.
template <class T, int Axis>
struct Flux {
  ConstState<T> s;
  State<T> flux;
  Background<T> bg;
  T hv;
  // Four variables read (the other three cells from cache), four fluxes
  // written; one division (1 / r, for u, w and theta), a pow and
  // kFaceSlots other FP instructions.
  static constexpr Work cell_work() { return item_work<T>(8, OpCost<T>::div + OpCost<T>::pow + kFaceSlots); }
  // The four fluxes through face (i, j), into out[kDens .. kRhot].
  STRATA_HD STRATA_FORCEINLINE void face(index_t i, index_t j, T out[kVars]) const {
    if constexpr (Axis == 0) {
      face_columns(i - 2, i - 1, i, i + 1, j, out);
    } else {
      T vals[kVars], d3[kVars];
      for (int v = 0; v < kVars; ++v)
        face_stencil(s(i, j - 2, 0, v), s(i, j - 1, 0, v), s(i, j, 0, v), s(i, j + 1, 0, v), vals[v], d3[v]);
      fluxes(vals, d3, j, out);
    }
  }
  // An x face of row j from the cells of columns c0 .. c3: i - 2 .. i + 1
  // for face i, or, where a sweep reads across a periodic seam itself, the
  // owned cells those halo columns copy (the same values, so the same bits).
  STRATA_HD STRATA_FORCEINLINE void face_columns(index_t c0, index_t c1, index_t c2, index_t c3, index_t j,
                                                 T out[kVars]) const {
    static_assert(Axis == 0, "columns are an x face's");
    T vals[kVars], d3[kVars];
    for (int v = 0; v < kVars; ++v)
      face_stencil(s(c0, j, 0, v), s(c1, j, 0, v), s(c2, j, 0, v), s(c3, j, 0, v), vals[v], d3[v]);
    fluxes(vals, d3, j, out);
  }
  // The fluxes from the face values and third differences of the four
  // variables at a face of row (Axis 0) or between rows j - 1 and j (Axis 1).
  STRATA_HD STRATA_FORCEINLINE void fluxes(const T vals[kVars], T d3[kVars], index_t j, T out[kVars]) const {
    const index_t kf = bg.k0 + j;
    const T r = vals[kDens] + (Axis == 0 ? bg.cell_dens(j) : bg.dens_int[kf]);
    const T rr = T(1) / r;
    const T u = vals[kUmom] * rr;
    T w = vals[kWmom] * rr;
    const T t = (vals[kRhot] + (Axis == 0 ? bg.cell_dens_theta(j) : bg.dens_theta_int[kf])) * rr;
    T p = T(kC0) * power(r * t, T(kGamma));
    if (Axis == 1) p = p - bg.pressure_int[kf];
    if (Axis == 1 && (kf == 0 || kf == bg.nz)) {
      w = T(0);
      d3[kDens] = T(0);
    }
    // The velocity through the face carries every variable; the pressure
    // pushes the momentum normal to it.
    const T n = Axis == 0 ? u : w;
    T mom[2] = {r * n * u, r * n * w};
    mom[Axis] = mom[Axis] + p;
    out[kDens] = r * n - hv * d3[kDens];
    out[kUmom] = mom[0] - hv * d3[kUmom];
    out[kWmom] = mom[1] - hv * d3[kWmom];
    out[kRhot] = r * n * t - hv * d3[kRhot];
  }
  STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t) const {
    T f[kVars];
    face(i, j, f);
    for (int v = 0; v < kVars; ++v) flux(i, j, 0, v) = f[v];
  }
};

// q_out = q_init + dt tend for one cell, tend = -(F(face+1) - F(face)) / d
// along `axis` (0 x, 1 z). The z sweep adds the buoyancy source -rho' g of
// the forcing state; `wforce` (gravity_waves only) is added to the w
// tendency three times, as miniWeather's serial code does (see the model).
template <class T>
struct ApplyTendency {
  ConstState<T> init;
  ConstState<T> forcing;
  ConstState<T> flux;
  State<T> out;
  FieldView<const T> wforce;   // origin null: none
  int axis;
  T d;
  T dt;
  // init, flux (its next face from cache) and out, four variables each, and
  // the forcing's density half the time; one division (1 / d) and
  // kUpdateSlots other FP instructions.
  static constexpr Work cell_work() { return item_work<T>(12.5, OpCost<T>::div + kUpdateSlots); }
  // The update of cell (i, j) from the fluxes through its low face (lo)
  // and its high face (hi) along `axis`.
  STRATA_HD STRATA_FORCEINLINE void update(index_t i, index_t j, const T lo[kVars], const T hi[kVars]) const {
    // Every tendency before any write: `out` may be `forcing` (stage 2).
    T tend[kVars];
    const T rd = T(1) / d;
    for (int v = 0; v < kVars; ++v) tend[v] = (lo[v] - hi[v]) * rd;
    if (axis == 1) tend[kWmom] = tend[kWmom] - forcing(i, j, 0, kDens) * T(kGrav);
    if (wforce.origin != nullptr) {
      const T f = wforce(i, j);
      tend[kWmom] += f;
      tend[kWmom] += f;
      tend[kWmom] += f;
    }
    for (int v = 0; v < kVars; ++v) out(i, j, 0, v) = init(i, j, 0, v) + dt * tend[v];
  }
  STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t) const {
    const index_t i1 = axis == 0 ? i + 1 : i;
    const index_t j1 = axis == 0 ? j : j + 1;
    T lo[kVars], hi[kVars];
    for (int v = 0; v < kVars; ++v) {
      lo[v] = flux(i, j, 0, v);
      hi[v] = flux(i1, j1, 0, v);
    }
    update(i, j, lo, hi);
  }
};

// One Runge-Kutta stage of a sweep along Axis in one kernel: the fluxes of
// Flux<T, Axis> through a cell's two faces and ApplyTendency's update of
// it, so the fluxes never go to memory. The same expressions as the two
// kernels apart, so the same bits. `out` must not be the forcing state (a
// neighbour's faces read it); `flux.flux` and `apply.flux` are unused.
// operator() is the plain reference (each face computed by both cells
// beside it); the launch in models/euler2d/kernels.hpp (SweepStage)
// computes each face once, carried along a row or a column.
template <class T, int Axis>
struct FusedStage {
  Flux<T, Axis> flux;
  ApplyTendency<T> apply;   // apply.axis == Axis
  STRATA_HD STRATA_FORCEINLINE void operator()(index_t i, index_t j, index_t) const {
    T lo[kVars], hi[kVars];
    flux.face(i, j, lo);
    flux.face(Axis == 0 ? i + 1 : i, Axis == 0 ? j : j + 1, hi);
    apply.update(i, j, lo, hi);
  }
};

// The halo rows beyond a solid bottom (side 0) or top (side 1) wall, as
// miniWeather sets them: rho' and (rho theta)' copied from the nearest row,
// rho w = 0, and rho u the nearest row's times the ratio of background
// densities (u itself copied).
template <class T>
struct WallHaloZ {
  State<T> s;
  Background<T> bg;
  index_t src;   // the owned row next to the wall
  STRATA_HD void operator()(index_t i, index_t j, index_t) const {
    s(i, j, 0, kDens) = s(i, src, 0, kDens);
    s(i, j, 0, kUmom) = s(i, src, 0, kUmom) / bg.cell_dens(src) * bg.cell_dens(j);
    s(i, j, 0, kWmom) = T(0);
    s(i, j, 0, kRhot) = s(i, src, 0, kRhot);
  }
};

// Both walls' halo rows in one launch (BoxListKernel over the rows
// beyond each wall this rank holds, box b mirroring row src[b]). The
// boxes read owned rows only, so they need no order.
template <class T>
struct WallRowsZ {
  State<T> s;
  Background<T> bg;
  index_t src[2];
  STRATA_HD WallHaloZ<T> at(int b, int, const kernels::grid::Box&) const { return {s, bg, src[b]}; }
};

// miniWeather's injection case: in the left halo of the domain (x is
// periodic; this overrides what came from the right end) a jet of 50 m/s
// at theta = 298 K enters the rows with |z - 3 zlen/4| <= zlen/16.
template <class T>
struct InjectJet {
  State<T> s;
  Background<T> bg;
  STRATA_HD void operator()(index_t i, index_t j, index_t) const {
    s(i, j, 0, kUmom) = (s(i, j, 0, kDens) + bg.cell_dens(j)) * T(50.);
    s(i, j, 0, kRhot) = (s(i, j, 0, kDens) + bg.cell_dens(j)) * T(298.) - bg.cell_dens_theta(j);
  }
};

// Per-cell terms of miniWeather's domain totals (its reductions()): mass
// rho dx dz and total energy (rho (u^2 + w^2) + rho cv T) dx dz, in double.
template <class T>
struct CellTotals {
  ConstState<T> s;
  Background<T> bg;
  double dx, dz;
  STRATA_HD STRATA_FORCEINLINE void primitives(index_t i, index_t j, double& r, double& u, double& w, double& th,
                                               double& p) const {
    r = static_cast<double>(s(i, j, 0, kDens)) + static_cast<double>(bg.cell_dens(j));
    u = static_cast<double>(s(i, j, 0, kUmom)) / r;
    w = static_cast<double>(s(i, j, 0, kWmom)) / r;
    th = (static_cast<double>(s(i, j, 0, kRhot)) + static_cast<double>(bg.cell_dens_theta(j))) / r;
    p = kC0 * pow(r * th, kGamma);
  }
};

template <class T>
struct CellMass {
  CellTotals<T> c;
  STRATA_HD double operator()(index_t i, index_t j, index_t) const {
    const double r = static_cast<double>(c.s(i, j, 0, kDens)) + static_cast<double>(c.bg.cell_dens(j));
    return r * c.dx * c.dz;
  }
};

template <class T>
struct CellEnergy {
  CellTotals<T> c;
  STRATA_HD double operator()(index_t i, index_t j, index_t) const {
    double r, u, w, th, p;
    c.primitives(i, j, r, u, w, th, p);
    const double t = th / pow(kP0 / p, kRd / kCp);   // temperature
    const double ke = r * (u * u + w * w);           // miniWeather's kinetic term (no 1/2)
    const double ie = r * kCv * t;
    return (ke + ie) * c.dx * c.dz;
  }
};

// The Courant number of the fastest wave in the cell, dt max((|u| + c)/dx,
// (|w| + c)/dz), c = sqrt(gamma p / rho) the speed of sound.
template <class T>
struct CellCourant {
  CellTotals<T> c;
  double dt;
  STRATA_HD double operator()(index_t i, index_t j, index_t) const {
    double r, u, w, th, p;
    c.primitives(i, j, r, u, w, th, p);
    const double sound = sqrt(kGamma * p / r);
    const double cx = (fabs(u) + sound) / c.dx, cz = (fabs(w) + sound) / c.dz;
    return dt * (cx > cz ? cx : cz);
  }
};

}  // namespace strata::kernels::stencil::euler2d
