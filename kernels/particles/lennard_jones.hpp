// The Lennard-Jones pair evaluator (HOOMD-blue's EvaluatorPairLJ: one small
// class per potential, its parameters in a param_type, the same source on
// host and device). A second pair potential is one more file of this shape:
// a param_type (cutsq included) and evaluate() templated on its arithmetic
// type, which PairForces (pair_forces.hpp) instantiates on a scalar on CUDA
// and on a GCC vector of eight neighbours on the host.
//
//   U(r) = 4 eps [(sigma/r)^12 - (sigma/r)^6] - U_shift,  r < r_c
//   F(r) = -dU/dr r_hat = 24 eps [2 (sigma/r)^12 - (sigma/r)^6] / r^2 * r_vec
//
// with U_shift = 4 eps [(sigma/r_c)^12 - (sigma/r_c)^6] when shifted, else 0.
// The arithmetic is written in the order of LAMMPS's pair_lj_cut.cpp
// (lj1 = 48 eps sigma^12, lj2 = 24 eps sigma^6, lj3 = 4 eps sigma^12,
// lj4 = 4 eps sigma^6; forcelj = r6inv (lj1 r6inv - lj2), fpair = forcelj
// r2inv), so the two codes round alike.
#pragma once

#include "kernels/core/hd.hpp"

namespace strata::kernels::particles {

template <class RealType>
struct LennardJones {
  using Real = RealType;

  struct param_type {
    Real lj1 = 0, lj2 = 0, lj3 = 0, lj4 = 0;
    Real cutsq = 0;    // r_c^2
    Real offset = 0;   // U_shift (0: unshifted)
  };

  static param_type make(double epsilon, double sigma, double cutoff, bool shift) {
    param_type p;
    const double s6 = sigma * sigma * sigma * sigma * sigma * sigma;
    p.lj1 = static_cast<Real>(48.0 * epsilon * s6 * s6);
    p.lj2 = static_cast<Real>(24.0 * epsilon * s6);
    p.lj3 = static_cast<Real>(4.0 * epsilon * s6 * s6);
    p.lj4 = static_cast<Real>(4.0 * epsilon * s6);
    p.cutsq = static_cast<Real>(cutoff * cutoff);
    if (shift) {
      const double ratio = sigma / cutoff;
      const double r6 = ratio * ratio * ratio * ratio * ratio * ratio;
      p.offset = static_cast<Real>(4.0 * epsilon * (r6 * r6 - r6));
    }
    return p;
  }

  // For pairs at squared distance rsq < cutsq (V: Real, or a vector of
  // Real lane by lane): fpair = |F| / r (the force on i is fpair * (x_i -
  // x_j)) and the pair energy. The pair's virial r_ij . F_ij is rsq * fpair.
  template <class V>
  STRATA_HD static STRATA_FORCEINLINE void evaluate(const param_type& p, V rsq, V& fpair, V& energy) {
    const V r2inv = Real(1) / rsq;
    const V r6inv = r2inv * r2inv * r2inv;
    const V forcelj = r6inv * (p.lj1 * r6inv - p.lj2);
    fpair = forcelj * r2inv;
    energy = r6inv * (p.lj3 * r6inv - p.lj4) - p.offset;
  }
};

}  // namespace strata::kernels::particles
