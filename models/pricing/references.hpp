// Closed-form reference prices of instruments, where one exists.
#pragma once

#include <optional>
#include <string>

#include "models/pricing/portfolio.hpp"

namespace strata::pricing {

struct Reference {
  double price = 0;
  std::string method;   // the formula and its source, as stored beside it
};

// The closed form for the instrument, or none (arithmetic Asians,
// discretely monitored lookbacks).
std::optional<Reference> reference_for(const Portfolio& p, const Instrument& i);

}  // namespace strata::pricing
