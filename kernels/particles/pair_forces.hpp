// Forces on owned atoms from a full neighbour list (neighbour_list.hpp) and
// a pair evaluator (lennard_jones.hpp), with, when Tally, each atom's share
// of the potential energy and of the virial: half of each pair's energy and
// of its r_ij . F_ij, so that the sums over owned atoms of all ranks count
// every pair once. LAMMPS's compute pressure uses the same pair virial sum
// (W = sum_pairs r_ij . F_ij).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/core/hd.hpp"
#include "kernels/core/op_costs.hpp"
#include "kernels/core/work.hpp"
#include "kernels/particles/neighbour_list.hpp"

namespace strata::kernels::particles {

// The positions x, y, z of atoms [first, first + n) packed as x, y, z, 0
// (four values an atom), so that a pair's gather of a neighbour touches one
// 32-byte sector instead of one in each of three arrays; the last value
// only aligns (never read). Packed before each force launch, from the
// positions as they are then.
template <class Real>
struct PackPositions {
  const Real *x, *y, *z;
  Real* xyz;
  std::int64_t first = 0;
  STRATA_HD void operator()(std::int64_t k) const {
    const std::int64_t i = first + k;
    xyz[4 * i] = x[i];
    xyz[4 * i + 1] = y[i];
    xyz[4 * i + 2] = z[i];
    xyz[4 * i + 3] = Real(0);
  }
  Work work(std::int64_t n) const { return item_work<Real>(3 + 4, 0) * static_cast<double>(n); }
};

// PackPositions for all atoms of a rank whose ghost swaps all copy on the
// rank itself (one rank along every axis), in one launch: owned atoms from
// x, y, z; ghost g (atom n_local + g) from its owned root atom root[g]
// plus, per axis, the periodic shift of the one swap of that axis it came
// through, if any (image[g]: two bits an axis, 0 none, 1 + side: the shift
// shift[2 axis + side]). A ghost's coordinate takes at most one non-zero
// shift (its own axis's swap; the swaps of the other axes add 0), so
// root + shift has the bits of the chain of swaps that made the ghost
// (CopyPositions, axis by axis): x + 0 + s + 0 == x + s, x + 0 == x + 0.
// Nothing else reads the ghosts' x, y, z arrays then, so they are left as
// the rebuild found them.
template <class Real>
struct PackAtoms {
  const Real *x, *y, *z;
  const int* root;   // per ghost: its owned source
  const int* image;  // per ghost: which swap's shift each axis adds
  Real shift[6];     // axis a, side s: shift[2 a + s]
  std::int64_t n_local;
  Real* xyz;
  STRATA_HD void operator()(std::int64_t i) const {
    const bool ghost = i >= n_local;
    const std::int64_t g = i - n_local;
    const std::int64_t r = ghost ? root[g] : i;
    const int code = ghost ? image[g] : 0;
    xyz[4 * i] = ghost ? x[r] + shift_of(code, 0) : x[r];
    xyz[4 * i + 1] = ghost ? y[r] + shift_of(code, 1) : y[r];
    xyz[4 * i + 2] = ghost ? z[r] + shift_of(code, 2) : z[r];
    xyz[4 * i + 3] = Real(0);
  }
  // Axis a's shift (a constant index: selected, so the array stays in
  // registers rather than the stack).
  STRATA_HD Real shift_of(int code, int a) const {
    const int c = (code >> (2 * a)) & 3;
    return c == 0 ? Real(0) : c == 1 ? shift[2 * a] : shift[2 * a + 1];
  }
  // Owned atoms as PackPositions; a ghost also reads its root and image
  // (two ints) and adds three shifts: nvcc's sm_90 PTX has, an item, 3
  // add.f64 (add.f32) and 12 integer instructions selecting them (3 and, 2
  // shr, 6 setp.eq on the codes, the ghost test), besides the selp moves.
  Work work(std::int64_t n) const {
    const double owned = static_cast<double>(n < n_local ? n : n_local), ghosts = static_cast<double>(n) - owned;
    return item_work<Real>(3 + 4, 0) * owned + (item_work<Real>(3 + 4, 3, 12) + Work{8, 0, 0}) * ghosts;
  }
};

// Evaluator: a pair potential in the shape of LennardJones (its Real, its
// param_type with cutsq, a static evaluate templated on the arithmetic type).
template <class Evaluator, bool Tally>
struct PairForces {
  using Real = typename Evaluator::Real;
  const Real* xyz;   // positions packed x, y, z, 0 per atom (PackPositions)
  const int* neighbours;
  const int* count;
  std::int64_t capacity;
  typename Evaluator::param_type params;
  Real *fx, *fy, *fz;
  Real *energy, *virial;   // per owned atom; written only when Tally
  // Neighbours a row holds on average, padding included: the cost model's
  // (work() below), from the density; never read on the device.
  double mean_row = 0;
  // The atoms to compute, in launch order: item k is atom atoms[k]; nullptr:
  // item k is atom k. Each atom's sums depend on its own row alone, so a
  // subset (the interior atoms while the ghosts travel) gives the same bits.
  const int* atoms = nullptr;

