// The shape counts (engine/backend/shape_counts.hpp): what the CUDA backend
// launches, waits for and copies, counted by the same calls on every
// backend, per timer phase.
#include <catch2/catch.hpp>

#include <thread>

#include "engine/backend/buffer.hpp"
#include "engine/backend/parallel.hpp"
#include "engine/backend/shape_counts.hpp"
#include "tests/unit/test_functors.hpp"
#include "tests/support/test_support.hpp"

using namespace strata;

namespace {

const shape::PhaseCounts* find(const std::vector<shape::PhaseCounts>& all, const std::string& phase) {
  for (const auto& p : all)
    if (p.phase == phase) return &p;
  return nullptr;
}

}  // namespace

TEST_CASE("shape counts go to the innermost phase, with launch sizes, median and work", "[shape]") {
  shape::reset();
  shape::enter("compute");
  shape::launch(100, {800, 0});
  shape::launch(100, {800, 10});
  shape::enter("inner");
  shape::launch(7);
  shape::wait();
  shape::leave();
  shape::launch(1 << 20);
  shape::to_host(24);
  shape::to_device(16);
  shape::leave();
  shape::launch(3);   // outside any phase
  const auto all = shape::snapshot();
  REQUIRE(all.size() == 3);
  CHECK(all[0].phase == "compute");
  CHECK(all[1].phase == "inner");
  CHECK(all[2].phase == "untimed");
  const auto& c = all[0];
  CHECK(c.launches == 3);
  CHECK(c.waits == 0);
  CHECK(c.bytes_to_host == 24);
  CHECK(c.bytes_to_device == 16);
  CHECK(c.threads_min() == 100);
  CHECK(c.threads_median() == 100);   // of 100, 100, 2^20
  CHECK(c.sizes.size() == 2);
  CHECK(c.sizes[0].launches == 2);
  CHECK(c.work().bytes == 1600);
  CHECK(c.work().flops == 10);
  CHECK(all[1].launches == 1);
  CHECK(all[1].waits == 1);
  shape::reset();
  CHECK(shape::snapshot().empty());
}

TEST_CASE("another thread's counts outside a phase are the background's", "[shape]") {
  shape::reset();
  shape::enter("compute");
  std::thread writer([] {
    shape::mark_background_thread();
    shape::wait();
  });
  writer.join();
  shape::leave();
  const auto all = shape::snapshot();
  REQUIRE(all.size() == 1);
  CHECK(all[0].phase == "background");
  CHECK(all[0].waits == 1);
}

TEST_CASE("launches, reductions and copies count as the CUDA backend makes them, on every backend", "[shape]") {
  for (const Device& d : test::devices()) {
    INFO(to_string(d.backend));
    shape::reset();
    shape::enter("compute");
    Buffer<double> b(d, 10);              // an allocation
    std::vector<double> host(10, 1.0);
    b.copy_from_host(host.data(), 10);    // 80 bytes and a wait
    b.copy_to_host(host.data(), 10);      // 80 bytes and a wait
    Stream s(d);
    b.copy_to_host(host.data(), 10, s);   // on a stream: no wait until the fence
    s.fence();
    (void)parallel_reduce(d, 5000, test::Harmonic{}, 0.0, Plus{});   // over a tile: two launches, a wait
    (void)parallel_reduce(d, 10, test::Harmonic{}, 0.0, Plus{});     // one launch, a wait
    (void)parallel_reduce(d, 0, test::Harmonic{}, 0.0, Plus{});      // nothing
    shape::leave();
    const auto all = shape::snapshot();
    const shape::PhaseCounts* c = find(all, "compute");
    REQUIRE(c != nullptr);
    CHECK(c->allocations == 1);
    CHECK(c->launches == 3);
    CHECK(c->waits == 5);
    CHECK(c->bytes_to_device == 80);
    CHECK(c->bytes_to_host == 2 * 80 + 2 * 8);
    CHECK(c->threads_min() == 10);
    // Each launch names its functor, as the C++ ABI demangles it, so the
    // cost model can hold it against its own kernel's occupancy; the
    // reduction's second (single-tile) launch names none.
    std::vector<std::string> kernels;
    for (const auto& z : c->sizes) kernels.push_back(z.kernel);
    CHECK(kernels == std::vector<std::string>{"strata::test::Harmonic", "", "strata::test::Harmonic"});
  }
  shape::reset();
}

TEST_CASE("launches of one size by different kernels are counted apart", "[shape]") {
  shape::reset();
  shape::enter("compute");
  shape::launch(64, {8, 0}, "A");
  shape::launch(64, {8, 0}, "B");
  shape::launch(64, {8, 0}, "A");
  shape::leave();
  const auto all = shape::snapshot();
  REQUIRE(all.size() == 1);
  REQUIRE(all[0].sizes.size() == 2);
  CHECK(all[0].sizes[0].kernel == "A");
  CHECK(all[0].sizes[0].launches == 2);
  CHECK(all[0].sizes[1].kernel == "B");
  CHECK(all[0].threads_median() == 64);
  shape::reset();
}
