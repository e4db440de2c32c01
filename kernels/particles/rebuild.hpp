// md's neighbour-list rebuild as kernels, so the atoms stay where they live
// (LAMMPS's Comm::exchange and Comm::borders, Neighbor's binning): the
// check and the periodic wrap, codes that say where an atom goes, the
// selection of the atoms with a code (a flag, an exclusive scan, a gather
// of indices), records packed for migration and sorting, the sort keys of
// the cells and the cell starts of the sorted keys.
//
// Build positions are kept in double ("keys") while a rebuild runs: the
// wrapped position before it is rounded to Real, as migration, the ghost
// faces and the shifted ghosts see it; x0 is the keys rounded to Real.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/particles/neighbour_list.hpp"

namespace strata::kernels::particles {

// Image counts beyond this are not a position but a blown-up atom: an atom
// this many box lengths out has lost 30 bits of its place in the box (and
// the count would overflow the int images are kept in).
inline constexpr double kMaxImages = 1073741824.0;   // 2^30

// Wraps v into [0, L) and adds the box lengths crossed to `image`. Returns
// false, leaving v and image as they were, when v is not finite or lies
// more than kMaxImages box lengths out: the caller reports the atom.
// A few box lengths are taken off one at a time, as a plain loop would (the
// same bits for every position a run produces); farther values take
// floor(v / L) lengths at once, so the work never grows with v.
STRATA_HD inline bool wrap_periodic(double& v, double length, int& image) {
  if (!std::isfinite(v) || !(std::fabs(v) <= kMaxImages * length)) return false;
  double w = v;
  int crossed = 0;
  for (int k = 0; k < 4 && w < 0; ++k) {
    w += length;
    --crossed;
  }
  for (int k = 0; k < 4 && w >= length; ++k) {
    w -= length;
    ++crossed;
  }
  if (w < 0 || w >= length) {
    const double n = std::floor(w / length);
    w = std::fma(-n, length, w);
    crossed += static_cast<int>(n);
    // The rounding of w / L may leave w one length out either way.
    if (w < 0) {
      w += length;
      --crossed;
    }
    if (w >= length) {
      w -= length;
      ++crossed;
    }
  }
  v = w;
  image += crossed;
  return true;
}

// The grid coordinate c in [0, p) whose [L c / p, L (c + 1) / p) holds a
// finite v in [0, L): the floor may be one off the bounds' own arithmetic,
// so it settles on them (at most p steps).
STRATA_HD inline int axis_owner(double v, double length, int p) {
  int c = static_cast<int>(std::floor(v / length * p));
  c = c < 0 ? 0 : (c > p - 1 ? p - 1 : c);
  for (int k = 0; k < p && c > 0 && v < length * c / p; ++k) --c;
  for (int k = 0; k < p && c + 1 < p && v >= length * (c + 1) / p; ++k) ++c;
  return c;
}

// The owned arrays a rebuild moves and the record they travel in: the
// layout of particles::Record{image, reference}: index, position,
// velocity, image, build position (13 doubles).
inline constexpr int kRecordWidth = 13;

template <class Real>
struct AtomArrays {
  Real *x, *y, *z, *vx, *vy, *vz;
  double *kx, *ky, *kz;   // build positions (keys)
  std::int64_t* index;
  int* image;             // 3 per atom
};

template <class Real>
struct PackRecords {
  AtomArrays<Real> a;
  const int* source;   // the atoms, in record order
  double* out;
  STRATA_HD void operator()(std::int64_t k) const {
    const int i = source[k];
    double* r = out + k * kRecordWidth;
    r[0] = static_cast<double>(a.index[i]);
    r[1] = a.x[i], r[2] = a.y[i], r[3] = a.z[i];
    r[4] = a.vx[i], r[5] = a.vy[i], r[6] = a.vz[i];
    for (int d = 0; d < 3; ++d) r[7 + d] = a.image[3 * i + d];
    r[10] = a.kx[i], r[11] = a.ky[i], r[12] = a.kz[i];
  }
};

template <class Real>
struct UnpackRecords {
  AtomArrays<Real> a;
  const double* in;
  std::int64_t first;   // record k becomes atom first + k
  STRATA_HD void operator()(std::int64_t k) const {
    const std::int64_t i = first + k;
    const double* r = in + k * kRecordWidth;
    a.index[i] = static_cast<std::int64_t>(r[0]);
    a.x[i] = static_cast<Real>(r[1]), a.y[i] = static_cast<Real>(r[2]), a.z[i] = static_cast<Real>(r[3]);
    a.vx[i] = static_cast<Real>(r[4]), a.vy[i] = static_cast<Real>(r[5]), a.vz[i] = static_cast<Real>(r[6]);
    for (int d = 0; d < 3; ++d) a.image[3 * i + d] = static_cast<int>(r[7 + d]);
    a.kx[i] = r[10], a.ky[i] = r[11], a.kz[i] = r[12];
  }
};

// The check before a rebuild: the atom farthest beyond the lists' reach
// from where the last build saw it (ties: the lowest; a NaN is no
// distance, it is left for the health check), and the first atom no wrap
// can place (infinite, or beyond kMaxImages box lengths). -1: none.
struct WorstAtom {
  double d2 = -1;
  int worst = -1, unwrappable = -1;
};

struct WorstAtomOp {
  STRATA_HD WorstAtom operator()(const WorstAtom& a, const WorstAtom& b) const {
    WorstAtom r = a;
    if (b.worst >= 0 && (a.worst < 0 || b.d2 > a.d2 || (b.d2 == a.d2 && b.worst < a.worst))) {
      r.d2 = b.d2;
      r.worst = b.worst;
    }
    if (b.unwrappable >= 0 && (a.unwrappable < 0 || b.unwrappable < a.unwrappable)) r.unwrappable = b.unwrappable;
    return r;
  }
};

template <class Real>
struct RebuildCheck {
  const Real *x, *y, *z, *x0, *y0, *z0;
  double reach2;      // (cutoff + skin)^2
  double length[3];   // the box
  STRATA_HD WorstAtom operator()(std::int64_t i) const {
    const Real* now[3] = {x, y, z};
    const Real* then[3] = {x0, y0, z0};
    double d2 = 0;
    WorstAtom r;
    for (int a = 0; a < 3; ++a) {
      const double v = now[a][i], d = v - static_cast<double>(then[a][i]);
      d2 += d * d;
      double w = v;
      int image = 0;
      if (!std::isnan(v) && !wrap_periodic(w, length[a], image)) r.unwrappable = static_cast<int>(i);
    }
    if (d2 > reach2) {
      r.d2 = d2;
      r.worst = static_cast<int>(i);
    }
    return r;
  }
};

// Positions into [0, L) with their image counts; the wrapped values are the
// build positions (a NaN is left as it is).
template <class Real>
struct WrapAtoms {
  AtomArrays<Real> a;
  double length[3];
  bool from_keys;   // wrap the keys (a load's positions, before rounding), not x
  STRATA_HD void operator()(std::int64_t i) const {
    Real* p[3] = {a.x, a.y, a.z};
    double* key[3] = {a.kx, a.ky, a.kz};
    for (int d = 0; d < 3; ++d) {
      double v = from_keys ? key[d][i] : static_cast<double>(p[d][i]);
      (void)wrap_periodic(v, length[d], a.image[3 * i + d]);
      p[d][i] = static_cast<Real>(v);
      key[d][i] = v;
    }
  }
};

// Where an owned atom's build position sends it along an axis: 0 stays, 1
// to the lower neighbour, 2 to the upper one (the lower when they are the
// same rank), 3 lost (farther than a neighbour: it stays, and the run
// fails). A non-finite position stays for the health check.
struct MigrationCode {
  const double* key;
  double length;
  int ranks, me;
  int* code;
  STRATA_HD void operator()(std::int64_t i) const {
    const double v = key[i];
    const int c = std::isfinite(v) ? axis_owner(v, length, ranks) : me;
    const int lower = (me + ranks - 1) % ranks, upper = (me + 1) % ranks;
    code[i] = c == me ? 0 : c == lower ? 1 : c == upper ? 2 : 3;
  }
};

// Which faces' ghost slabs an atom (owned or ghost) lies in along an axis:
// bit 0 within the ghost cutoff of the lower face, bit 1 of the upper one.
struct GhostFaces {
  const double* key;
  double below, above;   // lo + cutoff, hi - cutoff
  int* code;
  STRATA_HD void operator()(std::int64_t i) const {
    code[i] = (key[i] < below ? 1 : 0) | (key[i] >= above ? 2 : 0);
  }
};

// flag[i] = 1 when bit code[i] of `mask` is set; then, with scan the
// exclusive sum of the flags, the flagged atoms' indices in order.
struct FlagCodes {
  const int* code;
  int mask;
  int* flag;
  STRATA_HD void operator()(std::int64_t i) const { flag[i] = (mask >> code[i]) & 1; }
};

struct SelectFlagged {
  const int* flag;
  const int* scan;
  int* list;
  STRATA_HD void operator()(std::int64_t i) const {
    if (flag[i] != 0) list[scan[i]] = static_cast<int>(i);
  }
};

// Both sides at once: the flagged atoms first, in order, then the others,
// in order (list[n_first + i - scan[i]]: i less the flagged ones before
// it), with n_first the flags' total: one scan for a split in two.
struct PartitionFlagged {
  const int* flag;
  const int* scan;
  int n_first;
  int* list;
  STRATA_HD void operator()(std::int64_t i) const {
    list[flag[i] != 0 ? scan[i] : n_first + static_cast<int>(i) - scan[i]] = static_cast<int>(i);
  }
};

// An axis's two ghost swaps as one selection over 2n items: item k < n
// flags atom k for the lower face's swap (code bit 0), item n + k for the
// upper face's (bit 1); one exclusive scan of the 2n flags then lists the
// lower face's atoms, then the upper face's (SelectSides), and scan[n]
// counts the first.
struct FlagSides {
  const int* code;  // GhostFaces
  std::int64_t n;
  int* flag;
  STRATA_HD void operator()(std::int64_t k) const {
    const int side = k >= n ? 1 : 0;
    flag[k] = (code[k - side * n] >> side) & 1;
  }
};

struct SelectSides {
  const int* flag;
  const int* scan;
  std::int64_t n;
  int* list;
  STRATA_HD void operator()(std::int64_t k) const {
    if (flag[k] != 0) list[scan[k]] = static_cast<int>(k >= n ? k - n : k);
  }
};

// code[i] = 1 when owned atom i's neighbour row holds a ghost (an index
// at or above n_local): a border atom, whose force needs the forwarded
// ghost positions; 0 for an interior atom, whose force can be computed
// while they travel.
struct GhostRows {
  const int* neighbours;
  const int* count;
  std::int64_t capacity;
  int n_local;
  int* code;
  STRATA_HD void operator()(std::int64_t i) const {
    const int* const row = list_row(neighbours, i, capacity);
    int ghost = 0;
    for (int k = 0; k < count[i]; ++k) ghost |= row[k * kTile] >= n_local ? 1 : 0;
    code[i] = ghost;
  }
};

// Sort keys: the cell of each build position (rounded to Real, as the
// lists see it) above `shift` bits of the global index, if any; value i.
template <class Real>
struct CellKeys {
  const double *kx, *ky, *kz;
  CellGrid<Real> grid;
  const std::int64_t* index;   // nullptr: the cell alone
  int shift;
  std::uint64_t* key;
  int* value;
  STRATA_HD void operator()(std::int64_t i) const {
    const auto cell = static_cast<std::uint64_t>(
        grid.cell_of(static_cast<Real>(kx[i]), static_cast<Real>(ky[i]), static_cast<Real>(kz[i])));
    key[i] = index != nullptr ? cell << shift | static_cast<std::uint64_t>(index[i]) : cell;
    value[i] = static_cast<int>(i);
  }
};

// cell_start[c] = the first of the n sorted keys that is >= c, for c in
// [0, cells]: the atoms of cell c are cell_atoms[cell_start[c], cell_start[c + 1]).
struct CellStarts {
  const std::uint64_t* sorted;
  int n;
  int* cell_start;
  STRATA_HD void operator()(std::int64_t c) const {
    int lo = 0, hi = n;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (sorted[mid] < static_cast<std::uint64_t>(c)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    cell_start[c] = lo;
  }
};

// The build positions rounded to Real (x0 of owned atoms and ghosts).
template <class Real>
struct RoundKeys {
  const double *kx, *ky, *kz;
  Real *x0, *y0, *z0;
  STRATA_HD void operator()(std::int64_t i) const {
    x0[i] = static_cast<Real>(kx[i]), y0[i] = static_cast<Real>(ky[i]), z0[i] = static_cast<Real>(kz[i]);
  }
};

}  // namespace strata::kernels::particles