  // Each pair: its row entry read from a tiled list (a warp's 32 reads of
  // one column are 128 contiguous bytes: 4 bytes a pair), the neighbour's
  // packed x, y, z gathered from the L2 (one 32-byte sector, weighed at a
  // third of device memory's cost), and about 20 operations and a
  // division. Each atom: its own packed position, its forces (and energy
  // and virial).
  Work work(std::int64_t n) const {
    using C = OpCost<Real>;
    return Work{4 + 32.0 / 3, 2 * (20 + C::div + (Tally ? 6 : 0)), 4} * (static_cast<double>(n) * mean_row) +
           item_work<Real>(Tally ? 9 : 7, 0) * static_cast<double>(n);
  }

  // The neighbours are taken kLanes at a time and evaluated lane by lane
  // with one partial sum per lane (neighbour k goes to lane k % kLanes);
  // the lanes are combined pairwise at the end. atom<V>() holds the lanes
  // in V: on the device V = Real (kLanes values of one lane each); on the
  // host V is a 32-byte GCC vector (AVX2: 4 doubles or 8 floats), so a
  // group is one or two vector registers. The operations per lane and the
  // lane tree are the same for every V, so the summation order is fixed by
  // this code alone: the same bits for every vector width, thread count and
  // backend. Pairs beyond the cutoff (inside the skin) and the padding of
  // the last group weigh 0: no branches.
  static constexpr int kLanes = kRowPad;

  STRATA_HD STRATA_FORCEINLINE void operator()(std::int64_t k) const { atom<Real>(atom_of(k)); }
  STRATA_HD STRATA_FORCEINLINE std::int64_t atom_of(std::int64_t k) const { return atoms != nullptr ? atoms[k] : k; }

  // The host's launch (parallel_for selects it): atom() on vectors.
  void host_for(std::int64_t n) const {
    typedef Real Vec __attribute__((vector_size(32)));
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
    for (std::int64_t k = 0; k < n; ++k) atom<Vec>(atom_of(k));
  }

  template <class V>
  STRATA_HD STRATA_FORCEINLINE void atom(std::int64_t i) const {
    constexpr int kWidth = static_cast<int>(sizeof(V) / sizeof(Real));
    constexpr int kParts = kLanes / kWidth;   // lane l is lane l % kWidth of part l / kWidth
    const typename Evaluator::param_type p = params;
    const Real xi = xyz[4 * i], yi = xyz[4 * i + 1], zi = xyz[4 * i + 2];
    const int* const row = list_row(neighbours, i, capacity);
    const int n = count[i];
    const V zero = V{}, one = zero + Real(1);
    V a0[kParts], a1[kParts], a2[kParts], ae[kParts], aw[kParts];
    for (int h = 0; h < kParts; ++h) a0[h] = a1[h] = a2[h] = ae[h] = aw[h] = zero;
    for (int k0 = 0; k0 < n; k0 += kLanes) {
      for (int h = 0; h < kParts; ++h) {
        V dx, dy, dz;
        for (int l = 0; l < kWidth; ++l) {
          // Rows are padded with i to a multiple of kLanes.
          const std::int64_t j = 4 * static_cast<std::int64_t>(row[(k0 + h * kWidth + l) * kTile]);
          set_lane(dx, l, xi - xyz[j]);
          set_lane(dy, l, yi - xyz[j + 1]);
          set_lane(dz, l, zi - xyz[j + 2]);
        }
        const V rsq = dx * dx + dy * dy + dz * dz;
        // The padding (atom i itself: rsq = 0) is excluded here.
        const auto inside = (rsq < p.cutsq) & (rsq > Real(0));
        V fpair, epair;
        Evaluator::evaluate(p, inside ? rsq : one, fpair, epair);
        fpair = inside ? fpair : zero;
        a0[h] += dx * fpair;
        a1[h] += dy * fpair;
        a2[h] += dz * fpair;
        if constexpr (Tally) {
          ae[h] += inside ? epair : zero;
          aw[h] += rsq * fpair;
        }
      }
    }
    fx[i] = lane_sum<V>(a0);
    fy[i] = lane_sum<V>(a1);
    fz[i] = lane_sum<V>(a2);
    if constexpr (Tally) {
      energy[i] = Real(0.5) * lane_sum<V>(ae);
      virial[i] = Real(0.5) * lane_sum<V>(aw);
    }
  }

  template <class V>
  STRATA_HD static STRATA_FORCEINLINE void set_lane(V& v, int l, Real value) {
    if constexpr (std::is_same_v<V, Real>) {
      (void)l;
      v = value;
    } else {
      v[l] = value;
    }
  }

  template <class V>
  STRATA_HD static STRATA_FORCEINLINE Real lane_sum(const V* a) {
    constexpr int kWidth = static_cast<int>(sizeof(V) / sizeof(Real));
    Real v[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      if constexpr (std::is_same_v<V, Real>) {
        v[l] = a[l];
      } else {
        v[l] = a[l / kWidth][l % kWidth];
      }
    }
    return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
  }
};

}  // namespace strata::kernels::particles
