// The device side of the layout guard (cmake/strata_layout.cmake): a kernel
// per kernel-list entry that takes the entry by value and hands each leaf,
// in member order, to an empty inline-assembly statement. In the PTX every
// leaf is then a load from the kernel parameter at the offset the device
// code uses, followed by a "// strata-leaf %reg" mark naming the register
// it went to; scripts/gpu/layout-guard follows each mark back to its load.
#pragma once

#include <cstdint>
#include <type_traits>

#include "engine/backend/layout_probe.hpp"

namespace strata::layout {

struct DeviceMarks {
  template <class M>
  __device__ void enter(int) {}
  __device__ void leave() {}
  template <class L>
  __device__ void leaf(const L& x) {
    if constexpr (std::is_pointer_v<L>) {
      asm volatile("// strata-leaf %0" ::"l"(reinterpret_cast<std::uint64_t>(x)));
    } else if constexpr (std::is_same_v<L, double>) {
      asm volatile("// strata-leaf %0" ::"d"(x));
    } else if constexpr (std::is_same_v<L, float>) {
      asm volatile("// strata-leaf %0" ::"f"(x));
    } else if constexpr (sizeof(L) == 8) {
      asm volatile("// strata-leaf %0" ::"l"(static_cast<std::uint64_t>(x)));
    } else {
      static_assert(sizeof(L) <= 4, "a leaf of this size has no inline-assembly operand");
      asm volatile("// strata-leaf %0" ::"r"(static_cast<std::uint32_t>(x)));
    }
  }
};

template <class T>
__global__ void probe(T entry) {
  DeviceMarks marks;
  for_each_leaf(entry, marks);
}

}  // namespace strata::layout
