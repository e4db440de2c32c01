// A Buffer's values, or those a packing kernel gathers from it, on their
// way to the host while the kernels after it run (an output frame, say).
// start() takes the values as they are when the kernels sent before it have
// finished; wait() returns them on the host.
//
// On CUDA, start() snapshots the buffer on the device, on the default
// stream, so the next kernels may overwrite the source at once, and copies
// the snapshot on a stream of its own into page-locked host memory (from
// pageable memory the driver stages the copy and it does not overlap).
// wait() fences that stream and may be called from another thread (the
// background writer). On the host start() is the copy and wait() returns.
#pragma once

#include <cstddef>
#include <cstring>
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
    start_packed(count, [&](T* to) {
      // The snapshot: a device-to-device copy, counted as the kernel it costs.
      shape::launch(static_cast<std::int64_t>(count), {2.0 * static_cast<double>(count * sizeof(T)), 0});
      if (count == 0) return;
      if (device_.on_cuda()) {
        cuda::copy_on_device(to, source.data(), count * sizeof(T));
      } else {
        std::memcpy(to, source.data(), count * sizeof(T));
      }
    });
  }

  // The `count` values that pack(T* to) writes into `to` on the device
  // (kernels on the default stream), so that only what the host needs
  // leaves it: an output frame's owned cells, not its halos.
  template <class Pack>
  void start_packed(std::size_t count, const Pack& pack) {
    count_ = count;
    if (!device_.on_cuda()) {
      host_.resize(count);
      pack(host_.data());
      shape::to_host(count * sizeof(T));   // the copy on the stream CUDA makes (no wait here)
      return;
    }
    if (snapshot_.size() < count) {
      snapshot_ = Buffer<T>(device_, count);
      cuda::release_pinned(pinned_);
      pinned_ = nullptr;
      pinned_ = static_cast<T*>(cuda::allocate_pinned(count * sizeof(T)));
    }
    pack(snapshot_.data());
    stream_.after_default();
    snapshot_.copy_to_host(pinned_, count, stream_);   // counts its bytes
  }

  // The values start() took (count of them), once they have arrived.
  const T* wait() const {
    if (device_.on_cuda()) cuda::set_device(device_.ordinal);   // the calling thread's device: the stream's
    stream_.fence();   // nothing to wait for on the host, but counted as on CUDA
    return device_.on_cuda() ? pinned_ : host_.data();
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
