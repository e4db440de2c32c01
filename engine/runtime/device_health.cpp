#include "engine/runtime/device_health.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <utility>

#include "engine/backend/backend.hpp"
#include "engine/backend/cuda_runtime.hpp"
#include "engine/io/h5_output.hpp"
#include "engine/runtime/mpi_context.hpp"

namespace strata {

// What one sample reads: NVML through the driver, or the test's synthetic device.
struct DeviceHealth::Source {
  virtual ~Source() = default;
  virtual void read(HealthSample& s) = 0;
};

namespace {

// The few NVML entry points used, declared from NVML's API reference (its
// C ABI: return codes are int, 0 = NVML_SUCCESS; a device is an opaque
// pointer); the header is not needed to build strata.
using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlUtilization {
  unsigned gpu, memory;
};
struct NvmlMemory {
  unsigned long long total, free, used;
};
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlTemperatureGpu = 0;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlCorrected = 0, kNvmlUncorrected = 1, kNvmlVolatileEcc = 0;

class Nvml final : public DeviceHealth::Source {
 public:
  // Null where the library, a symbol or the device is missing.
  static std::unique_ptr<Nvml> open(const std::string& pci_bus_id) {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    auto n = std::unique_ptr<Nvml>(new Nvml(lib));
    if (!n->resolve() || n->init_() != kNvmlSuccess) return nullptr;
    n->initialized_ = true;
    if (n->by_pci_(pci_bus_id.c_str(), &n->device_) != kNvmlSuccess) return nullptr;
    return n;
  }
  ~Nvml() override {
    if (initialized_) shutdown_();
    dlclose(lib_);
  }

  // 1 MIG on, 0 off, -1 unknown (a GPU without MIG, or an older driver).
  int mig_mode() {
    unsigned current = 0, pending = 0;
    if (mig_ == nullptr || mig_(device_, &current, &pending) != kNvmlSuccess) return -1;
    return current != 0 ? 1 : 0;
  }

  void read(HealthSample& s) override {
    NvmlUtilization u{};
    if (utilization_(device_, &u) == kNvmlSuccess) {
      s.gpu_utilization = u.gpu;
      s.memory_utilization = u.memory;
    }
    NvmlMemory m{};
    if (memory_(device_, &m) == kNvmlSuccess) s.memory_used = static_cast<double>(m.used);
    unsigned v = 0;
    if (temperature_(device_, kNvmlTemperatureGpu, &v) == kNvmlSuccess) s.temperature = v;
    if (power_(device_, &v) == kNvmlSuccess) s.power = v / 1000.0;   // mW
    if (clock_(device_, kNvmlClockSm, &v) == kNvmlSuccess) s.sm_clock = v;
    unsigned long long r = 0;
    if (reasons_(device_, &r) == kNvmlSuccess) s.clock_event_reasons = static_cast<std::int64_t>(r);
    s.ecc_corrected = s.ecc_uncorrected = -1;
    if (ecc_(device_, kNvmlCorrected, kNvmlVolatileEcc, &r) == kNvmlSuccess) s.ecc_corrected = static_cast<std::int64_t>(r);
    if (ecc_(device_, kNvmlUncorrected, kNvmlVolatileEcc, &r) == kNvmlSuccess) {
      s.ecc_uncorrected = static_cast<std::int64_t>(r);
    }
  }

