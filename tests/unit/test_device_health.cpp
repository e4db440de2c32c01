// What the device health sampler warns about, sample by sample: which of
// NVML's clock-event reasons mean a GPU is held back, and which ECC counts
// are new to the run.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "engine/runtime/device_health.hpp"

using namespace strata;

namespace {

HealthSample with_reasons(std::int64_t reasons) {
  HealthSample s;
  s.clock_event_reasons = reasons;
  return s;
}

HealthSample with_ecc(std::int64_t corrected, std::int64_t uncorrected) {
  HealthSample s;
  s.ecc_corrected = corrected;
  s.ecc_uncorrected = uncorrected;
  return s;
}

}  // namespace

TEST_CASE("only thermal, power-brake and hardware slowdowns hold a GPU back", "[health]") {
  // NVML's nvmlClocksEventReason* bits.
  struct Reason {
    const char* name;
    std::int64_t bit;
    bool held_back;
  };
  const Reason reasons[] = {{"GpuIdle", 0x1, false},
                            {"ApplicationsClocksSetting", 0x2, false},
                            {"SwPowerCap", 0x4, false},
                            {"HwSlowdown", 0x8, true},
                            {"SyncBoost", 0x10, false},
                            {"SwThermalSlowdown", 0x20, true},
                            {"HwThermalSlowdown", 0x40, true},
                            {"HwPowerBrakeSlowdown", 0x80, true},
                            {"DisplayClockSetting", 0x100, false}};
  std::int64_t healthy = 0;
  for (const Reason& r : reasons) {
    INFO(r.name);
    HealthEvents events;
    CHECK(events.add(with_reasons(r.bit)) == (r.held_back ? kThrottled : 0));
    if (!r.held_back) healthy |= r.bit;
  }
  // An idle card, or one at its power limit under full load, is healthy,
  // whatever else it reports with it; a slowdown among them is not.
  HealthEvents events;
  CHECK(events.add(with_reasons(healthy)) == 0);
  CHECK(events.add(with_reasons(0x1)) == 0);
  CHECK(events.add(with_reasons(healthy | 0x40)) == kThrottled);
  CHECK(events.add(with_reasons(0)) == 0);
}

TEST_CASE("ECC errors are new when they exceed the run's first reading", "[health]") {
  SECTION("counts from before the run are no news") {
    HealthEvents events;
    CHECK(events.add(with_ecc(7, 2)) == 0);
    CHECK(events.add(with_ecc(7, 2)) == 0);
    CHECK(events.add(with_ecc(7, 2)) == 0);
  }
  SECTION("each rise is reported once") {
    HealthEvents events;
    CHECK(events.add(with_ecc(7, 2)) == 0);
    CHECK(events.add(with_ecc(8, 2)) == kNewEcc);
    CHECK(events.add(with_ecc(8, 2)) == 0);
    CHECK(events.add(with_ecc(8, 3)) == kNewEcc);
  }
  SECTION("a failed read is neither a rise nor a new start") {
    HealthEvents events;
    CHECK(events.add(with_ecc(-1, -1)) == 0);   // ECC off, or the read failed
    CHECK(events.add(with_ecc(5, 0)) == 0);     // the first reading
    CHECK(events.add(with_ecc(-1, -1)) == 0);
    CHECK(events.add(with_ecc(6, 0)) == kNewEcc);
    CHECK(events.add(with_ecc(-1, 0)) == 0);
  }
}

TEST_CASE("each health event is a warning of its own", "[health]") {
  CHECK(DeviceHealth::describe(0).empty());
  const auto both = DeviceHealth::describe(kThrottled | kNewEcc);
  REQUIRE(both.size() == 2);
  CHECK(both[0] == DeviceHealth::describe(kThrottled).at(0));
  CHECK(both[1] == DeviceHealth::describe(kNewEcc).at(0));
  CHECK(both[0].find("clocks are held back") != std::string::npos);
  CHECK(both[1].find("ECC errors") != std::string::npos);
}
