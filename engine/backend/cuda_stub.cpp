// The CUDA runtime entry points of a host-only build: no devices.
#include "engine/backend/cuda_runtime.hpp"
#include "engine/backend/primitives.hpp"
#include "engine/runtime/error.hpp"

namespace strata::cuda {
namespace {
[[noreturn]] void unavailable() {
  throw Error(ExitCode::bad_input, "this strata was built without the CUDA backend (configure with STRATA_CUDA=ON)");
}
}  // namespace

int device_count() { return 0; }
DeviceInfo device_info(int) { unavailable(); }
void set_device(int) { unavailable(); }
int driver_version() { return 0; }
int runtime_version() { return 0; }
std::size_t free_memory() { unavailable(); }
void* allocate(std::size_t) { unavailable(); }
void release(void*) noexcept {}
void fill_bytes(void*, unsigned char, std::size_t) { unavailable(); }
void* allocate_pinned(std::size_t) { unavailable(); }
void release_pinned(void*) noexcept {}
void copy_to_host(void*, const void*, std::size_t, void*) { unavailable(); }
void copy_to_device(void*, const void*, std::size_t, void*) { unavailable(); }
void copy_on_device(void*, const void*, std::size_t) { unavailable(); }
void synchronize() {}
void* stream_create() { unavailable(); }
void stream_destroy(void*) noexcept {}
void stream_after_default(void*) {}
void stream_synchronize(void*) {}
void check_launch(const char*) {}
DeviceProbe probe_device() { unavailable(); }
void range_push(const char*) noexcept {}
void range_pop() noexcept {}
int exclusive_scan(const int*, int*, std::int64_t) { unavailable(); }
void sort_pairs(std::uint64_t*, int*, std::uint64_t*, int*, std::int64_t, int) { unavailable(); }

}  // namespace strata::cuda
