// CUDA's exclusive scan and pair sort (primitives.hpp), through CUB; the
// temporary storage CUB asks for is kept and grown, one per process.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "engine/backend/cuda_runtime.hpp"
#include "engine/backend/primitives.hpp"

namespace strata::cuda {
namespace {
void* scratch(std::size_t bytes) {
  static void* storage = nullptr;
  static std::size_t held = 0;
  if (bytes > held) {
    release(storage);
    storage = allocate(bytes);
    held = bytes;
  }
  return storage;
}
}  // namespace

int exclusive_scan(const int* in, int* out, std::int64_t n) {
  std::size_t bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, static_cast<int>(n));
  cub::DeviceScan::ExclusiveSum(scratch(bytes), bytes, in, out, static_cast<int>(n));
  check_launch("exclusive_scan");
  int last[2] = {0, 0};
  copy_to_host(&last[0], out + n - 1, sizeof(int));
  copy_to_host(&last[1], in + n - 1, sizeof(int));
  return last[0] + last[1];
}

void sort_pairs(std::uint64_t* keys, int* values, std::uint64_t* keys_out, int* values_out, std::int64_t n, int bits) {
  std::size_t bytes = 0;
  const int items = static_cast<int>(n);
  cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, keys_out, values, values_out, items, 0, bits);
  cub::DeviceRadixSort::SortPairs(scratch(bytes), bytes, keys, keys_out, values, values_out, items, 0, bits);
  check_launch("sort_pairs");
}

}  // namespace strata::cuda
