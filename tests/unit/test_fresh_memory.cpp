// Fresh Buffers are poisoned in test runs (engine/backend/fresh_memory.hpp),
// the same bytes on every backend, so a test that reads memory nothing
// wrote fails on the host as it would on a GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/backend/buffer.hpp"
#include "tests/support/test_support.hpp"

using namespace strata;

namespace {

template <class V>
std::vector<unsigned char> fresh_bytes(const Device& d, std::size_t n) {
  const Buffer<V> b(d, n);
  std::vector<V> host(n);
  b.copy_to_host(host.data(), n);
  std::vector<unsigned char> bytes(n * sizeof(V));
  std::memcpy(bytes.data(), host.data(), bytes.size());
  return bytes;
}

bool all_equal(const std::vector<unsigned char>& bytes, unsigned char b) {
  for (const unsigned char v : bytes)
    if (v != b) return false;
  return true;
}

}  // namespace

TEST_CASE("fresh Buffers hold the poison in test runs: NaN for floating types, 0xA5 bytes otherwise", "[backend]") {
  REQUIRE(poison_fresh_memory());
  CHECK(std::isnan(poison_value<double>()));
  CHECK(std::isnan(poison_value<float>()));
  CHECK(poison_value<int>() == static_cast<int>(0xA5A5A5A5u));
  for (const Device& d : test::devices()) {
    INFO(to_string(d.backend));
    // Sizes on both sides of Buffer's huge-page threshold (2 MiB).
    for (const std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{300'000}}) {
      CHECK(all_equal(fresh_bytes<double>(d, n), 0xFF));
      CHECK(all_equal(fresh_bytes<float>(d, n), 0xFF));
      CHECK(all_equal(fresh_bytes<int>(d, n), 0xA5));
      CHECK(all_equal(fresh_bytes<std::uint64_t>(d, n), 0xA5));
    }
  }
}