 private:
  explicit Nvml(void* lib) : lib_(lib) {}
  template <typename F>
  bool sym(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib_, name));
    return f != nullptr;
  }
  bool resolve() {
    sym(mig_, "nvmlDeviceGetMigMode");   // optional: GPUs before Ampere have none
    // Clock "event" reasons were "throttle" reasons before NVML 12.2.
    return sym(init_, "nvmlInit_v2") && sym(shutdown_, "nvmlShutdown") &&
           sym(by_pci_, "nvmlDeviceGetHandleByPciBusId_v2") && sym(utilization_, "nvmlDeviceGetUtilizationRates") &&
           sym(memory_, "nvmlDeviceGetMemoryInfo") && sym(temperature_, "nvmlDeviceGetTemperature") &&
           sym(power_, "nvmlDeviceGetPowerUsage") && sym(clock_, "nvmlDeviceGetClockInfo") &&
           sym(ecc_, "nvmlDeviceGetTotalEccErrors") &&
           (sym(reasons_, "nvmlDeviceGetCurrentClocksEventReasons") ||
            sym(reasons_, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  }

  void* lib_;
  bool initialized_ = false;
  NvmlDevice device_ = nullptr;
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  int (*by_pci_)(const char*, NvmlDevice*) = nullptr;
  int (*utilization_)(NvmlDevice, NvmlUtilization*) = nullptr;
  int (*memory_)(NvmlDevice, NvmlMemory*) = nullptr;
  int (*temperature_)(NvmlDevice, int, unsigned*) = nullptr;
  int (*power_)(NvmlDevice, unsigned*) = nullptr;
  int (*clock_)(NvmlDevice, int, unsigned*) = nullptr;
  int (*reasons_)(NvmlDevice, unsigned long long*) = nullptr;
  int (*ecc_)(NvmlDevice, int, int, unsigned long long*) = nullptr;
  int (*mig_)(NvmlDevice, unsigned*, unsigned*) = nullptr;
};

// STRATA_TEST_FAKE_NVML=1: sample k reads utilization 10 k % (capped at
// 100), 2^30 bytes used, 60 C, 300 W, 1980 MHz; hardware thermal slowdown
// (0x40) on sample 1 alone; one corrected ECC error from sample 2 on.
// STRATA_TEST_FAKE_NVML=idle: a healthy GPU that raises no warning: the
// reasons of one at rest and at work (idle 0x1; idle and application
// clocks 0x3; its power limit reached, 0x4; sync boost 0x10; display
// clocks 0x100; all of these at once), one after the other, and ECC
// counts the driver had before the run (7 corrected, 2 uncorrected) that
// never grow.
class FakeNvml final : public DeviceHealth::Source {
 public:
  explicit FakeNvml(bool healthy) : healthy_(healthy) {}
  void read(HealthSample& s) override {
    s.gpu_utilization = std::min(100.0, 10.0 * static_cast<double>(k_));
    s.memory_utilization = 5;
    s.memory_used = 1073741824.0;
    s.temperature = 60;
    s.power = 300;
    s.sm_clock = 1980;
    if (healthy_) {
      constexpr std::int64_t reasons[] = {0x1, 0x3, 0x4, 0x10, 0x100, 0x117};
      s.clock_event_reasons = reasons[k_ % 6];
      s.ecc_corrected = 7;
      s.ecc_uncorrected = 2;
    } else {
      s.clock_event_reasons = k_ == 1 ? 0x40 : 0;
      s.ecc_corrected = k_ >= 2 ? 1 : 0;
      s.ecc_uncorrected = 0;
    }
    ++k_;
  }

 private:
  bool healthy_;
  int k_ = 0;
};

}  // namespace

std::string mig_mode_text(const std::string& pci_bus_id) {
  auto nvml = Nvml::open(pci_bus_id);
  if (!nvml) return "unknown (NVML not loaded: no NVIDIA driver library)";
  const int m = nvml->mig_mode();
  return m < 0 ? "not supported" : m == 1 ? "enabled" : "disabled";
}

int HealthEvents::add(const HealthSample& s) {
  int events = (s.clock_event_reasons & kClockSlowdownReasons) != 0 ? kThrottled : 0;
  for (auto [count, highest] : {std::pair{s.ecc_corrected, &corrected_}, std::pair{s.ecc_uncorrected, &uncorrected_}}) {
    if (count < 0) continue;
    if (*highest >= 0 && count > *highest) events |= kNewEcc;
    *highest = std::max(*highest, count);
  }
  return events;
}

DeviceHealth::DeviceHealth(const Device& device, double every_seconds) : every_seconds_(every_seconds) {
  if (every_seconds <= 0) return;
  const char* fake = std::getenv("STRATA_TEST_FAKE_NVML");
  if (fake != nullptr && (std::strcmp(fake, "1") == 0 || std::strcmp(fake, "idle") == 0)) {
    source_ = std::make_unique<FakeNvml>(std::strcmp(fake, "idle") == 0);
    device_name_ = "synthetic device (STRATA_TEST_FAKE_NVML)";
  } else if (device.ordinal >= 0) {
    source_ = Nvml::open(cuda::device_info(device.ordinal).pci_bus_id);
    device_name_ = device.name;
  }
  if (!source_) return;
  start_ = std::chrono::steady_clock::now();
  sample_now();
  thread_ = std::thread([this] { loop(); });
}

DeviceHealth::~DeviceHealth() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void DeviceHealth::sample_now() {
  // The sampler thread and write()'s last sample never read at once; the
  // step loop's take_events() waits for neither.
  std::lock_guard<std::mutex> reading(read_mutex_);
  HealthSample s;
  s.time = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  source_->read(s);
  std::lock_guard<std::mutex> lock(mutex_);
  events_ |= tracker_.add(s);
  samples_.push_back(s);
}

void DeviceHealth::loop() {
  const auto interval =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(every_seconds_));
  auto next = std::chrono::steady_clock::now() + interval;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (wake_.wait_until(lock, next, [this] { return stop_; })) return;
    }
    sample_now();
    next += interval;
  }
}

