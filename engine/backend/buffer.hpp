// An array owned on a Device: host memory for the host backend, device
// memory for CUDA. Kernels get the raw pointer; the host reads results back
// with copy_to_host: at once, or on a Stream (done at the stream's fence(),
// beside kernels on other streams). Move-only. A fresh Buffer holds zeros on
// the host and whatever the device had on CUDA, or, in Debug builds and
// tests, poison on both (engine/backend/fresh_memory.hpp): code must write
// what it reads.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/cuda_runtime.hpp"
#include "engine/backend/fresh_memory.hpp"
#include "engine/backend/shape_counts.hpp"

namespace strata {

template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Device& device, std::size_t count) : backend_(device.backend), size_(count) {
    if (count == 0) return;
    shape::allocation();
    if (backend_ == Backend::cuda) {
      data_ = static_cast<T*>(cuda::allocate(count * sizeof(T)));
      if (poison_fresh_memory()) cuda::fill_bytes(data_, kPoisonByte<T>, count * sizeof(T));
    } else {
      data_ = host_allocate(count);
    }
  }
  ~Buffer() { reset(); }
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    Buffer(std::move(o)).swap(*this);
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }

  // Elements [first, first + count).
  void copy_to_host(T* dst, std::size_t count, const Stream& stream = {}, std::size_t first = 0) const {
    if (count == 0) return;
    shape::to_host(count * sizeof(T));
    if (!stream.own()) shape::wait();
    if (backend_ == Backend::cuda) {
      cuda::copy_to_host(dst, data_ + first, count * sizeof(T), stream.handle());
    } else {
      std::memcpy(dst, data_ + first, count * sizeof(T));
    }
  }
  void copy_from_host(const T* src, std::size_t count, const Stream& stream = {}) {
    if (count == 0) return;
    shape::to_device(count * sizeof(T));
    if (!stream.own()) shape::wait();
    if (backend_ == Backend::cuda) {
      cuda::copy_to_device(data_, src, count * sizeof(T), stream.handle());
    } else {
      std::memcpy(data_, src, count * sizeof(T));
    }
  }

 private:
  void reset() {
    if (data_ == nullptr) return;
    shape::wait();   // cudaFree waits for the device
    if (backend_ == Backend::cuda) {
      cuda::release(data_);
    } else {
      std::free(data_);
    }
    data_ = nullptr;
  }
  // Zeroed (or poisoned) host memory. Large arrays are 2 MiB aligned and
  // asked for huge pages (the kernel's THP setting is often madvise-only),
  // and first touched by the OpenMP threads in static order, as the kernels
  // sweep them, so each page lands on the NUMA node of the thread that uses it.
  static T* host_allocate(std::size_t count) {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_default_constructible_v<T>);
    constexpr std::size_t kHuge = std::size_t(2) << 20;
    const std::size_t bytes = count * sizeof(T);
    const bool huge = bytes >= kHuge;
    const std::size_t align = huge ? kHuge : 64;
    void* p = std::aligned_alloc(align, (bytes + align - 1) / align * align);
    if (p == nullptr) throw std::bad_alloc();
    if (huge) (void)madvise(p, (bytes + align - 1) / align * align, MADV_HUGEPAGE);
    T* data = static_cast<T*>(p);
    const std::int64_t n = static_cast<std::int64_t>(count);
    const T fresh = poison_fresh_memory() ? poison_value<T>() : T();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) data[i] = fresh;
    return data;
  }
  void swap(Buffer& o) noexcept {
    std::swap(backend_, o.backend_);
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
  }

  Backend backend_ = Backend::host;
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace strata
