// Host tests for kernels/rng: Philox4x32-10 known answers, cuRAND-compatible
// stream addressing, uniform maps and Box-Muller normals.
// The bit-for-bit comparison against cuRAND itself lives in
// tests/gpu/test_curand_philox.cu (it needs a device).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/rng/normal.hpp"
#include "kernels/rng/philox.hpp"

using strata::rng::philox4x32_10;
using strata::rng::philox_counter;
using strata::rng::philox_key;
using strata::rng::PhiloxCounter;
using strata::rng::PhiloxKey;
using strata::rng::PhiloxStream;

namespace {

// Element `offset` of `subsequence` straight from the layout cuRAND's
// curand_init produces, written out word by word so that a mistake in
// philox_counter or philox_key cannot hide behind itself.
std::uint32_t element_by_layout(std::uint64_t seed, std::uint64_t subsequence, std::uint64_t offset) {
  const std::uint64_t block = offset / 4;
  const PhiloxCounter ctr{{static_cast<std::uint32_t>(block & 0xFFFFFFFFu), static_cast<std::uint32_t>(block >> 32),
                           static_cast<std::uint32_t>(subsequence & 0xFFFFFFFFu),
                           static_cast<std::uint32_t>(subsequence >> 32)}};
  const PhiloxKey key{{static_cast<std::uint32_t>(seed & 0xFFFFFFFFu), static_cast<std::uint32_t>(seed >> 32)}};
  return philox4x32_10(ctr, key).v[offset % 4];
}

bool same(const PhiloxCounter& a, const PhiloxCounter& b) {
  return a.v[0] == b.v[0] && a.v[1] == b.v[1] && a.v[2] == b.v[2] && a.v[3] == b.v[3];
}

constexpr std::uint64_t kSeeds[] = {0ull, 1ull, 0x0123456789ABCDEFull, 0xFFFFFFFFFFFFFFFFull};
constexpr std::uint64_t kSubsequences[] = {0ull, 7ull, 0x00000000FFFFFFFFull, 0xFEDCBA9876543210ull,
                                           0xFFFFFFFFFFFFFFFFull};

}  // namespace

