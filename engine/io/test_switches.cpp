#include "engine/io/test_switches.hpp"

#include <cstdlib>

#include "engine/runtime/error.hpp"

namespace strata::test_switches {

long long number(const char* name, const std::string& text) {
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos)
    throw InputError(std::string(name) + "=" + text + ": expected a non-negative integer");
  return std::stoll(text);
}

double output_delay() {
  const char* v = std::getenv("STRATA_TEST_OUTPUT_DELAY_MS");
  if (v == nullptr || *v == '\0') return 0.0;
  return 1e-3 * static_cast<double>(number("STRATA_TEST_OUTPUT_DELAY_MS", v));
}

}  // namespace strata::test_switches
