#include "engine/backend/primitives.hpp"
#include "engine/backend/shape_counts.hpp"

#include <cstring>
#include <utility>

namespace strata {

int exclusive_scan(const Device& device, const int* in, int* out, std::int64_t n) {
  if (n <= 0) return 0;
  // CUB's scan (two launches), a one-thread launch summing the last input
  // and output, and that total read back.
  shape::launch(n, {static_cast<double>(2 * n * sizeof(int)), 0});
  shape::launch(n);
  shape::launch(1);
  shape::wait();
  shape::to_host(sizeof(int));
  if (device.on_cuda()) return cuda::exclusive_scan(in, out, n);
  int sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    out[i] = sum;
    sum += in[i];
  }
  return sum;
}

// The host: a least-significant-digit radix sort, 8 bits a pass (each pass
// a stable counting sort, so the whole is stable, as CUB's), alternating
// between the two pairs of arrays.
void sort_pairs(const Device& device, std::uint64_t* keys, int* values, std::uint64_t* keys_out, int* values_out,
                std::int64_t n, int bits) {
  if (n <= 0) return;
  // CUB's radix sort: a histogram, an exclusive sum of it, one pass each 8 bits.
  const double pass_bytes = 2.0 * static_cast<double>(n) * (sizeof(std::uint64_t) + sizeof(int));
  shape::launch(n, {pass_bytes / 2, 0});
  shape::launch(256);
  for (int shift = 0; shift < bits; shift += 8) shape::launch(n, {pass_bytes, 0});
  if (device.on_cuda()) return cuda::sort_pairs(keys, values, keys_out, values_out, n, bits);
  std::uint64_t *from_k = keys, *to_k = keys_out;
  int *from_v = values, *to_v = values_out;
  for (int shift = 0; shift < bits; shift += 8) {
    std::int64_t start[257] = {};
    for (std::int64_t i = 0; i < n; ++i) ++start[((from_k[i] >> shift) & 255) + 1];
    for (int d = 0; d < 256; ++d) start[d + 1] += start[d];
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t at = start[(from_k[i] >> shift) & 255]++;
      to_k[at] = from_k[i];
      to_v[at] = from_v[i];
    }
    std::swap(from_k, to_k);
    std::swap(from_v, to_v);
  }
  if (from_k != keys_out) {
    std::memcpy(keys_out, from_k, static_cast<std::size_t>(n) * sizeof(std::uint64_t));
    std::memcpy(values_out, from_v, static_cast<std::size_t>(n) * sizeof(int));
  }
}

}  // namespace strata
