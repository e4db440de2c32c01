// Step counts are integers: a run of `span` model time in steps of `dt`
// takes ceil(span / dt) steps (the last one shortened to end exactly at
// span). Past 2^53 steps a step number is no longer exact as a double, so
// the clock step * dt repeats values and the count itself is beyond what
// the loop can be trusted with; a cast of a larger double to int64 is
// undefined (it gave one step of dt = span). Such inputs are refused.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace strata {

inline constexpr double kMaxSteps = 9007199254740992.0;   // 2^53

// ceil(span / dt) (at least 1), the relative 1e-12 forgiving a span that is
// a whole number of steps up to rounding; nothing when it is not finite or
// exceeds kMaxSteps.
inline std::optional<std::int64_t> step_count(double span, double dt) {
  const double steps = std::ceil(span / dt * (1 - 1e-12));
  if (!(steps <= kMaxSteps)) return std::nullopt;
  return steps < 1 ? std::int64_t{1} : static_cast<std::int64_t>(steps);
}

// Why `span` in steps of `dt` cannot be run, for Config::fail on the key
// that sets the span.
inline std::string step_count_problem(double span, double dt, const char* dt_what) {
  char text[320];
  std::snprintf(text, sizeof text,
                "%.6g in steps of %s = %.6g is %.3g steps, more than 2^53 (a step count must be an exact "
                "integer); shorten it or lengthen the step",
                span, dt_what, dt, span / dt);
  return text;
}

}  // namespace strata
