// What a fresh Buffer holds before anything writes to it. Fresh device
// memory holds whatever was there before, while the host's, zeroed by
// Buffer, would hide a kernel that reads memory nothing wrote: it would
// pass on the host and fail on a GPU. So Debug builds and the test suite
// poison fresh Buffers on both backends, the same bytes on each: 0xFF for
// floating types (a NaN in float and double), 0xA5 otherwise (no small
// count, no -1, no null pointer). Release runs zero host memory (that loop
// is also the NUMA first touch) and leave device memory as it comes.
#pragma once

#include <cstring>
#include <type_traits>

namespace strata {

// Whether fresh Buffers are poisoned: STRATA_POISON_FRESH_MEMORY=1 (or 0)
// in the environment, else on in a build with assertions (Debug).
// Read once, at the first call.
bool poison_fresh_memory();

template <class T>
inline constexpr unsigned char kPoisonByte = std::is_floating_point_v<T> ? 0xFF : 0xA5;

// A T whose every byte is kPoisonByte<T>.
template <class T>
T poison_value() {
  static_assert(std::is_trivially_copyable_v<T>);
  T v;
  std::memset(static_cast<void*>(&v), kPoisonByte<T>, sizeof v);
  return v;
}

}  // namespace strata
