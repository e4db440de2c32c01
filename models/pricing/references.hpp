// Reference prices of instruments: closed forms where one exists, and a
// converged binomial tree for single-asset GBM Americans.
#pragma once

#include <optional>
#include <string>

#include "models/pricing/portfolio.hpp"

namespace strata::pricing {

struct Reference {
  double price = 0;
  std::string method;   // the formula and its source, as stored beside it
  // A bound on |price - exact value| for a numerical reference (a tree); 0
  // for a closed form, whose error is round-off.
  double error = 0;
};

// The reference for the instrument, or none (arithmetic Asians, discretely
// monitored lookbacks, Americans on several assets or under Heston or
// Merton).
std::optional<Reference> reference_for(const Portfolio& p, const Instrument& i);

}  // namespace strata::pricing