TEST_CASE("philox4x32_10 reproduces the Random123 known-answer vectors", "[rng][philox]") {
  // Random123 tests/kat_vectors, the three lines "philox4x32 10 <ctr[4]>
  // <key[2]> <expected[4]>" (D. E. Shaw Research); the same lines are
  // pasted into DEShawResearch/Random123-Boost
  // libs/random/test/test_philox.cpp, test_kat_philox4x32.
  struct Kat {
    PhiloxCounter ctr;
    PhiloxKey key;
    PhiloxCounter expected;
  };
  const Kat kats[] = {
      {{{0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u}},
       {{0x00000000u, 0x00000000u}},
       {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
       {{0xffffffffu, 0xffffffffu}},
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
       {{0xa4093822u, 0x299f31d0u}},
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Kat& kat : kats) {
    const PhiloxCounter out = philox4x32_10(kat.ctr, kat.key);
    for (int i = 0; i < 4; ++i) CHECK(out.v[i] == kat.expected.v[i]);
  }
}

TEST_CASE("philox_key and philox_counter follow curand_init's layout", "[rng][philox]") {
  const PhiloxKey key = philox_key(0x0123456789ABCDEFull);
  CHECK(key.v[0] == 0x89ABCDEFu);
  CHECK(key.v[1] == 0x01234567u);

  const PhiloxCounter ctr = philox_counter(0xFEDCBA9876543210ull, 0x00000001DEADBEEFull);
  CHECK(ctr.v[0] == 0xDEADBEEFu);
  CHECK(ctr.v[1] == 0x00000001u);
  CHECK(ctr.v[2] == 0x76543210u);
  CHECK(ctr.v[3] == 0xFEDCBA98u);

  // curand_init(0, 0, 0) starts at counter 0 with key 0: the first KAT.
  PhiloxStream s(0, 0, 0);
  CHECK(s.next_u32() == 0x6627e8d5u);
  CHECK(s.next_u32() == 0xe169c58du);
  CHECK(s.next_u32() == 0xbc57ac4cu);
  CHECK(s.next_u32() == 0x9b00dbd8u);

  const std::uint64_t offsets[] = {
      0ull, 1ull, 2ull, 3ull, 5ull, 4ull * 0xFFFFFFFFull + 3ull, 4ull * 0x100000000ull + 1ull, 0xFFFFFFFFFFFFFFFFull};
  for (const std::uint64_t seed : kSeeds) {
    for (const std::uint64_t sub : kSubsequences) {
      for (const std::uint64_t off : offsets) {
        PhiloxStream stream(seed, sub, off);
        CHECK(stream.next_u32() == element_by_layout(seed, sub, off));
      }
    }
  }
}

TEST_CASE("PhiloxStream(seed, sub, offset) equals the stream from offset 0 advanced offset times", "[rng][philox]") {
  constexpr int kDraws = 64;
  for (const std::uint64_t seed : kSeeds) {
    for (const std::uint64_t sub : kSubsequences) {
      PhiloxStream from_zero(seed, sub, 0);
      for (std::uint64_t off = 0; off < 10; ++off) {
        PhiloxStream reference = from_zero;  // reference sits at `off`
        PhiloxStream direct(seed, sub, off);
        for (int i = 0; i < kDraws; ++i) REQUIRE(direct.next_u32() == reference.next_u32());
        from_zero.next_u32();
      }
    }
  }

  SECTION("a large offset that is not a multiple of 4") {
    constexpr std::uint64_t kOffset = 1000003;
    PhiloxStream advanced(0x0123456789ABCDEFull, 42, 0);
    for (std::uint64_t i = 0; i < kOffset; ++i) advanced.next_u32();
    PhiloxStream direct(0x0123456789ABCDEFull, 42, kOffset);
    for (int i = 0; i < kDraws; ++i) REQUIRE(direct.next_u32() == advanced.next_u32());
  }

  SECTION("stepping across block 2^32 carries counter word 0 into word 1") {
    // Advancing 4 * 2^32 single draws from 0 is too slow for a unit test;
    // instead start a few draws before the boundary and check every
    // position on both sides against a directly constructed stream and
    // against the layout.
    constexpr std::uint64_t kBoundary = 4ull << 32;  // first element of block 2^32
    for (const std::uint64_t seed : kSeeds) {
      for (const std::uint64_t sub : kSubsequences) {
        for (std::uint64_t start = kBoundary - 7; start <= kBoundary; ++start) {
          PhiloxStream walker(seed, sub, start);
          for (std::uint64_t k = 0; k < 16; ++k) {
            const std::uint64_t pos = start + k;
            PhiloxStream direct(seed, sub, pos);
            const std::uint32_t w = walker.next_u32();
            REQUIRE(w == direct.next_u32());
            REQUIRE(w == element_by_layout(seed, sub, pos));
          }
        }
      }
    }
    const PhiloxKey key = philox_key(5);
    const PhiloxCounter after{{0u, 1u, 9u, 0u}};
    PhiloxStream s(5, 9, kBoundary - 1);
    s.next_u32();
    CHECK(s.next_u32() == philox4x32_10(after, key).v[0]);
  }
}

TEST_CASE("the stream counter carries through all 128 bits, as cuRAND's Philox_State_Incr", "[rng][philox]") {
  const PhiloxKey key = philox_key(0x9E3779B97F4A7C15ull);
  const std::uint64_t last_block = 0xFFFFFFFFFFFFFFFFull;

  SECTION("the last block of a subsequence is followed by block 0 of the next") {
    for (const std::uint64_t sub : {0ull, 41ull, 0x00000000FFFFFFFFull, 0x7FFFFFFFFFFFFFFFull}) {
      PhiloxStream s(key, philox_counter(sub, last_block), 2);
      const PhiloxCounter last = philox4x32_10(philox_counter(sub, last_block), key);
      const PhiloxCounter next = philox4x32_10(philox_counter(sub + 1, 0), key);
      CHECK(s.next_u32() == last.v[2]);
      CHECK(s.next_u32() == last.v[3]);
      for (int i = 0; i < 4; ++i) CHECK(s.next_u32() == next.v[i]);
    }
  }

  SECTION("the all-ones counter wraps to zero") {
    // With key 0 the block after counter 2^128 - 1 is counter 0: the first
    // known-answer vector.
    PhiloxStream s(PhiloxKey{{0u, 0u}}, PhiloxCounter{{~0u, ~0u, ~0u, ~0u}}, 0);
    for (int i = 0; i < 4; ++i) s.next_u32();
    const PhiloxCounter w = s.next4();
    CHECK(w.v[0] == 0x6627e8d5u);
    CHECK(w.v[1] == 0xe169c58du);
    CHECK(w.v[2] == 0xbc57ac4cu);
    CHECK(w.v[3] == 0x9b00dbd8u);
  }

  SECTION("the counter constructor reaches the all-ones known answer") {
    PhiloxStream s(PhiloxKey{{~0u, ~0u}}, PhiloxCounter{{~0u, ~0u, ~0u, ~0u}}, 0);
    const PhiloxCounter w = s.next4();
    CHECK(w.v[0] == 0x408f276du);
    CHECK(w.v[3] == 0x6d5451fdu);
  }
}

TEST_CASE("next4 returns the next four words from any starting word, as curand4", "[rng][philox]") {
  for (std::uint64_t off = 0; off < 8; ++off) {
    PhiloxStream by_four(77, 3, off);
    PhiloxStream by_one(77, 3, off);
    for (int call = 0; call < 10; ++call) {
      const PhiloxCounter w = by_four.next4();
      PhiloxCounter expected{};
      for (int i = 0; i < 4; ++i) expected.v[i] = by_one.next_u32();
      REQUIRE(same(w, expected));
    }
    // Both must also stay in step afterwards.
    REQUIRE(by_four.next_u32() == by_one.next_u32());
  }
}

TEST_CASE("stream uniforms apply the cuRAND maps to successive words", "[rng][uniform]") {
  PhiloxStream words(123, 456, 789);
  PhiloxStream floats(123, 456, 789);
  PhiloxStream doubles(123, 456, 789);
  for (int i = 0; i < 256; ++i) {
    const std::uint32_t w = words.next_u32();
    REQUIRE(floats.next_uniform() == strata::rng::uniform_float(w));
    REQUIRE(doubles.next_uniform_double() == strata::rng::uniform_double_32(w));
  }
}

TEST_CASE("uniform maps are exactly cuRAND's and lie in (0, 1]", "[rng][uniform]") {
  using strata::rng::uniform_double;
  using strata::rng::uniform_double_32;
  using strata::rng::uniform_float;

  // curand_globals.h spells 2^-32 and 2^-53 in decimal; both literals must
  // round to the exact powers of two for the maps below to be exact.
  REQUIRE(2.3283064e-10f == 0x1p-32f);
  REQUIRE(2.3283064365386963e-10 == 0x1p-32);
  REQUIRE(1.1102230246251565e-16 == 0x1p-53);

  std::vector<std::uint32_t> xs;
  for (std::uint32_t i = 0; i < 4096; ++i) {
    xs.push_back(i);
    xs.push_back(0xFFFFFFFFu - i);
    xs.push_back(0x80000000u + i * 0x9E3779B9u);
  }
  for (const std::uint32_t x : xs) {
    // _curand_uniform(x), curand_uniform.h: x * CURAND_2POW32_INV + (CURAND_2POW32_INV/2.0f)
    const float f = uniform_float(x);
    REQUIRE(f == static_cast<float>(x) * 2.3283064e-10f + (2.3283064e-10f / 2.0f));
    REQUIRE(f > 0.0f);
    REQUIRE(f <= 1.0f);
    // _curand_uniform_double(x): x * CURAND_2POW32_INV_DOUBLE + CURAND_2POW32_INV_DOUBLE
    const double d = uniform_double_32(x);
    REQUIRE(d == static_cast<double>(x) * 2.3283064365386963e-10 + 2.3283064365386963e-10);
    REQUIRE(d > 0.0);
    REQUIRE(d <= 1.0);
    // _curand_uniform_double_hq(x, y): z = x ^ (y << 21); z * 2^-53 + 2^-53 / 2
    const std::uint32_t y = x * 0x85EBCA6Bu;
    const std::uint64_t z = static_cast<std::uint64_t>(x) ^ (static_cast<std::uint64_t>(y) << 21);
    const double h = uniform_double(x, y);
    REQUIRE(h == static_cast<double>(z) * 1.1102230246251565e-16 + (1.1102230246251565e-16 / 2.0));
    REQUIRE(h > 0.0);
    REQUIRE(h <= 1.0);
  }

  SECTION("endpoints") {
    CHECK(uniform_float(0u) == 0x1p-33f);
    // (float)0xFFFFFFFF rounds up to 2^32, so the product is 1 and adding
    // 2^-33 (below half an ulp of 1) leaves 1.
    CHECK(uniform_float(0xFFFFFFFFu) == 1.0f);
    CHECK(uniform_float(0xFFFFFF80u) == 1.0f);  // smallest x that rounds to 2^32
    CHECK(uniform_float(0xFFFFFF7Fu) < 1.0f);
    CHECK(uniform_double_32(0u) == 0x1p-32);
    CHECK(uniform_double_32(0xFFFFFFFFu) == 1.0);
    CHECK(uniform_double(0u, 0u) == 0x1p-54);
    // z = 2^53 - 1 needs y's low 11 bits to cancel x's bits 21..31.
    CHECK(uniform_double(0xFFFFFFFFu, 0xFFFFF800u) == 1.0);
    CHECK(uniform_double(0xFFFFFFFFu, 0xFFFFFFFFu) < 1.0);
  }
}

TEST_CASE("philox_normal(key, sub, i) is component i % per_call of philox_normals", "[rng][normal]") {
  const PhiloxKey key = philox_key(2024);
  for (const std::uint64_t sub : {0ull, 3ull, 0xFFFFFFFFFFFFFFFFull}) {
    for (std::uint64_t call = 0; call < 16; ++call) {
      float f[strata::rng::NormalsPerCall<float>::value];
      strata::rng::philox_normals<float>(key, sub, call, f);
      for (unsigned c = 0; c < strata::rng::NormalsPerCall<float>::value; ++c)
        REQUIRE(strata::rng::philox_normal<float>(key, sub, call * 4 + c) == f[c]);

      double d[strata::rng::NormalsPerCall<double>::value];
      strata::rng::philox_normals<double>(key, sub, call, d);
      for (unsigned c = 0; c < strata::rng::NormalsPerCall<double>::value; ++c)
        REQUIRE(strata::rng::philox_normal<double>(key, sub, call * 2 + c) == d[c]);
    }
  }
}

TEMPLATE_TEST_CASE("Box-Muller normals have the moments of N(0, 1)", "[rng][normal]", float, double) {
  // n = 2^20 draws. Under N(0, 1) the sample statistics below are
  // asymptotically normal with standard errors
  //   mean  m1 = <z>          : sqrt(1 / n)             (Var z = 1)
  //   m2 = <z^2>              : sqrt(2 / n)             (Var z^2 = E z^4 - 1 = 2)
  //   m4 = <z^4>              : sqrt(96 / n)            (Var z^4 = E z^8 - 9 = 105 - 9)
  //   pair correlation <z0 z1>: sqrt(1 / n_pairs)       (Var z0 z1 = 1)
  // We accept |statistic - expected| <= 5 standard errors. The key is
  // fixed, so the test is deterministic; z = 5 leaves a two-sided false
  // alarm rate of 6e-7 per statistic should the key ever change, while a
  // real defect (a wrong 2 pi, a uniform in [0, 1), a lost sign, mixed-up
  // words) moves these by tens to thousands of standard errors.
  constexpr double kZ = 5.0;
  constexpr std::uint64_t kN = 1ull << 20;
  constexpr unsigned kPer = strata::rng::NormalsPerCall<TestType>::value;
  const PhiloxKey key = philox_key(0x5DEECE66Dull);
  const std::uint64_t subsequence = 11;

  // |z| <= sqrt(-2 ln u_min): u_min = 2^-33 (float) or 2^-54 (double).
  const double u_min = sizeof(TestType) == 4 ? 0x1p-33 : 0x1p-54;
  const double z_max = std::sqrt(-2.0 * std::log(u_min)) * (1.0 + 1e-5);

  double m1 = 0.0, m2 = 0.0, m4 = 0.0, pair = 0.0;
  for (std::uint64_t call = 0; call < kN / kPer; ++call) {
    TestType z[kPer];
    strata::rng::philox_normals<TestType>(key, subsequence, call, z);
    for (unsigned c = 0; c < kPer; ++c) {
      const double x = z[c];
      REQUIRE(std::isfinite(x));
      REQUIRE(std::abs(x) <= z_max);
      m1 += x;
      m2 += x * x;
      m4 += x * x * x * x;
    }
    for (unsigned c = 0; c < kPer; c += 2) pair += static_cast<double>(z[c]) * z[c + 1];
  }
  const double n = static_cast<double>(kN);
  m1 /= n;
  m2 /= n;
  m4 /= n;
  pair /= n / 2.0;

  INFO("mean " << m1 << ", <z^2> " << m2 << ", <z^4> " << m4 << ", <z0 z1> " << pair);
  CHECK(std::abs(m1) <= kZ * std::sqrt(1.0 / n));
  CHECK(std::abs(m2 - 1.0) <= kZ * std::sqrt(2.0 / n));
  CHECK(std::abs(m4 - 3.0) <= kZ * std::sqrt(96.0 / n));
  CHECK(std::abs(pair) <= kZ * std::sqrt(2.0 / n));
}
