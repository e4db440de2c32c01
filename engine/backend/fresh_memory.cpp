#include "engine/backend/fresh_memory.hpp"

#include <cstdlib>
#include <string_view>

namespace strata {

namespace {
// On in a build with assertions (CMake's Debug), off in Release.
#ifdef NDEBUG
constexpr bool kPoisonByDefault = false;
#else
constexpr bool kPoisonByDefault = true;
#endif

bool poison_from_environment() {
  const char* v = std::getenv("STRATA_POISON_FRESH_MEMORY");
  if (v == nullptr || *v == '\0') return kPoisonByDefault;
  return std::string_view(v) != "0";
}
}  // namespace

bool poison_fresh_memory() {
  static const bool poison = poison_from_environment();
  return poison;
}

}  // namespace strata
