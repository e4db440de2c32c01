// printf-style text as a std::string, for console lines and messages whose
// numbers want printf's widths and precisions (%.6g, %-+.12e): no fixed
// buffer to size or truncate, and the compiler checks the format.
#pragma once

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>

namespace strata {

[[gnu::format(printf, 1, 2)]] inline std::string format(const char* fmt, ...) {
  va_list args, again;
  va_start(args, fmt);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string text(static_cast<std::size_t>(std::max(n, 0)), '\0');
  std::vsnprintf(text.data(), text.size() + 1, fmt, again);
  va_end(again);
  return text;
}

}  // namespace strata
