#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "engine/runtime/timers.hpp"

using strata::Timers;

// A phase's time excludes the phases timed inside it: the step loop's
// "compute" around a grid step that writes diagnostics and output must
// report the step alone, as /performance/compute_seconds does.
TEST_CASE("a phase's time excludes the phases inside it", "[timers]") {
  Timers t;
  const auto nap = std::chrono::milliseconds(50);
  const auto t0 = Timers::Clock::now();
  {
    auto outer = t.scope("compute");
    std::this_thread::sleep_for(nap);
    {
      auto inner = t.scope("diagnostics");
      std::this_thread::sleep_for(nap);
      auto innermost = t.scope("output");
      std::this_thread::sleep_for(nap);
    }
  }
  const double total = std::chrono::duration<double>(Timers::Clock::now() - t0).count();
  const double compute = t.seconds("compute"), diagnostics = t.seconds("diagnostics"), output = t.seconds("output");
  // Each slept at least its nap alone: a loaded machine only adds.
  CHECK(compute >= 0.05);
  CHECK(diagnostics >= 0.05);
  CHECK(output >= 0.05);
  // Together they are the elapsed time, never the 300 ms or more that
  // inclusive times add up to; what is not in any phase is the clock reads
  // around them, less than a nap even when the thread is descheduled.
  CHECK(compute + diagnostics + output <= total);
  CHECK(compute + diagnostics + output >= total - 0.05);
  // Scopes after the nest are top-level again.
  { auto later = t.scope("setup"); }
  CHECK(t.seconds("compute") == compute);
}
