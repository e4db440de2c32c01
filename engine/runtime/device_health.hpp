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
// and /health is not written. STRATA_TEST_FAKE_NVML=1 or =idle (tests
// only) samples a synthetic device instead (a GPU that slows down and
// reports a new ECC error; a healthy one at rest and at its power limit),
// so the layout and the warnings are tested on machines without a GPU.
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
  std::int64_t clock_event_reasons = 0; // NVML's bitmask (kClockSlowdownReasons)
  std::int64_t ecc_corrected = 0;       // volatile totals since the driver loaded; -1 where ECC is off
  std::int64_t ecc_uncorrected = 0;
};

// NVML's clock-event reasons (nvmlClocksEventReason*, "ClocksThrottleReason*"
// before NVML 12.2): GpuIdle 0x1, ApplicationsClocksSetting 0x2, SwPowerCap
// 0x4, HwSlowdown 0x8, SyncBoost 0x10, SwThermalSlowdown 0x20,
// HwThermalSlowdown 0x40, HwPowerBrakeSlowdown 0x80, DisplayClockSetting
// 0x100. Those that say the chip is held back by heat or failing power:
// the hardware slowdown, the thermal slowdowns and the power brake. The
// others are a healthy GPU at work or at rest: idle, clocks the user set,
// the board's power limit reached under full load, sync boost, display.
inline constexpr std::int64_t kClockSlowdownReasons = 0x8 | 0x20 | 0x40 | 0x80;

// Bits of DeviceHealth::take_events(), one flag each in the step loop's
// all-reduce (so any rank's event reaches every rank).
enum HealthEvent : int { kThrottled = 1, kNewEcc = 2 };
inline constexpr int kHealthEvents[] = {kThrottled, kNewEcc};

// The events a run's samples raise, fed one sample at a time: clocks held
// back (kClockSlowdownReasons), and ECC counts above the run's first
// reading. NVML's counts are totals since the driver loaded, so a count
// the GPU had when the run began is old news; each rise is reported once,
// and a failed read (-1) changes nothing.
class HealthEvents {
 public:
  int add(const HealthSample& s);

 private:
  std::int64_t corrected_ = -1, uncorrected_ = -1;   // the highest count read; -1: none yet
};

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

  // The warnings for `events`: one line of text per event, the same text
  // for the same event (so the progress line shows each once a minute).
  static std::vector<std::string> describe(int events);

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
  HealthEvents tracker_;
  std::vector<HealthSample> samples_;
  std::string device_name_;
  std::thread thread_;
};

}  // namespace strata
