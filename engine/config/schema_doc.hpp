// The schema as text: `strata models NAME` and the generated docs/inputs.md.
#pragma once

#include <string>

#include "engine/config/schema.hpp"

namespace strata {

std::string schema_text(const Schema& s);       // for a terminal
std::string schema_markdown(const Schema& s);   // one table per TOML table

}  // namespace strata