int DeviceHealth::take_events() {
  if (!source_) return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  const int e = events_;
  events_ = 0;
  return e;
}

std::vector<std::string> DeviceHealth::describe(int events) {
  std::vector<std::string> lines;
  if (events & kThrottled) {
    lines.emplace_back("a GPU's clocks are held back by a thermal, power-brake or hardware slowdown (NVML "
                       "clock-event reasons); see /health in the output");
  }
  if (events & kNewEcc) {
    lines.emplace_back("a GPU reported ECC errors it did not have when the run began; see /health in the output");
  }
  return lines;
}

void DeviceHealth::write(H5Output& out, const MpiContext& mpi) {
  std::vector<HealthSample> mine;
  if (source_) {
    sample_now();
    std::lock_guard<std::mutex> lock(mutex_);
    mine = samples_;
  }
  // Every rank's samples on every rank (a few KiB an hour each): H5Output's
  // tables are written collectively with rank 0's values.
  constexpr int kFields = 10;
  std::vector<double> flat;
  for (const HealthSample& s : mine) {
    const double row[kFields] = {s.time, s.gpu_utilization, s.memory_utilization, s.memory_used, s.temperature,
                                 s.power, s.sm_clock, static_cast<double>(s.clock_event_reasons),
                                 static_cast<double>(s.ecc_corrected), static_cast<double>(s.ecc_uncorrected)};
    flat.insert(flat.end(), row, row + kFields);
  }
  const int n = mpi.size();
  int count = static_cast<int>(flat.size());
  std::vector<int> counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, mpi.comm());
  std::exclusive_scan(counts.begin(), counts.end(), displs.begin(), 0);
  const int total = displs.back() + counts.back();
  std::vector<double> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(flat.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, mpi.comm());
  const auto names = mpi.gather_strings(device_name_);
  if (total == 0) return;   // no rank sampled: no /health

  // A restarted run's table is this process's samples; ranks beyond the
  // current count (an earlier run's) go.
  if (out.exists("/health")) out.remove("/health");
  out.group("/health");
  out.attribute("/health", "every_seconds", every_seconds_);
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const std::size_t rows = static_cast<std::size_t>(counts[r] / kFields);
    if (rows == 0) continue;
    const double* base = all.data() + displs[r];
    auto column = [&](std::size_t k) {
      std::vector<double> v(rows);
      for (std::size_t i = 0; i < rows; ++i) v[i] = base[i * kFields + k];
      return v;
    };
    auto integers = [&](std::size_t k) {
      std::vector<std::int64_t> v(rows);
      for (std::size_t i = 0; i < rows; ++i) v[i] = static_cast<std::int64_t>(base[i * kFields + k]);
      return v;
    };
    H5Table t;
    t.columns = {{"time", "s", column(0)},
                 {"gpu_utilization", "%", column(1)},
                 {"memory_utilization", "%", column(2)},
                 {"memory_used", "B", column(3)},
                 {"temperature", "degC", column(4)},
                 {"power", "W", column(5)},
                 {"sm_clock", "MHz", column(6)},
                 {"clock_event_reasons", "", integers(7)},
                 {"ecc_corrected", "", integers(8)},
                 {"ecc_uncorrected", "", integers(9)}};
    const std::string path = "/health/" + std::to_string(r);
    out.table(path, t);
    out.attribute(path, "device", names[r]);
  }
}

}  // namespace strata
