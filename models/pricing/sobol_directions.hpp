// Sobol' direction numbers for kernels/rng/sobol.hpp, from a maintained
// table rather than typed in: Joe & Kuo's new-joe-kuo-6 primitive
// polynomials and initial m's as Boost.Random ships them
// (boost/random/detail/sobol_table.hpp, Debian's libboost-dev; 3667
// dimensions).
#pragma once

#include <cstdint>
#include <vector>

namespace strata::pricing {

// The most dimensions the table holds.
int sobol_max_dimensions();

// Direction numbers of dimensions 0..dims-1, 32 per dimension
// (dimension-major: v[32 d + k]). Throws std::out_of_range beyond
// sobol_max_dimensions().
std::vector<std::uint32_t> sobol_direction_table(int dims);

}  // namespace strata::pricing
