// CUDA's exclusive scan and pair sort (primitives.hpp), through CUB; the
// temporary storage CUB asks for is kept and grown, one per process, as is
// the int the scan's total is summed into (one read back, one wait).
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

// The scan's total, out[n - 1] + in[n - 1], into *total: the host reads
// one int back instead of two (one wait, not two).
__global__ void scan_total(const int* in, const int* out, std::int64_t n, int* total) {
  *total = out[n - 1] + in[n - 1];
}

int* total_slot() {
  static int* slot = static_cast<int*>(allocate(sizeof(int)));
  return slot;
}
}  // namespace

int exclusive_scan(const int* in, int* out, std::int64_t n) {
  std::size_t bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, static_cast<int>(n));
  cub::DeviceScan::ExclusiveSum(scratch(bytes), bytes, in, out, static_cast<int>(n));
  int* const slot = total_slot();
  scan_total<<<1, 1>>>(in, out, n, slot);
  check_launch("exclusive_scan");
  int total = 0;
  copy_to_host(&total, slot, sizeof(int));
  return total;
}

void sort_pairs(std::uint64_t* keys, int* values, std::uint64_t* keys_out, int* values_out, std::int64_t n, int bits) {
  std::size_t bytes = 0;
  const int items = static_cast<int>(n);
  cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, keys_out, values, values_out, items, 0, bits);
  cub::DeviceRadixSort::SortPairs(scratch(bytes), bytes, keys, keys_out, values, values_out, items, 0, bits);
  check_launch("sort_pairs");
}

}  // namespace strata::cuda
