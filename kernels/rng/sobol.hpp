// Sobol' low-discrepancy points with hash-based Owen scrambling, counter
// style: point `index` of dimension `dim` is a pure function of the index
// and that dimension's 32 direction numbers, so any path of any rank on
// any backend computes its own point, and the integers are the same bits
// on the host and on CUDA.
//
// Direction numbers: Bratley & Fox, ACM TOMS 14(1) (1988), section 2, in
// Joe & Kuo's notation (SIAM J. Sci. Comput. 30, 2635-2654 (2008)): for a
// dimension with primitive polynomial x^s + a_1 x^(s-1) + ... + a_(s-1) x + 1
// and initial odd m_1..m_s (m_k < 2^k),
//   m_k = 2 a_1 m_(k-1) ^ 4 a_2 m_(k-2) ^ ... ^ 2^(s-1) a_(s-1) m_(k-s+1)
//         ^ 2^s m_(k-s) ^ m_(k-s),
// and v_k = m_k / 2^k, stored as the 32-bit integer m_k << (32 - k). The
// polynomials and m's are Joe & Kuo's new-joe-kuo-6 set as Boost.Random
// ships it (models/pricing/sobol_directions.cpp reads them); dimension 0
// is van der Corput (every m_k = 1).
//
// Point: x_i = XOR of v_k over the set bits k of i (natural order; Gray-code
// order visits the same 2^m points of every block of 2^m).
//
// Scrambling: nested uniform ("Owen") scrambling by Burley's hash, "Practical
// Hash-based Owen Scrambling", JCGT 9(4), 2020: reverse the bits, apply the
// Laine-Karras permutation (each output bit depends only on the input bits
// below it, which after the reversal are the more significant digits of
// the point, as Owen's nested permutations require), reverse back. The
// seed is one 32-bit word per (replicate, dimension). A scrambled (t,m,s)-net
// stays a (t,m,s)-net, and each scrambled point is uniform on [0,1)^s, so
// the average over independent replicates is an unbiased estimate with an
// honest standard error.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"

namespace strata::rng {

inline constexpr int kSobolBits = 32;

// The 32 direction numbers of one dimension from its polynomial's degree s
// (s >= 1), interior coefficients a (bit s-2 is a_1, ..., bit 0 is a_(s-1))
// and initial m_1..m_s (m[0..s-1]). s = 0 gives dimension 0 (van der Corput).
STRATA_HD inline void sobol_directions(unsigned s, std::uint32_t a, const std::uint32_t* m, std::uint32_t* v) {
  std::uint32_t mk[kSobolBits];
  for (unsigned k = 0; k < kSobolBits; ++k) {
    if (s == 0) {
      mk[k] = 1;
    } else if (k < s) {
      mk[k] = m[k];
    } else {
      // m_k (1-based k+1) from the s before it.
      std::uint32_t x = mk[k - s] ^ (mk[k - s] << s);
      for (unsigned j = 1; j < s; ++j)
        if ((a >> (s - 1 - j)) & 1u) x ^= mk[k - j] << j;
      mk[k] = x;
    }
    v[k] = mk[k] << (kSobolBits - 1 - k);
  }
}

// Unscrambled point `index` (natural order) of the dimension whose
// direction numbers are v[0..31].
// Branch-free: the bits of an index are noise to a branch predictor (the
// branching loop took 84 ns a point on the host, this one 19).
STRATA_HD inline std::uint32_t sobol_point(const std::uint32_t* v, std::uint32_t index) {
  std::uint32_t x = 0;
  for (int k = 0; index != 0; ++k, index >>= 1) x ^= v[k] & (0u - (index & 1u));
  return x;
}

STRATA_HD inline std::uint32_t reverse_bits32(std::uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}

// Burley (2020), listing 2: the Laine-Karras permutation with his improved
// constants. Adding and multiplying only carry upwards, so output bit b
// depends on input bits 0..b only.
STRATA_HD inline std::uint32_t laine_karras_permutation(std::uint32_t x, std::uint32_t seed) {
  x += seed;
  x ^= x * 0x6c50b47cu;
  x ^= x * 0xb82f1e52u;
  x ^= x * 0xc7afe638u;
  x ^= x * 0x8d22f6e6u;
  return x;
}

STRATA_HD inline std::uint32_t owen_scramble(std::uint32_t x, std::uint32_t seed) {
  return reverse_bits32(laine_karras_permutation(reverse_bits32(x), seed));
}

// A 32-bit point as a uniform in (0, 1): the centre of its 2^-32 cell, so
// neither 0 nor 1 reaches the normal quantile. Exact in double.
STRATA_HD inline double sobol_uniform(std::uint32_t x) { return (static_cast<double>(x) + 0.5) * 0x1p-32; }

}  // namespace strata::rng
