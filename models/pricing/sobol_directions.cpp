#include "models/pricing/sobol_directions.hpp"

#include <boost/random/detail/sobol_table.hpp>
#include <stdexcept>
#include <string>

#include "kernels/rng/sobol.hpp"

namespace strata::pricing {

namespace {
using Table = boost::random::detail::qrng_tables::sobol;
}

int sobol_max_dimensions() { return static_cast<int>(Table::max_dimension); }

std::vector<std::uint32_t> sobol_direction_table(int dims) {
  if (dims < 1 || dims > sobol_max_dimensions())
    throw std::out_of_range("Sobol' points in " + std::to_string(dims) + " dimensions: the direction-number table has " +
                            std::to_string(sobol_max_dimensions()));
  std::vector<std::uint32_t> v(static_cast<std::size_t>(dims) * rng::kSobolBits);
  rng::sobol_directions(0, 0, nullptr, v.data());
  for (int d = 1; d < dims; ++d) {
    // Boost's polynomial: bit i is the coefficient of z^i, the degree s its
    // top bit; Joe & Kuo's a is the s - 1 bits between the two ends.
    const std::uint32_t poly = Table::polynomial(static_cast<std::size_t>(d - 1));
    unsigned s = 0;
    while ((poly >> (s + 1)) != 0) ++s;
    const std::uint32_t a = (poly >> 1) & ((1u << (s - 1)) - 1u);
    std::uint32_t m[rng::kSobolBits] = {};
    for (unsigned k = 0; k < s; ++k) m[k] = Table::minit(static_cast<std::size_t>(d - 1), k);
    rng::sobol_directions(s, a, m, v.data() + static_cast<std::size_t>(d) * rng::kSobolBits);
  }
  return v;
}

}  // namespace strata::pricing
