// The memory plan checked before anything is allocated (exit 4), for both
// backends on any machine: a model's MemoryPlan for a CUDA device is the
// same function of its input as on the host, and memory_shortfall() takes
// the node's free memory as a number, so a GPU's sizes are checked here
// without a GPU.
#include <catch2/catch.hpp>

#include <ostream>
#include <streambuf>
#include <string>

#include "engine/config/config.hpp"
#include "engine/runtime/model.hpp"
#include "engine/runtime/timers.hpp"
#include "tests/support/test_support.hpp"

using namespace strata;

namespace {

constexpr std::size_t kGiB = std::size_t{1} << 30;

// Two European options on one asset: every path's memory is the chunk's.
const char* const kPricing = R"(
[run]
model = "pricing"

[pricing]
antithetic = true

[[pricing.asset]]
name = "A"
spot = 100.0
vol = 0.25

[[pricing.instrument]]
name = "call"
option = "call"
strike = 105.0
maturity = 1.0
assets = ["A"]
)";

struct NullBuffer : std::streambuf {
  int overflow(int c) override { return c; }
};

MemoryPlan pricing_plan(const Device& device, const std::string& paths, const std::string& chunk_paths) {
  const Config config = Config::load_text(kPricing, "in.toml",
                                          {{"pricing.paths", paths, "--set pricing.paths=" + paths},
                                           {"pricing.chunk_paths", chunk_paths, "--set pricing.chunk_paths=" + chunk_paths}},
                                          schema_for);
  Timers timers;
  NullBuffer nothing;
  std::ostream out(&nothing);
  const RunContext ctx{test::world(), &config, device, Precision::fp64, timers, nullptr, out};
  return ModelRegistry::instance().find("pricing")->memory(ctx);
}

Device cuda_device(const char* name) {
  Device d;
  d.backend = Backend::cuda;
  d.ordinal = 0;
  d.name = name;
  return d;
}

Device host_device() {
  Device d;
  d.name = "host";
  return d;
}

MemoryAvailable node(std::size_t host, int ranks, std::size_t device_free = 0, int devices = 1) {
  MemoryAvailable a;
  a.host_bytes = host;
  a.ranks_on_node = ranks;
  a.device_free_bytes = device_free;
  a.devices_on_node = devices;
  return a;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("pricing's chunk lives where the kernels run", "[memory]") {
  if (test::world().size() != 1) return;   // the plan is per rank; these sizes are for one
  // 10^12 antithetic paths in one chunk: 3.05e7 blocks of 257 x 2 doubles
  // of lane and block moments, 116.9 GiB.
  const MemoryPlan gpu = pricing_plan(cuda_device("H200"), "1e12", "1e12");
  const MemoryPlan host = pricing_plan(host_device(), "1e12", "1e12");
  CHECK(gpu.device_bytes > 116 * kGiB);
  CHECK(gpu.device_bytes < 117 * kGiB);
  CHECK(gpu.host_bytes < kGiB);                                     // the block moments copied back
  CHECK(host.device_bytes == 0);
  CHECK(host.host_bytes == gpu.host_bytes + gpu.device_bytes);
  CHECK(contains(gpu.hint, "pricing.chunk_paths"));

  // Why such a run went ahead on an H200 (139 GiB free) and must stop on
  // an H100 (78 GiB), or where two ranks share the H200.
  CHECK(memory_shortfall(gpu, cuda_device("H200"), node(128 * kGiB, 1, 139 * kGiB)).empty());
  const std::string h100 = memory_shortfall(gpu, cuda_device("H100"), node(128 * kGiB, 1, 78 * kGiB));
  CHECK(contains(h100, "of device memory per rank on H100"));
  CHECK(contains(h100, "78.00 GiB is free per rank"));
  CHECK(contains(h100, "pricing.chunk_paths"));
  CHECK(contains(memory_shortfall(gpu, cuda_device("H200"), node(128 * kGiB, 2, 139 * kGiB)), "2 rank(s) share"));
  CHECK(memory_shortfall(gpu, cuda_device("H200"), node(128 * kGiB, 2, 139 * kGiB, 2)).empty());
  // On the host backend the same chunk is host memory.
  CHECK(memory_shortfall(host, host_device(), node(128 * kGiB, 1)).empty());
  CHECK(contains(memory_shortfall(host, host_device(), node(64 * kGiB, 1)), "of host memory per rank"));
}

TEST_CASE("a chunk of 10^15 paths fits no backend", "[memory]") {
  if (test::world().size() != 1) return;
  // What tests/cli/test_checkpoint.py runs to see exit 4 on every machine:
  // 114 TiB of chunk per rank, beyond any node's memory or GPU.
  const MemoryPlan gpu = pricing_plan(cuda_device("GPU"), "1e15", "1e15");
  const MemoryPlan host = pricing_plan(host_device(), "1e15", "1e15");
  CHECK(gpu.device_bytes > 100 * 1024 * kGiB);
  CHECK(contains(memory_shortfall(gpu, cuda_device("GPU"), node(4096 * kGiB, 1, 1024 * kGiB)), "device memory"));
  CHECK(contains(memory_shortfall(host, host_device(), node(4096 * kGiB, 1)), "host memory"));
}

TEST_CASE("an unknown host size is not checked, a device's always is", "[memory]") {
  MemoryPlan plan;
  plan.host_bytes = 10 * kGiB;
  plan.device_bytes = 10 * kGiB;
  plan.hint = "lower it";
  CHECK(memory_shortfall(plan, host_device(), node(0, 1)).empty());
  CHECK(contains(memory_shortfall(plan, host_device(), node(8 * kGiB, 1)), "Hint: lower it"));
  // 4 ranks on 2 devices: two share each.
  CHECK(memory_shortfall(plan, cuda_device("GPU"), node(0, 4, 20 * kGiB, 2)).empty());
  CHECK(contains(memory_shortfall(plan, cuda_device("GPU"), node(0, 4, 19 * kGiB, 2)), "9.50 GiB is free per rank"));
}
