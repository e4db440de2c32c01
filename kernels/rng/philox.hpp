// Philox4x32-10 counter-based random numbers, bit-compatible with cuRAND.
//
// The bijection is Philox4x32 with 10 rounds from Salmon, Moraes, Dror and
// Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3" (SC'11), as published
// in Random123. The addressing (PhiloxStream, philox_counter) and the
// uint32 -> floating point maps reproduce cuRAND's device API for
// curandStatePhilox4_32_10_t (curand_kernel.h, curand_philox4x32_x.h,
// curand_uniform.h, CUDA 13.0), so a stream built here from
// (seed, subsequence, offset) returns the same bits as
// curand_init(seed, subsequence, offset, &state) followed by curand(),
// curand4(), curand_uniform() or curand_uniform_double(), on host or device.
//
// cuRAND's stream layout, per seed:
//   key     = {lo32(seed), hi32(seed)}
//   counter = {lo32(block), hi32(block), lo32(subsequence), hi32(subsequence)}
//   element `offset` of a subsequence = word (offset % 4) of
//   philox4x32_10(counter with block = offset / 4, key).
// Stepping past the last word of a block adds 1 to the counter as one 128-bit
// integer, so block 2^64 - 1 of subsequence s is followed by block 0 of s + 1.
#pragma once

#include <cstdint>

#include "kernels/core/hd.hpp"

namespace strata::rng {

struct PhiloxCounter {
  std::uint32_t v[4];
};

struct PhiloxKey {
  std::uint32_t v[2];
};

namespace detail {

// Philox4x32 round constants (Salmon et al. 2011, section 3.3; Random123
// philox.h): multipliers M0, M1 and the Weyl key increments W0 (golden
// ratio) and W1 (sqrt(3) - 1), both scaled to 2^32.
inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;

STRATA_HD STRATA_FORCEINLINE std::uint32_t mulhi32(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(a) * b) >> 32);
#endif
}

// One Philox round (two 32x32 -> 64-bit multiplies, then the word
// permutation), in Random123's word order:
//   out = {hi(M1*c2) ^ c1 ^ k0, lo(M1*c2), hi(M0*c0) ^ c3 ^ k1, lo(M0*c0)}.
STRATA_HD STRATA_FORCEINLINE PhiloxCounter philox_round(PhiloxCounter c, PhiloxKey k) {
  const std::uint32_t hi0 = mulhi32(kPhiloxM0, c.v[0]);
  const std::uint32_t lo0 = kPhiloxM0 * c.v[0];
  const std::uint32_t hi1 = mulhi32(kPhiloxM1, c.v[2]);
  const std::uint32_t lo1 = kPhiloxM1 * c.v[2];
  return PhiloxCounter{{hi1 ^ c.v[1] ^ k.v[0], lo1, hi0 ^ c.v[3] ^ k.v[1], lo0}};
}

// Word i (0..3) of c. A chain of selects with constant indices keeps c in
// registers on the device; c.v[i] with a runtime i would force it into local
// memory (the reason cuRAND's curand() uses a switch).
STRATA_HD STRATA_FORCEINLINE std::uint32_t word_of(const PhiloxCounter& c, std::uint32_t i) {
  return i == 0u ? c.v[0] : i == 1u ? c.v[1] : i == 2u ? c.v[2] : c.v[3];
}

// counter += 1 as a 128-bit little-endian integer, wrapping at 2^128
// (cuRAND's Philox_State_Incr(state)).
STRATA_HD STRATA_FORCEINLINE void increment128(PhiloxCounter& c) {
  if (++c.v[0] != 0u) return;
  if (++c.v[1] != 0u) return;
  if (++c.v[2] != 0u) return;
  ++c.v[3];
}

}  // namespace detail

// Philox4x32 with 10 rounds; the key is bumped by (W0, W1) between rounds.
STRATA_HD inline PhiloxCounter philox4x32_10(PhiloxCounter ctr, PhiloxKey key) {
  ctr = detail::philox_round(ctr, key);
  for (int round = 1; round < 10; ++round) {
    key.v[0] += detail::kPhiloxW0;
    key.v[1] += detail::kPhiloxW1;
    ctr = detail::philox_round(ctr, key);
  }
  return ctr;
}

