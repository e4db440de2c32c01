// A Buffer's values on their way to the host while the kernels after it
// run (an output frame, say). start() takes the values as they are when
// the kernels sent before it have finished; wait() returns them on the host.
//
// On CUDA, start() snapshots the buffer on the device, on the default
// stream, so the next kernels may overwrite the source at once, and copies
// the snapshot on a stream of its own into page-locked host memory (from
// pageable memory the driver stages the copy and it does not overlap).
// wait() fences that stream and may be called from another thread (the
// background writer). On the host start() is the copy and wait() returns.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/backend/buffer.hpp"

namespace strata {

template <class T>
class HostCopy {
 public:
  explicit HostCopy(const Device& device) : device_(device), stream_(device) {}
  ~HostCopy() { cuda::release_pinned(pinned_); }
  HostCopy(const HostCopy&) = delete;
  HostCopy& operator=(const HostCopy&) = delete;

  // The first `count` values of `source`. The previous copy must have been
  // waited for.
  void start(const Buffer<T>& source, std::size_t count) {
    count_ = count;
    if (!device_.on_cuda()) {
      host_.resize(count);
      source.copy_to_host(host_.data(), count);
      return;
    }
    if (snapshot_.size() < count) {
      snapshot_ = Buffer<T>(device_, count);
      cuda::release_pinned(pinned_);
      pinned_ = nullptr;
      pinned_ = static_cast<T*>(cuda::allocate_pinned(count * sizeof(T)));
    }
    cuda::copy_on_device(snapshot_.data(), source.data(), count * sizeof(T));
    stream_.after_default();
    snapshot_.copy_to_host(pinned_, count, stream_);
  }

  // The values start() took (count of them), once they have arrived.
  const T* wait() const {
    if (!device_.on_cuda()) return host_.data();
    cuda::set_device(device_.ordinal);   // the calling thread's device: the stream's
    stream_.fence();
    return pinned_;
  }
  std::size_t size() const { return count_; }
  // Done with the values: the host's copy is freed (a whole field need not
  // stay between frames); the pinned buffer stays for the next copy.
  void release() { std::vector<T>().swap(host_); }

 private:
  Device device_;
  Stream stream_;
  std::vector<T> host_;
  Buffer<T> snapshot_;
  T* pinned_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace strata
