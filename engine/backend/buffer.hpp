// An array owned on a Device: host memory for the host backend, device
// memory for CUDA. Kernels get the raw pointer; the host reads results back
// with copy_to_host. Move-only.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/cuda_runtime.hpp"

namespace strata {

template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Device& device, std::size_t count) : backend_(device.backend), size_(count) {
    if (count == 0) return;
    if (backend_ == Backend::cuda) {
      data_ = static_cast<T*>(cuda::allocate(count * sizeof(T)));
    } else {
      data_ = new T[count]();
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

  void copy_to_host(T* dst, std::size_t count) const {
    if (count == 0) return;
    if (backend_ == Backend::cuda) {
      cuda::copy_to_host(dst, data_, count * sizeof(T));
    } else {
      std::memcpy(dst, data_, count * sizeof(T));
    }
  }
  void copy_from_host(const T* src, std::size_t count) {
    if (count == 0) return;
    if (backend_ == Backend::cuda) {
      cuda::copy_to_device(data_, src, count * sizeof(T));
    } else {
      std::memcpy(data_, src, count * sizeof(T));
    }
  }

 private:
  void reset() {
    if (data_ == nullptr) return;
    if (backend_ == Backend::cuda) {
      cuda::release(data_);
    } else {
      delete[] data_;
    }
    data_ = nullptr;
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