// The key cuRAND's curand_init derives from a 64-bit seed.
STRATA_HD inline PhiloxKey philox_key(std::uint64_t seed) {
  return PhiloxKey{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
}

// Counter of output block `block` (elements 4*block .. 4*block + 3) of
// `subsequence`, laid out as cuRAND's skipahead_sequence/skipahead leave it
// after curand_init.
STRATA_HD inline PhiloxCounter philox_counter(std::uint64_t subsequence, std::uint64_t block) {
  return PhiloxCounter{{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                        static_cast<std::uint32_t>(subsequence), static_cast<std::uint32_t>(subsequence >> 32)}};
}

// cuRAND's _curand_uniform: x * 2^-32 + 2^-33 in float arithmetic. The header
// spells 2^-32 as 2.3283064e-10f, which rounds to exactly 2^-32, so the
// product is exact and a fused multiply-add cannot change the result. Range
// [2^-33, 1]: every x >= 2^32 - 128 rounds to 2^32 on conversion and maps to 1.
STRATA_HD inline float uniform_float(std::uint32_t x) { return static_cast<float>(x) * 0x1p-32f + 0x1p-33f; }

// cuRAND's _curand_uniform_double_hq (53 random bits from two words):
// z = x ^ (y << 21) as a 53-bit integer, then z * 2^-53 + 2^-54 in double.
// Range [2^-54, 1]: z = 2^53 - 1 gives 1 - 2^-54, which rounds (ties to even)
// to 1. z is converted as its high 21 bits (y >> 11) times 2^32 plus its
// low 32 bits (x ^ (y << 21) in uint32): both terms and their sum are exact
// (below 2^53), so the value is that of converting z at once, but in a form
// that vectorises on AVX2, which has no 64-bit integer to double conversion.
STRATA_HD inline double uniform_double(std::uint32_t x, std::uint32_t y) {
  const double z = static_cast<double>(y >> 11) * 0x1p32 + static_cast<double>(x ^ (y << (53 - 32)));
  return z * 0x1p-53 + 0x1p-54;
}

// cuRAND's one-word _curand_uniform_double(unsigned int), which is what
// curand_uniform_double(curandStatePhilox4_32_10_t*) uses:
// x * 2^-32 + 2^-32 = (x + 1) * 2^-32, exact in double. Range [2^-32, 1];
// only 32 random bits.
STRATA_HD inline double uniform_double_32(std::uint32_t x) { return static_cast<double>(x) * 0x1p-32 + 0x1p-32; }

// Sequential view of one cuRAND Philox subsequence: a per-thread stream that
// replays curand_init + curand/curand4/curand_uniform/curand_uniform_double.
// Holds the current block's output so that draws within a block cost no
// Philox evaluation, exactly like curandStatePhilox4_32_10_t.
class PhiloxStream {
 public:
  // Same position as curand_init(seed, subsequence, offset, &state).
  STRATA_HD PhiloxStream(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t offset)
      : PhiloxStream(philox_key(seed), philox_counter(subsequence, offset / 4u),
                     static_cast<std::uint32_t>(offset % 4u)) {}

  // Positioned at word `word` (taken mod 4) of the block with counter
  // `block`; any 128-bit counter is allowed, e.g. to resume a stream.
  STRATA_HD PhiloxStream(PhiloxKey key, PhiloxCounter block, std::uint32_t word)
      : key_(key), ctr_(block), out_(philox4x32_10(block, key)), word_(word & 3u) {}

  // curand(&state).
  STRATA_HD std::uint32_t next_u32() {
    const std::uint32_t r = detail::word_of(out_, word_);
    if (++word_ == 4u) {
      advance_block();
      word_ = 0u;
    }
    return r;
  }

  // curand4(&state): the next four words, i.e. the same as four next_u32()
  // calls, from any starting word.
  STRATA_HD PhiloxCounter next4() {
    const PhiloxCounter current = out_;
    advance_block();
    PhiloxCounter r{};
    for (std::uint32_t k = 0; k < 4u; ++k) {
      const std::uint32_t j = word_ + k;
      r.v[k] = j < 4u ? detail::word_of(current, j) : detail::word_of(out_, j - 4u);
    }
    return r;
  }

  // curand_uniform(&state), in [2^-33, 1].
  STRATA_HD float next_uniform() { return uniform_float(next_u32()); }

  // curand_uniform_double(&state) for Philox: one word, in [2^-32, 1].
  STRATA_HD double next_uniform_double() { return uniform_double_32(next_u32()); }

 private:
  STRATA_HD void advance_block() {
    detail::increment128(ctr_);
    out_ = philox4x32_10(ctr_, key_);
  }

  PhiloxKey key_;
  PhiloxCounter ctr_;
  PhiloxCounter out_;
  std::uint32_t word_;
};

}  // namespace strata::rng
