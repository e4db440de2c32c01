// The device health sampler (health.device_every_seconds): a background
// thread on each rank that reads its GPU's utilization, memory, temperature,
// power, SM clock, clock-event (throttle) reasons and ECC counts through
// NVML every interval, for /health/<rank> of the output and for warnings on
// the progress line ("was the GPU idle during I/O?" is then answered from
// the file).
//
// NVML is loaded from the driver at run time (dlopen of libnvidia-ml.so.1),
// never linked: strata starts on machines without a driver, and there, on
// the host backend, or with the interval 0, the sampler is quietly absent
// and /health is not written. STRATA_TEST_FAKE_NVML=1 (tests only) samples
// a synthetic device instead, so the layout and the warnings are tested
// on machines without a GPU.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace strata {

class MpiContext;
class H5Output;
struct Device;

struct HealthSample {
  double time = 0;                      // seconds since the sampler started
  double gpu_utilization = 0;           // percent of the interval a kernel ran (NVML's definition)
  double memory_utilization = 0;        // percent of the interval device memory was read or written
  double memory_used = 0;               // bytes
  double temperature = 0;               // degrees C
  double power = 0;                     // W
  double sm_clock = 0;                  // MHz
  std::int64_t clock_event_reasons = 0; // NVML's bitmask (0x20/0x40 thermal, 0x4/0x80 power, 0x8 hardware)
  std::int64_t ecc_corrected = 0;       // volatile totals since the driver loaded; -1 where ECC is off
  std::int64_t ecc_uncorrected = 0;
};

// Bits of DeviceHealth::take_events(), max-reduced across ranks.
enum HealthEvent : int { kThrottled = 1, kNewEcc = 2 };

// `strata doctor`: the MIG mode of the GPU at `pci_bus_id`, as NVML reports it.
std::string mig_mode_text(const std::string& pci_bus_id);

class DeviceHealth {
 public:
  // Starts sampling when `every_seconds` > 0 and the rank has a GPU that
  // NVML knows (or the test switch is set); otherwise inactive.
  DeviceHealth(const Device& device, double every_seconds);
  ~DeviceHealth();
  DeviceHealth(const DeviceHealth&) = delete;
  DeviceHealth& operator=(const DeviceHealth&) = delete;

  bool active() const { return thread_.joinable(); }
  // HealthEvent bits seen since the last call (throttling for a reason other
  // than idling or clock settings; ECC counts that grew).
  int take_events();
  // Collective: one more sample, then /health/<rank> for every rank that
  // sampled (all ranks take part; a rank without samples writes none).
  void write(H5Output& out, const MpiContext& mpi);

  // What the progress line says about `events` (empty for none).
  static std::string describe(int events);

  struct Source;   // NVML, or the test's synthetic device (device_health.cpp)

 private:
  void loop();
  void sample_now();

  std::unique_ptr<Source> source_;
  double every_seconds_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;        // samples_, events_, stop_
  std::mutex read_mutex_;   // source_
  std::condition_variable wake_;
  bool stop_ = false;
  int events_ = 0;
  std::vector<HealthSample> samples_;
  std::string device_name_;
  std::thread thread_;
};

}  // namespace strata
